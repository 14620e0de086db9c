//! Benchmark `parse`: not written yet.

fn main() {}
