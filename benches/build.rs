//! Benchmark `build`: not written yet.

fn main() {}
