#!/usr/bin/env bash
# The main job on the embedded default: every bundled example transcript goes
# through decode -> extract -> validate with the claude-ops profile, and a
# readable summary is printed. (The store and `run --replay` come with the
# runtime; until then this is the whole pipeline that exists.)
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet -p agentshape || exit 1
bin=target/release/agentshape

echo "== run summaries (agentshape parse)"
"$bin" parse examples/*.ndjson examples/*.jsonl examples/*.json
echo
echo "== extracted and validated against the claude-ops profile (agentshape extract)"
"$bin" extract --profile claude-ops examples/*.ndjson
code=$?
echo
case $code in
  0) echo "every example produced a valid agent response" ;;
  1|2|3) echo "exit code $code: expected here, some examples are failed runs on purpose (429, max turns); see above" ;;
  *) echo "agentshape failed with exit code $code" >&2; exit "$code" ;;
esac
