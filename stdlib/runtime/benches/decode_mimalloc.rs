//! Benchmark `decode_mimalloc`: `benches/decode.rs` unchanged, with every contender on
//! mimalloc, the allocator of the `aelc` binaries (`aelc validate`, `aelc test`, `aelc run`
//! decode under it). Our decoder builds more small allocations than serde derive does (a box
//! per `Some`), so the allocator moves the ratio; both figures are reported.
//!
//! Run: `cargo bench -p aelc-runtime --bench decode_mimalloc`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "decode.rs"]
mod decode;

fn main() {
    decode::main();
}
