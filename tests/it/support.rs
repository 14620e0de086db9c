//! Helpers several test files use. The Python script of the provider SDK check stays in
//! `tests/support/provider_sdks.py`, beside the data the tests read.

pub mod examples;
pub mod file_schema;
pub mod scratch;
