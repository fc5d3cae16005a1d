#!/usr/bin/env bash
# Builds the npm package `agentshape` (packages/agentshape): crates/wasm for
# wasm32-unknown-unknown in the `wasm` profile (Cargo.toml), wasm-bindgen's
# `--target web` glue into packages/agentshape/dist/ (git-ignored), then
# `npm pack` into target/npm/. Prints the `.wasm`'s size, raw and gzipped,
# and fails when the gzipped size is over the 1.5 MB budget (issue 43).
#
#   ./scripts/build-wasm.sh            build, bind, pack
#   ./scripts/build-wasm.sh --no-pack  build and bind only
#   ./scripts/build-wasm.sh --keep-names  build and bind, keeping the
#       function names (for a V8 profile, `node --cpu-prof`; not for release)
#
# The `wasm` profile keeps the name section (`strip = "none"`); wasm-bindgen
# drops it and the producers section unless --keep-names. binaryen's
# wasm-opt is not run: on this module it made the gzipped `.wasm` larger
# (-Oz 1,555,643 and -O3 1,567,609 bytes against 1,508,419 without, on an
# all-"s" build), no measurably faster, and took 6 minutes (README, wasm).
#
# Needs what `./scripts/setup.sh --only wasm` installs: the rustup target,
# the wasm-bindgen CLI of the exact version of the `wasm-bindgen` crate in
# Cargo.lock (the CLI refuses a `.wasm` made by another version), Node.js.
set -euo pipefail
cd "$(dirname "$0")/.."

pack=1
release=1
strip=(--remove-name-section --remove-producers-section)
# Every argument is read: a second one was once ignored without a word
# (`--no-pack --keep-names` built a module without names).
for arg in "$@"; do
  case "$arg" in
    --no-pack) pack=0 ;;
    --keep-names) pack=0; release=0; strip=() ;;
    *) echo "build-wasm.sh: unknown argument \`$arg\`" >&2; exit 64 ;;
  esac
done

# The version of the `wasm-bindgen` crate Cargo.lock pins (its `version = ` line).
pinned="$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  echo "build-wasm: the wasm32-unknown-unknown target is missing; run ./scripts/setup.sh --only wasm" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $pinned" ]; then
  echo "build-wasm: wasm-bindgen $pinned is missing (have: $(wasm-bindgen --version 2>/dev/null || echo none)); run ./scripts/setup.sh --only wasm" >&2
  exit 1
fi

start=$SECONDS
cargo build -p agentshape-wasm --lib --target wasm32-unknown-unknown --profile wasm --locked
target_dir="$(cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
wasm="$target_dir/wasm32-unknown-unknown/wasm/agentshape_wasm.wasm"
dist=packages/agentshape/dist
rm -rf "$dist"
wasm-bindgen --target web --no-typescript --out-dir "$dist" --out-name agentshape_wasm "${strip[@]}" "$wasm"

bytes="$(stat -c %s "$dist/agentshape_wasm_bg.wasm")"
gz="$(gzip -9 -c "$dist/agentshape_wasm_bg.wasm" | wc -c)"
echo "build-wasm: $dist/agentshape_wasm_bg.wasm: $bytes bytes, $gz gzipped (gzip -9); built in $((SECONDS - start)) s"
budget=$((1500 * 1000))
# A --keep-names build is for profiling: the names alone are ~300 KB gzipped.
if [ "$release" -eq 1 ] && [ "$gz" -gt "$budget" ]; then
  echo "build-wasm: the gzipped .wasm is over the budget of $budget bytes (issue 43)" >&2
  exit 1
fi

if [ "$pack" -eq 1 ]; then
  mkdir -p "$target_dir/npm"
  tarball="$(cd packages/agentshape && npm pack --silent --pack-destination "$target_dir/npm")"
  echo "build-wasm: $target_dir/npm/$tarball"
fi
