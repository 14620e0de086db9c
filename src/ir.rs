//! The typed IR: a checked program as plain data, what every backend consumes.
//!
//! The shapes live in the runtime (`aelc_runtime::program`), so that the executor loads a
//! program from `ir.json` without the compiler; sema builds them and codegen reads them from
//! here. [`size`] is the compiler's own knowledge about them: the largest JSON encoding of a
//! type, from which `max_answer` is derived.

pub use aelc_runtime::program::*;

pub mod size;
