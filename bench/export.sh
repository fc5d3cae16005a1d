#!/usr/bin/env bash
# Issue 41's export benchmark: `agentshape export html|markdown|json` of the
# largest file of ../shared/corpus/native (imported into a throwaway store
# first), whole process, hyperfine medians. The issue's target: under 1 s.
#
#   bench/export.sh                                 the README's figures (release build)
#   AGENTSHAPE=target/debug/agentshape bench/export.sh   another build
#
# Also: RUNS (default 10), CORPUS (default ../shared/corpus/native), FILE
# (another session file instead of the largest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="$(cd "${CORPUS:-$root/../shared/corpus/native}" 2>/dev/null && pwd)" || {
  echo "skipped: ../shared/corpus/native not found next to the repository" >&2; exit 0; }
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$(cd "$(dirname "$AGENTSHAPE")" && pwd)/$(basename "$AGENTSHAPE")"
else
  (cd "$root" && cargo build --release --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
runs="${RUNS:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
largest="${FILE:-$(find "$corpus" -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)}"
mkdir -p "$work/tree/p" "$work/home"
cp "$largest" "$work/tree/p/"
HOME="$work/home" "$bin" import --quiet --store "$work/s.db" "$work/tree" >/dev/null
id="$("$bin" sessions --json --store "$work/s.db" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(max(d["sessions"], key=lambda s: s.get("input_tokens", 0))["id"])')"
echo "file: $(basename "$largest") ($(stat -c %s "$largest") bytes), session $id" >&2
for f in html markdown json; do
  "$bin" export "$f" "$id" --store "$work/s.db" -o "$work/out.$f" 2>/dev/null
  hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/$f.json" \
    "$bin export $f $id --store $work/s.db -o $work/out.$f" >/dev/null 2>&1
  python3 - "$f" "$work/$f.json" "$(stat -c %s "$work/out.$f")" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["results"][0]
print(f"export {sys.argv[1]:9} median {r['median']*1e3:7.1f} ms  (min {r['min']*1e3:.1f}, max {r['max']*1e3:.1f})  "
      f"cpu {(r['user'] + r['system'])*1e3:.1f} ms  output {int(sys.argv[3]) / 1e6:.2f} MB")
PY
done
