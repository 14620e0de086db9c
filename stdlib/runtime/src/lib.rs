//! `aelc-runtime`: what compiled AEL needs at run time, and nothing of the compiler.
//!
//! - [`ty`]: bounded type descriptions, the contract between the compiler (which lowers AEL types
//!   into them), the schema emitter, the decoder and generated Rust code.
//!
//! This crate never depends on `aelc`; `aelc` and generated glue depend on it.

pub mod ty;
