//! The root package's integration tests, as one test crate: each file of this folder is a
//! module (`cli`, `lsp`, `platform`, …) that used to be a test binary of its own. Every test
//! binary links the whole `aelc` library and its dependencies (tokio, axum, sqlx,
//! jsonschema…), so 23 binaries were 23 links of the same code after any change to the
//! library; one crate links once. Cargo runs test binaries one after another, so one binary
//! also lets the slow tests of different files run beside each other. One file's tests:
//! `cargo test --test it cli::` (book: *Architecture*, "The tests").
//!
//! The tests share one process: none may count on being alone in it (the environment, the
//! current folder, a temporary folder named by the process id alone, resident memory:
//! `syntax_memory` measures in a child process of its own).

// Shared by several files.
mod codegen_fixtures;
mod glue_gen;
mod support;

mod book;
mod cli;
mod codegen_model;
mod codegen_props;
mod codegen_schema;
mod examples;
mod examples_emitted;
mod fmt;
mod glue_body;
mod glue_fmt;
mod glue_random;
mod glue_schemas;
mod grammar;
mod lsp;
mod lsp_editors;
mod many_errors;
mod platform;
mod run;
mod stdlib;
mod syntax_memory;
mod syntax_props;
mod tidy;
mod tutorial;
mod ui;
