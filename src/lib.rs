//! `aelc`: the compiler, language server and runner for AEL.
//!
//! The layers, each depending only on those above it in this list:
//!
//! | layer | job |
//! |---|---|
//! | [`span`], [`source`], [`diagnostics`] | positions, files, findings and their rendering |
//! | `parallel` | independent work shared between the cores, results in order |
//! | [`syntax`] | lexer, parser, syntax tree, formatter: knows nothing of types |
//! | [`sema`] | names, modules, types, bounds: turns syntax trees into the typed [`ir`] |
//! | [`ir`] | the typed IR, plain data that the backends consume |
//! | [`codegen`] | JSON Schemas, manifests, model-facing schemas, MCP tools, Rust glue; never re-parses |
//! | [`driver`] | reads a project through a [`driver::World`] and runs the phases |
//! | [`cli`] | the `aelc` command line: a thin shell over the driver |
//! | [`build`] | the `build.rs` API: Rust glue into `OUT_DIR`, like `prost-build` |
//! | [`lsp`] | the language server: the driver over the editor's open buffers |
//!
//! The runtime (`aelc-runtime`, at `stdlib/runtime/`) is a crate of its own that this one uses
//! and that never depends on it. A tidy test (`tests/it/tidy.rs`) fails on an arrow pointing up.
//!
//! Invariants: parsing and checking never fail (they return diagnostics); only IO returns
//! `Err`; nothing panics on any input.

pub mod allocator;
pub mod build;
pub mod cli;
pub mod codegen;
pub mod diagnostics;
pub mod driver;
pub mod ir;
pub mod lsp;
mod parallel;
pub mod project;
pub mod sema;
pub mod source;
pub mod span;
pub mod stdlib;
pub mod syntax;
