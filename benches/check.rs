//! Benchmark `check`: not written yet.

fn main() {}
