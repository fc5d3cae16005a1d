#!/usr/bin/env bash
# Every check CI runs: formatting, lints, all tests (unit, integration, CLI,
# conformance against ../shared when present), docs, and the purity of core.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== setup (machine components the tests need: scripts/setup.sh)"
./scripts/setup.sh
# Idempotent: a second run finds everything in place and installs nothing.
if ./scripts/setup.sh | grep -v ' ok ('; then
  echo "scripts/setup.sh installed something on its second run" >&2
  exit 1
fi

echo "== fmt"
cargo fmt --all --check
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== tests"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
echo "== docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
echo "== core stays pure (no tokio, reqwest or database in agentshape-core)"
if cargo tree -p agentshape-core -e normal --locked | grep -qiE 'tokio|reqwest|rusqlite|hyper'; then
  echo "agentshape-core depends on an I/O crate:" >&2
  cargo tree -p agentshape-core -e normal --locked | grep -iE 'tokio|reqwest|rusqlite|hyper' >&2
  exit 1
fi
echo "== core's data flows one way (outcome imports no stage; validate does not import extract)"
if grep -nE 'crate::(extract|validate)' crates/core/src/outcome.rs || grep -rnE 'crate::extract' crates/core/src/validate; then
  echo "agentshape-core: the result types in outcome.rs must not import a stage, nor validate import extract (Note [Result types])" >&2
  exit 1
fi
# One closing line for the whole run, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
