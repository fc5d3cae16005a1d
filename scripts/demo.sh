#!/usr/bin/env bash
# The main job on the embedded default: every bundled Claude transcript is
# replayed through `agentshape run` (forensic log -> decode -> extract ->
# validate with the claude-ops profile) into the SQLite store ./agentshape.db,
# then a readable summary of the sessions, events and memories it stored.
# No agent needs to be installed.
set -uo pipefail
cd "$(dirname "$0")/.."
# llama.cpp (the default `local` feature) builds from source: cmake, clang, libclang.
./scripts/setup.sh --only llama || exit 1
. scripts/ccache-env.sh
cargo build --release --locked --quiet -p agentshape || exit 1
bin=target/release/agentshape
db=agentshape.db
logs=logs

for t in examples/*.ndjson; do
  echo "== agentshape run --replay $t --profile claude-ops"
  "$bin" run --replay "$t" --profile claude-ops --store "$db" --log-dir "$logs"
  code=$?
  case $code in
    0) ;;
    1|2|3) echo "   (exit $code: expected, this example is a failed or legacy run on purpose)" ;;
    *) echo "agentshape failed with exit code $code" >&2; exit "$code" ;;
  esac
done

echo
echo "== what ./$db holds (agentshape sessions)"
"$bin" sessions --store "$db"
echo
echo "== memories (agentshape memories list)"
"$bin" memories list --store "$db"
echo
echo "== see it in a browser: $bin serve --store $db --schemas schemas"
echo "   then open http://127.0.0.1:7878 (overview, sessions, schema builder, playground)"
