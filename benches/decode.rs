//! Benchmark `decode`: not written yet.

fn main() {}
