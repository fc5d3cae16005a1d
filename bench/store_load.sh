#!/usr/bin/env bash
# Issue 11's load test: 1,000 sessions of 50 events, replayed by 8
# concurrent `agentshape run` processes into one Postgres (a throwaway
# server unless PG_URL names an empty database), then the same into one
# SQLite file; 0 lost and 0 duplicated events checked by SQL; sessions/s
# and events/s side by side. Transcripts are generated into a temporary
# folder and removed.
#
#   bench/store_load.sh                    the README's table
#   SESSIONS=80 bench/store_load.sh        a smoke run
#
# Also: EVENTS (50), PROCS (8), PG_URL, AGENTSHAPE (a built binary).
# Details: bench/store_load.py. Needs Debian's postgresql package
# (./scripts/setup.sh --only postgres).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"
else
  (cd "$root" && cargo build --release --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
args=(--sessions "${SESSIONS:-1000}" --events "${EVENTS:-50}" --procs "${PROCS:-8}")
[ -z "${PG_URL:-}" ] || args+=(--pg "$PG_URL")
exec python3 "$here/store_load.py" "$bin" "${args[@]}"
