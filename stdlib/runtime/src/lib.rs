//! `aelc-runtime`: what compiled AEL needs at run time, and nothing of the compiler.
//!
//! - [`ty`]: bounded type descriptions, the contract between the compiler (which lowers AEL types
//!   into them), the schema emitter, the decoder and generated Rust code.
//! - [`value`]: typed values and their canonical JSON.
//! - [`expr`]: the executable expression IR (fn bodies, checks); [`eval`] runs it.
//! - [`media`]: the JSON shape of media references.
//!
//! This crate never depends on `aelc`; `aelc` and generated glue depend on it.

pub mod expr;
pub mod media;
pub mod ty;
pub mod value;
