//! The review example's integration tests, as one test crate (one link instead of two):
//! `differential` holds the generated glue to the runtime's interpreter, `review` runs the
//! `extern fn` written in Rust through it.

mod differential;
mod review;
