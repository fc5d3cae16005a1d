#!/usr/bin/env bash
# Issue 28's import benchmark: 1 GB of generated Claude Code session files
# imported into SQLite and Postgres against `cat FILES | wc -l`, peak RSS,
# the unchanged re-import of 10,000 small files, and the latency of a line
# written to a watched file to an SSE client of `serve --watch`.
#
#   bench/import.sh                  the README's table (1 GB)
#   MB=100 SMALL=2000 bench/import.sh   a smoke run
#
# Also: PG_URL (an empty database; else a throwaway server), SKIP_PG=1,
# AGENTSHAPE (a built binary). Details: bench/import.py. Postgres needs
# Debian's postgresql package (./scripts/setup.sh --only postgres).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"
else
  (cd "$root" && cargo build --release --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
args=(--mb "${MB:-1024}" --small "${SMALL:-10000}")
[ -z "${PG_URL:-}" ] || args+=(--pg "$PG_URL")
[ -z "${SKIP_PG:-}" ] || args+=(--skip-pg)
exec python3 "$here/import.py" "$bin" "${args[@]}"
