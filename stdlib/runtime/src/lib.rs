//! `aelc-runtime`: what compiled AEL needs at run time, and nothing of the compiler.
//!
//! - [`ty`]: bounded type descriptions, the contract between the compiler (which lowers AEL types
//!   into them), the schema emitter, the decoder and generated Rust code.
//! - [`value`]: typed values and their canonical JSON.
//! - [`prescan`] then [`decode`]: JSON bytes to typed values under every rule of spec §4 and the
//!   platform bounds of §8, with [`error`]s carrying pointer, path, code and sentence;
//!   [`validate`] applies the same bounds to a computed value.
//! - [`expr`]: the executable expression IR (fn bodies, checks); [`eval`] runs it.
//! - [`pipeline`]: the seven steps of §6.1 and the failure policies, reaching models through
//!   [`model::Model`] ([`model::ReplayModel`] for replays); [`stage`] plugs checks and
//!   transforms into steps 4–5; [`rejection`] says why an answer was refused; [`money`] is
//!   exact cost arithmetic; [`receipt`]: §10.
//! - [`program`]: the typed IR of a checked program (`ir.json`); [`exec`]: the one executor
//!   that runs any node of it (bodies, delegated calls, raw mode, budgets reserved before they
//!   are spent), with [`meter`] sharing budgets down a run's tree of calls.
//! - [`prompt`]: renders prompt templates and runs input builders into ordered parts.
//! - [`provider`]: the HTTP model providers behind `ael.toml` bindings; [`model_schema`]: the
//!   model-facing output schemas they send, the one rewrite the compiler and the glue share.
//! - [`example`]: the example files of spec §6 that `aelc test` replays.
//! - [`testing`]: the spec's review types as a ready table, for tests and benchmarks.
//! - [`bounded`] and [`glue`]: what generated Rust glue links against (spec §9.4).
//! - [`media`]: the JSON shape of media references; [`files`]: the file store behind them
//!   (content-addressed, tenant and expiry checked on every use); [`format`]: `@format`
//!   validators.
//! - [`ordered`]: JSON whose objects keep their key order (output schemas, provider bodies),
//!   without `serde_json`'s `preserve_order` feature.
//! - [`patterns`]: compiled `@pattern`s and `matches`, once per program for every thread.
//! - [`stream`]: streams at run time, a bounded buffer enforcing every limit of spec §7.1.
//! - [`trace`]: OpenTelemetry spans of runs, gates and model attempts (the API only; a host
//!   installs the SDK).
//!
//! This crate never depends on `aelc`; `aelc` and generated glue depend on it.

pub mod bounded;
pub mod bounds;
pub mod decode;
pub mod error;
pub mod eval;
pub mod example;
pub mod exec;
pub mod expr;
pub mod files;
pub mod format;
pub mod glue;
pub mod json;
pub mod media;
pub mod meter;
pub mod model;
pub mod model_schema;
pub mod money;
pub mod ordered;
pub mod patterns;
pub mod pipeline;
pub mod prescan;
pub mod program;
pub mod prompt;
pub mod provider;
pub mod receipt;
pub mod rejection;
pub mod reserved;
pub mod stage;
pub mod stream;
pub mod testing;
pub mod trace;
pub mod ty;
pub mod validate;
pub mod value;
