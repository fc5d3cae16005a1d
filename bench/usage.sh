#!/usr/bin/env bash
# Issue 39's usage benchmark: `agentshape usage` over 1 GB of generated
# Claude Code session files, imported and not yet imported, against
# `parse --json` on the same files (details: bench/usage.py).
#
#   bench/usage.sh                     the README's table (1 GB)
#   MB=100 SKIP_PG=1 bench/usage.sh    a smoke run
#
# Also: PG_URL (an empty database; else a throwaway server), AGENTSHAPE (a
# built binary). Postgres needs Debian's postgresql package
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
args=(--mb "${MB:-1024}")
[ -z "${PG_URL:-}" ] || args+=(--pg "$PG_URL")
[ -z "${SKIP_PG:-}" ] || args+=(--skip-pg)
exec python3 "$here/usage.py" "$bin" "${args[@]}"
