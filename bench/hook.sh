#!/usr/bin/env bash
# Issue 30's latency benchmark: how long `agentshape hook stop` takes, process
# start included, for a 10 KB final message (valid: allowed; invalid: blocked
# with a reason), with the store write (SQLite) it makes, side by side with
# `agentshape --version` (the process floor) and a hand-written Python hook of
# the kind public projects use (json + jsonschema, bench/hook_peer.py); and
# the same invalid stop exporting its span to a local OTLP/HTTP collector (a
# Python server answering 200 to every POST: the export's own cost, after
# the answer is written, without a network).
#
#   bench/hook.sh            the README's figures
#   RUNS=20 bench/hook.sh    a smoke run
#
# hyperfine 1.15 has no --input, so every command reads its input through
# `sh -c '… < file'` (the same shell cost for each). AGENTSHAPE: a built
# binary (else a release build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"
else
  (cd "$root" && cargo build --release --locked --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
runs="${RUNS:-200}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, sys
out = sys.argv[1]
files = [{"path": f"src/module_{i}.rs", "changes": "refactored the parser " * 4} for i in range(60)]
good = {"action": "complete", "reasoning": "All tests pass. " * 60, "confidence": 92, "files": files}
bad = dict(good, action="finished", confidence="high")
for name, value in (("valid", good), ("invalid", bad)):
    msg = "Done. Summary below.\n```json\n" + json.dumps(value, indent=2) + "\n```\n"
    assert 9_000 < len(msg) < 12_000, len(msg)
    hook = {"session_id": f"bench-{name}", "transcript_path": "/nonexistent.jsonl", "cwd": "/work",
            "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": msg}
    open(f"{out}/{name}.json", "w").write(json.dumps(hook))
PY
schema="$root/schemas/loop-action.json"
export AGENTSHAPE_STATE_DIR="$work/state"
python3 - "$work/otlp.port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
collector=$!
trap 'kill $collector 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/otlp.port" ] && break; sleep 0.1; done
otlp="http://127.0.0.1:$(cat "$work/otlp.port")"
peer=(); python3 -c 'import jsonschema' 2>/dev/null && peer=(-n "python json+jsonschema hook (valid)"
  "sh -c 'python3 $here/hook_peer.py $schema < $work/valid.json'")
hyperfine -N --warmup 10 --runs "$runs" --export-json "$work/hook.json" \
  -n "agentshape --version (process floor)" "$bin --version" \
  -n "hook stop, 10 KB valid (allow, stored)" \
  "sh -c '$bin hook stop --schema $schema --store $work/a.db < $work/valid.json'" \
  -n "hook stop, 10 KB invalid (block, stored)" \
  "sh -c '$bin hook stop --schema $schema --max-blocks 1000000 --store $work/a.db < $work/invalid.json'" \
  -n "hook stop, 10 KB invalid (block, stored, OTLP export)" \
  "sh -c '$bin hook stop --schema $schema --max-blocks 1000000 --store $work/a.db --otlp-endpoint $otlp < $work/invalid.json'" \
  -n "shell floor (sh -c true)" "sh -c true" \
  "${peer[@]}"
python3 - "$work/hook.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for name, x in r.items():
    print(f"{name:45s} mean {x['mean']*1000:6.1f} ms  max {x['max']*1000:6.1f} ms")
shell = r["shell floor (sh -c true)"]["mean"]
for name in ("hook stop, 10 KB valid (allow, stored)", "hook stop, 10 KB invalid (block, stored)",
             "hook stop, 10 KB invalid (block, stored, OTLP export)"):
    own = r[name]["mean"] - shell
    verdict = "under" if own < 0.020 else "OVER"
    print(f"{name}: {own*1000:.1f} ms without the shell: {verdict} the 20 ms bar")
PY
