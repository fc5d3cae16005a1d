#!/usr/bin/env bash
# The release binary's size against issue 42's bound (Note [Binary size] in
# Cargo.toml): builds `agentshape` in release and fails above LIMIT_MB (40).
#
#   bench/size.sh                 build, print the size, check it
#   AGENTSHAPE=/path/to/bin bench/size.sh   check another build
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
limit="${LIMIT_MB:-40}"
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"
else
  (cd "$root" && . scripts/ccache-env.sh && cargo build --release --locked --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
bytes=$(stat -c %s "$bin")
mb=$(python3 -c "print(f'{$bytes / 1e6:.1f}')")
echo "agentshape release binary: $mb MB (limit $limit MB)"
if [ "$bytes" -gt $((limit * 1000000)) ]; then
  echo "too big: $mb MB > $limit MB (see Note [Binary size] in Cargo.toml)" >&2
  exit 1
fi
