//! Benchmarks of the decode stage.

fn main() {}
