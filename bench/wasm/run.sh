#!/usr/bin/env bash
# Generates the shared bench corpus into /tmp (never into the repository)
# when it is not there, builds the package, and runs bench/wasm/bench.mjs.
#
#   ./bench/wasm/run.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/../.."
shared="${SHARED:-../shared}"
data="${BENCH_DATA:-/tmp/agentshape-bench}"
if [ ! -f "$data/CORPUS.json" ]; then
  python3 "$shared/bench/gen_corpus.py" "$data"
fi
./scripts/build-wasm.sh --no-pack
node bench/wasm/bench.mjs "$data" "$@"
