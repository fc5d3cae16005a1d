//! Benchmarks of the extract stage.

fn main() {}
