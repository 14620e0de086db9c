//! Backends of `aelc build` (spec §9): everything is computed from the typed [`crate::ir`]
//! `Program`, never from syntax.
//!
//! - [`json_schema`]: draft 2020-12 input and output schemas of each node;
//! - [`shared_defs`]: `schemas/defs.json`, the named types the node schemas refer to;
//! - [`model_schema`]: the model-facing output schema per provider (`openai`, `gemini`,
//!   `anthropic`);
//! - [`grammar`]: `grammar/<node>.gbnf` and `.lark`, the answer's grammar for constrained
//!   decoding;
//! - [`mcp`]: `mcp/tools.json`, one MCP tool per agent;
//! - [`manifest`], `agents/<agent>/holon.yaml`;
//! - [`rust`]: the Rust glue (`rust/<package>.rs`, spec §9.4);
//! - [`publish`]: the publishing rules, checked before anything is written;
//! - [`emit`]: every output file as bytes, deterministic; [`write`]: writing them atomically, and
//!   `--check`.

pub mod emit;
pub mod error;
pub mod grammar;
pub mod json_schema;
pub mod manifest;
pub mod mcp;
pub mod model_schema;
pub mod publish;
pub mod rust;
pub mod shared_defs;
pub mod write;
