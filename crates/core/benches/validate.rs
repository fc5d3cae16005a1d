//! Benchmarks of the validate stage.

fn main() {}
