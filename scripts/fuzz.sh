#!/usr/bin/env bash
# Run the cargo-fuzz targets (decode, extract, hook) for SECONDS each (default 240).
# cargo-fuzz passes nightly-only flags; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain accept them. The same fuzz bodies run in CI through proptest.
# A crash is written to fuzz/artifacts/<target>/: turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-240}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
mkdir -p corpus/decode corpus/extract corpus/hook
cp -n ../examples/*.ndjson ../examples/*.jsonl ../examples/*.json corpus/decode/ 2>/dev/null || true
cp -n ../examples/reply.txt corpus/extract/ 2>/dev/null || true
for target in decode extract hook; do
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$target" -- \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=1024
done
