#!/usr/bin/env bash
# Peak memory of `agentshape ask` against hostile provider bodies (issue 13,
# item 10): an endless chunked body, a 50 MB body with Content-Length, the
# same 50 MB streamed without a length, and a valid 15 MiB answer under the
# default 16 MiB cap. A local Python server plays the provider.
#
#   bench/provider_body.sh                      builds and measures the release binary
#   BIN=/path/to/agentshape bench/provider_body.sh
#
# Prints, per case, the exit code, the error category, the wall time and the
# peak resident set size (VmHWM, from GNU time when installed, else polled
# from /proc). A benchmark, not a test: nothing here is asserted.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [ -z "${BIN:-}" ]; then
  (cd "$root" && cargo build --release --locked --quiet -p agentshape)
  BIN="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
tmp="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}' > "$tmp/schema.json"

cat > "$tmp/server.py" <<'PY'
import json, socketserver, sys
BIG = 50 * 1000 * 1000
def answer(text):
    return json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
class H(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode()
        if len(line.split()) < 2:
            return  # the readiness probe
        path, n = line.split()[1], 0
        while True:
            h = self.rfile.readline().decode().strip()
            if not h: break
            k, _, v = h.partition(":")
            if k.lower() == "content-length": n = int(v)
        self.rfile.read(n)
        case = path.split("/")[1]
        w = self.wfile
        try:
            if case in ("endless", "chunked50"):
                w.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                chunk = b"a" * 65536
                sent, limit = 0, (BIG if case == "chunked50" else 1 << 40)
                while sent < limit:
                    w.write(b"%x\r\n%s\r\n" % (len(chunk), chunk)); sent += len(chunk)
                w.write(b"0\r\n\r\n")
            else:
                body = answer("a" * BIG) if case == "big50" else answer('{"ok": true, "pad": "%s"}' % ("a" * (15 << 20)))
                w.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body))
                w.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
with socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H) as s:
    s.serve_forever()
PY
port=$((20000 + RANDOM % 20000))
python3 "$tmp/server.py" "$port" & server=$!
for _ in $(seq 100); do # wait until the server listens
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

peak() { # run "$@", print "<exit> <peak KiB> <seconds> <category>"
  local start end code kb=0
  start=$(date +%s.%N)
  if [ -x /usr/bin/time ] && /usr/bin/time -v true 2>/dev/null; then
    set +e; /usr/bin/time -v -o "$tmp/time" "$@" > "$tmp/out" 2>/dev/null; code=$?; set -e
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
  else
    set +e; "$@" > "$tmp/out" 2>/dev/null & local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      local h; h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$h" ] && [ "$h" -gt "$kb" ] && kb=$h
      sleep 0.02
    done
    wait "$pid"; code=$?; set -e
  fi
  end=$(date +%s.%N)
  local cat; cat=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("error_category")))' "$tmp/out" 2>/dev/null || echo "?")
  printf '%s %s %.2f %s\n' "$code" "$kb" "$(echo "$end - $start" | bc)" "$cat"
}

printf '%-44s %5s %10s %8s  %s\n' case exit "peak MiB" seconds error_category
for c in "endless:endless chunked body" "big50:50 MB body, Content-Length" \
         "chunked50:50 MB body, chunked (no length)" "ok15:valid 15 MiB answer (under the cap)"; do
  path="${c%%:*}"; name="${c#*:}"
  read -r code kb secs cat < <(ANTHROPIC_API_KEY=sk-bench-0000000000000000 peak "$BIN" ask --json --provider anthropic --model m \
    --schema "$tmp/schema.json" --base-url "http://127.0.0.1:$port/$path" --http-retries 0 --retries 0 hi)
  printf '%-44s %5s %10.1f %8s  %s\n' "$name" "$code" "$(echo "$kb / 1024" | bc -l)" "$secs" "$cat"
done
