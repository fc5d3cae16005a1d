#!/usr/bin/env bash
# Every check CI runs: formatting, lints, all tests (unit, integration, CLI,
# conformance against ../shared when present), docs, and the purity of core.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export INSTA_UPDATE=no  # a changed CLI snapshot (crates/cli/tests/it/snapshots) fails the run; nothing is written

# A fresh clone's build takes about 6 GB (target/) and the tests write
# throwaway databases to the temporary folder: on a fuller disk dozens of
# tests fail at once for no reason of theirs (a CI run did, at 4.8 GB free).
# Say so in one line first.
need_gb="${AGENTSHAPE_TEST_DISK_GB:-10}"
for dir in . "${TMPDIR:-/tmp}"; do
  free_gb=$(( $(df -Pk "$dir" | awk 'NR == 2 { print $4 }') / 1024 / 1024 ))
  if [ "$free_gb" -lt "$need_gb" ]; then
    echo "scripts/test.sh: only $free_gb GB free under $dir; the build and tests need about $need_gb GB (free some, or set AGENTSHAPE_TEST_DISK_GB)" >&2
    exit 1
  fi
done

echo "== setup (machine components the tests need: scripts/setup.sh)"
./scripts/setup.sh
# Idempotent: a second run finds everything in place and installs nothing.
if ./scripts/setup.sh | grep -v ' ok ('; then
  echo "scripts/setup.sh installed something on its second run" >&2
  exit 1
fi

# llama.cpp's C++ through ccache (Note [ccache for llama.cpp] in setup.sh).
. scripts/ccache-env.sh

echo "== fmt"
cargo fmt --all --check
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== tests"
log="$(mktemp)"
pylog="$(mktemp)"
jslog="$(mktemp)"
trap 'rm -f "$log" "$pylog" "$jslog"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
echo "== python (crates/python: pytest over the extension, debug build in the same target dir)"
# Note [The Python venv] in scripts/setup.sh. Never skipped: without the venv
# the step fails and names the command that makes it.
if [ ! -x .venv/bin/python ] || [ ! -x .venv/bin/maturin ]; then
  echo "python: .venv with maturin is missing; run ./scripts/setup.sh --only python" >&2
  exit 1
fi
py_start=$SECONDS
(cd crates/python && VIRTUAL_ENV="$PWD/../../.venv" ../../.venv/bin/maturin develop --locked -q)
py_built=$((SECONDS - py_start))
# pytest's own closing line ("N passed ...") is what CI reads for this step;
# its exit code 5 (no test ran) fails the run like any other failure.
.venv/bin/python -m pytest -q -p no:cacheprovider crates/python/tests 2>&1 | tee "$pylog"
echo "python step: build $py_built s, total $((SECONDS - py_start)) s"
echo "== wasm (packages/agentshape: node --test over the npm package, built once by scripts/build-wasm.sh)"
# Note [The wasm toolchain] in scripts/setup.sh. Never skipped: a missing
# component fails the step and names the command that installs it.
if ! ./scripts/setup.sh --check --only wasm >/dev/null; then
  ./scripts/setup.sh --check --only wasm >&2 || true
  echo "wasm: a component is missing; run ./scripts/setup.sh --only wasm" >&2
  exit 1
fi
js_start=$SECONDS
# Every argument is read: an unknown one after a known one is refused
# (exit 64) before anything is built.
if ./scripts/build-wasm.sh --no-pack --no-such-option 2>/dev/null; [ $? -ne 64 ]; then
  echo "wasm: build-wasm.sh did not refuse an unknown second argument with exit 64" >&2
  exit 1
fi
./scripts/build-wasm.sh
js_built=$((SECONDS - js_start))
# node's closing lines ("# pass N", "# fail N") are what CI reads for this step.
node --test packages/agentshape/test/ 2>&1 | tee "$jslog"
echo "wasm step: build $js_built s, total $((SECONDS - js_start)) s"
echo "== docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
echo "== core stays pure (no tokio, reqwest or database in agentshape-core)"
if cargo tree -p agentshape-core -e normal --locked | grep -qiE 'tokio|reqwest|rusqlite|hyper'; then
  echo "agentshape-core depends on an I/O crate:" >&2
  cargo tree -p agentshape-core -e normal --locked | grep -iE 'tokio|reqwest|rusqlite|hyper' >&2
  exit 1
fi
echo "== json sits under core (pure; of ours it imports nothing, and only core imports it: Note [A crate for the JSON layer])"
if cargo tree -p agentshape-json -e normal --locked | grep -qiE 'tokio|reqwest|rusqlite|hyper|agentshape-core'; then
  echo "agentshape-json depends on an I/O crate or on core:" >&2
  cargo tree -p agentshape-json -e normal --locked | grep -iE 'tokio|reqwest|rusqlite|hyper|agentshape-core' >&2
  exit 1
fi
if cargo tree -i agentshape-json -e normal --locked --prefix none --depth 1 | grep -E '^agentshape' | grep -vE '^agentshape-(json|core) '; then
  echo "a crate of ours other than core imports agentshape-json (above)" >&2
  exit 1
fi
echo "== otel sits at the edge (of ours it imports only core, store and egress; only the CLI imports it)"
if cargo tree -p agentshape-otel -e normal --locked --prefix none | grep -E '^agentshape' | grep -vE '^agentshape-(otel|core|json|store|egress) '; then
  echo "agentshape-otel imports a crate of ours other than core, store and egress (above)" >&2
  exit 1
fi
if cargo tree -i agentshape-otel -e normal --locked --prefix none --depth 1 | grep -E '^agentshape' | grep -vE '^agentshape(-otel)? '; then
  echo "a crate other than the CLI imports agentshape-otel (above)" >&2
  exit 1
fi
echo "== egress is a leaf (the one outbound HTTP policy imports no crate of ours)"
if cargo tree -p agentshape-egress -e normal --locked --prefix none | grep -E '^agentshape' | grep -vE '^agentshape-egress '; then
  echo "agentshape-egress imports a crate of ours (above)" >&2
  exit 1
fi
echo "== core's data flows one way (outcome imports no stage; validate does not import extract)"
if grep -nE 'crate::(extract|validate)' crates/core/src/outcome.rs || grep -rnE 'crate::extract' crates/core/src/validate; then
  echo "agentshape-core: the result types in outcome.rs must not import a stage, nor validate import extract (Note [Result types])" >&2
  exit 1
fi
echo "== core's facts import no stage (Note [Facts below stages]: only the json family)"
if grep -rnE 'crate::' crates/core/src/facts | grep -vE 'crate::(facts|json)\b'; then
  echo "agentshape-core: facts/ may import only json (above)" >&2
  exit 1
fi
echo "== notes (every note cited is defined, and defined once: scripts/notes.py)"
python3 scripts/test_notes.py
python3 scripts/notes.py
echo "== wasm sits at the edge (of ours it imports only core; nothing imports it)"
if cargo tree -p agentshape-wasm -e normal --locked --prefix none | grep -E '^agentshape' | grep -vE '^agentshape-(wasm|core|json) '; then
  echo "agentshape-wasm imports a crate of ours other than core (above)" >&2
  exit 1
fi
if cargo tree -i agentshape-wasm -e normal --locked --prefix none --depth 1 | grep -E '^agentshape' | grep -vE '^agentshape-wasm '; then
  echo "a crate of ours imports agentshape-wasm (above)" >&2
  exit 1
fi
echo "== no circles among a crate's modules (scripts/circles.py)"
python3 scripts/test_circles.py
for crate in json core store runtime python wasm cli web otel egress testkit; do
  python3 scripts/circles.py "crates/$crate/src"
done
# One closing line for the whole run, summed over every test binary,
# pytest's summary line ("245 passed, 2 skipped in 14.1s") and node's
# ("# pass 480", "# fail 0", "# skipped 0").
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     FILENAME == ARGV[2] && / in [0-9.]+s/ && /(passed|failed)/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^skipped/) s += $i } }
     FILENAME == ARGV[3] && /^# (pass|fail|skipped) [0-9]+$/ { if ($2 == "pass") p += $3; if ($2 == "fail") f += $3; if ($2 == "skipped") s += $3 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log" "$pylog" "$jslog"
