//! The runtime's integration tests, as one test crate: each file of this folder is a module
//! that used to be a test binary of its own, each linking the runtime and its dependencies;
//! one crate links them once, and cargo, which runs test binaries one after another, runs
//! the tests of different files beside each other. One file's tests: `cargo test -p
//! aelc-runtime --test it decode::`.

mod decode;
mod eval;
mod pipeline;
mod props;

// The HTTP providers (the `http` feature, on by default) against a scripted server on
// 127.0.0.1 (`provider_server`, which the root package's `run` tests share).
#[cfg(feature = "http")]
mod provider_anthropic;
#[cfg(feature = "http")]
mod provider_gemini;
#[cfg(feature = "http")]
mod provider_openai;
#[cfg(feature = "http")]
mod provider_pipeline;
#[cfg(feature = "http")]
mod provider_server;
