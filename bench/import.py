#!/usr/bin/env python3
"""Issue 28's import benchmark: `agentshape import` of Claude Code session
files against `cat FILES | wc -l` on the same files, its peak memory, the
same into Postgres, the re-import of an unchanged tree of 10,000 small
files, and the latency of a line written to a watched file to an SSE client
of `serve --watch`.

Called by bench/import.sh (which builds the binary); standard library only.

    import.py BIN [--mb 1024] [--small 10000] [--lines 20] [--pg URL] [--skip-pg]

1. `--mb` MB of Claude Code 2.1-shaped session files are generated
   (deterministically: a seeded PRNG) into a temporary folder laid out as
   `projects/<encoded-cwd>/<uuid>.jsonl`: sessions of 0.1 to 40 MB, each
   turn a prompt, an assistant message written as one line per content
   block (thinking, text, tool_use: the repeated `message.id` with growing
   usage), a tool result of 0.3 to 12 KB (now and then 150 KB) with its
   `toolUseResult`, bookkeeping lines.
2. `cat` time: `find … -print0 | xargs -0 cat | wc -l`, the best of 3
   (the files are in the page cache for every run, the import's too).
3. `agentshape import --quiet --store DB DIR` into a new SQLite file, under
   `/usr/bin/time` for the peak resident set; then again (unchanged).
4. The same into Postgres: --pg URL (an empty database), else the
   throwaway server of bench/store_load.py.
5. 10,000 (`--small`) files of one turn each, imported, then imported again:
   the unchanged re-import's wall time.
6. `serve --watch` on a session folder, an SSE client on /api/feed, then
   `--lines` lines appended to a session file 250 ms apart, each carrying
   its write time: line written → SSE event received, p50 and max.
Prints a markdown table. Temporary files are removed.
"""

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_load import Throwaway  # noqa: E402


def words(rng, n):
    vocab = ("the deploy script fails when target missing config value returns error "
             "function test passes build cargo module import file line path user agent "
             "session store query index schema column value string number object array").split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Session:
    """Writes one Claude Code 2.1 session file of about `size` bytes."""

    def __init__(self, rng, path, sid, cwd, size, pool):
        self.rng, self.path, self.sid, self.cwd, self.size, self.pool = rng, path, sid, cwd, size, pool
        self.n = 0
        self.t = 1767225600  # 2026-01-01

    def common(self, kind, parent):
        self.n += 1
        self.t += self.rng.randint(1, 20)
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.t)) + ".%03dZ" % self.rng.randint(0, 999)
        uuid = "%08x-0000-4000-8000-%012x" % (self.n, self.rng.getrandbits(48))
        return uuid, (f'"parentUuid":"{parent}","isSidechain":false,"userType":"external",'
                      f'"cwd":"{self.cwd}","sessionId":"{self.sid}","version":"2.1.231",'
                      f'"gitBranch":"main","type":"{kind}","uuid":"{uuid}","timestamp":"{ts}"')

    def text(self, lo, hi):
        n = self.rng.randint(lo, hi)
        start = self.rng.randint(0, len(self.pool) - n - 1)
        return self.pool[start:start + n]

    def write(self):
        out = []
        written = 0
        parent = "none"
        turn = 0
        while written < self.size:
            turn += 1
            lines = []
            uuid, c = self.common("user", parent)
            lines.append('{%s,"message":{"role":"user","content":"%s"}}' % (c, esc(self.text(40, 400))))
            parent = uuid
            for step in range(self.rng.randint(1, 6)):
                mid = "msg_%06d%04d" % (turn, step)
                req = "req_%06d%04d" % (turn, step)
                blocks = []
                if self.rng.random() < 0.4:
                    blocks.append('{"type":"thinking","thinking":"%s","signature":"sig"}' % esc(self.text(100, 1200)))
                blocks.append('{"type":"text","text":"%s"}' % esc(self.text(50, 1500)))
                tool = self.rng.random() < 0.8
                if tool:
                    blocks.append('{"type":"tool_use","id":"toolu_%s","name":"%s","input":{"command":"%s"}}'
                                  % (mid, self.rng.choice(["Bash", "Read", "Edit", "Grep"]), esc(self.text(10, 120))))
                out_tokens = 0
                for b in blocks:
                    out_tokens += self.rng.randint(5, 200)
                    uuid, c = self.common("assistant", parent)
                    stop = '"tool_use"' if tool and b is blocks[-1] else "null"
                    lines.append(
                        '{%s,"message":{"id":"%s","type":"message","role":"assistant","model":"claude-sonnet-4-5",'
                        '"content":[%s],"stop_reason":%s,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,'
                        '"cache_read_input_tokens":%d,"output_tokens":%d}},"requestId":"%s"}'
                        % (c, mid, b, stop, self.rng.randint(1, 50), self.rng.randint(0, 3000),
                           self.rng.randint(1000, 90000), out_tokens, req))
                    parent = uuid
                if tool:
                    big = self.rng.random() < 0.01
                    result = esc(self.text(150_000, 160_000) if big else self.text(300, 12_000))
                    err = self.rng.random() < 0.05
                    uuid, c = self.common("user", parent)
                    lines.append(
                        '{%s,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%s",'
                        '"content":"%s","is_error":%s}]},"toolUseResult":{"stdout":"%s","stderr":"","interrupted":false}}'
                        % (c, mid, result, "true" if err else "false", result[:200]))
                    parent = uuid
            if turn % 5 == 0:
                lines.append('{"type":"file-history-snapshot","messageId":"%s","snapshot":{"trackedFileBackups":{}}}' % parent)
            chunk = "\n".join(lines) + "\n"
            out.append(chunk)
            written += len(chunk)
        with open(self.path, "w") as f:
            f.writelines(out)
        return written


def generate(folder, total, rng, lo=100_000, hi=40_000_000):
    pool = words(random.Random(7), 400_000)
    files, written, n = [], 0, 0
    while written < total:
        n += 1
        size = min(int(lo * (hi / lo) ** rng.random()), total - written + 1000)
        project = os.path.join(folder, "projects", "-bench-p%02d" % (n % 12))
        os.makedirs(project, exist_ok=True)
        sid = "%08x-1111-4222-8333-%012x" % (n, rng.getrandbits(48))
        path = os.path.join(project, sid + ".jsonl")
        written += Session(rng, path, sid, "/bench/p%02d" % (n % 12), size, pool).write()
        files.append(path)
    return files, written


def small_tree(folder, count, rng):
    pool = words(random.Random(7), 400_000)
    for n in range(count):
        project = os.path.join(folder, "projects", "-small-%03d" % (n % 100))
        os.makedirs(project, exist_ok=True)
        sid = "%08x-2222-4333-8444-%012x" % (n, rng.getrandbits(48))
        Session(rng, os.path.join(project, sid + ".jsonl"), sid, "/small", 1, pool).write()


def timed(cmd, **kw):
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    took = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stderr[-2000:]}")
    return took, out


def import_run(binary, store, folder):
    """Wall seconds and peak RSS (MB) of one `import`."""
    took, out = timed(["/usr/bin/time", "-f", "RSS %M", binary, "import", "--quiet",
                       "--store", store, folder], stdin=subprocess.DEVNULL)
    rss = [l for l in out.stderr.splitlines() if l.startswith("RSS ")][-1]
    return took, int(rss.split()[1]) / 1024


def cat_time(folder):
    best = None
    for _ in range(3):
        took, out = timed(["sh", "-c", f"find '{folder}' -type f -name '*.jsonl' -print0 | xargs -0 cat | wc -l"])
        best = took if best is None else min(best, took)
    return best, int(out.stdout.strip())


def watch_latency(binary, folder, store, lines):
    target = None
    for root, _, names in os.walk(folder):
        for n in names:
            if n.endswith(".jsonl"):
                target = os.path.join(root, n)
                break
        if target:
            break
    server = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0", "--store", store,
                               "--watch", folder], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        base = None
        while base is None:
            line = server.stderr.readline()
            if not line:
                sys.exit("serve ended before listening")
            if "listening on http://" in line:
                base = line.split("http://")[1].strip()
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        host, port = base.split(":")
        # The first import must be done: wait for the file's session.
        time.sleep(2.5)
        sock = socket.create_connection((host, int(port)))
        sock.sendall(f"GET /api/feed HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\n\r\n".encode())
        sock.settimeout(30)
        seen, got, buf = {}, {}, b""
        done = threading.Event()

        def reader():
            nonlocal buf
            while not done.is_set():
                try:
                    data = sock.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                now = time.time_ns()
                buf += data
                text = buf.decode(errors="replace")
                for k in list(seen):
                    if k not in got and f"bench-watch-{k}-" in text:
                        got[k] = now
                buf = buf[-4096:]

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        time.sleep(0.5)
        sid = os.path.basename(target)[:-len(".jsonl")]
        for k in range(lines):
            sent = time.time_ns()
            seen[k] = sent
            with open(target, "a") as f:
                f.write('{"parentUuid":"x","isSidechain":false,"userType":"external","cwd":"/bench",'
                        f'"sessionId":"{sid}","version":"2.1.231","gitBranch":"main","type":"user",'
                        f'"message":{{"role":"user","content":"bench-watch-{k}-{sent}"}},'
                        f'"uuid":"w{k}","timestamp":"2026-02-01T00:00:00.000Z"}}\n')
            time.sleep(0.25)
        deadline = time.time() + 10
        while len(got) < lines and time.time() < deadline:
            time.sleep(0.05)
        done.set()
        sock.close()
        lat = sorted((got[k] - seen[k]) / 1e6 for k in got)
        return lat, lines - len(lat)
    finally:
        server.terminate()
        server.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--lines", type=int, default=20)
    ap.add_argument("--pg")
    ap.add_argument("--skip-pg", action="store_true")
    a = ap.parse_args()
    rng = random.Random(28)
    tmp = tempfile.mkdtemp(prefix="agentshape-import-bench-")
    rows = []
    try:
        big = os.path.join(tmp, "big")
        t0 = time.monotonic()
        files, written = generate(big, a.mb * 1_000_000, rng)
        print(f"generated {written / 1e6:.0f} MB in {len(files)} files ({time.monotonic() - t0:.0f} s)",
              file=sys.stderr)
        cat, lines = cat_time(big)
        rows.append(("`cat FILES | wc -l`", f"{cat:.2f} s", f"{written / 1e6 / cat:.0f} MB/s", "1.0×", "", f"{lines:,} lines"))
        db = os.path.join(tmp, "big.db")
        took, rss = import_run(a.binary, f"sqlite:{db}", big)
        rows.append(("import → SQLite", f"{took:.2f} s", f"{written / 1e6 / took:.0f} MB/s",
                     f"{took / cat:.1f}×", f"{rss:.0f} MB", f"{len(files)} files"))
        again, rss2 = import_run(a.binary, f"sqlite:{db}", big)
        rows.append(("import again, unchanged (SQLite)", f"{again:.2f} s", "", "", f"{rss2:.0f} MB", ""))
        if not a.skip_pg:
            pg = None if a.pg else Throwaway()
            try:
                url = a.pg or pg.url
                took, rss = import_run(a.binary, url, big)
                rows.append(("import → Postgres", f"{took:.2f} s", f"{written / 1e6 / took:.0f} MB/s",
                             f"{took / cat:.1f}×", f"{rss:.0f} MB", ""))
            finally:
                if pg:
                    pg.close()
        shutil.rmtree(big, ignore_errors=True)
        small = os.path.join(tmp, "small")
        small_tree(small, a.small, rng)
        sdb = f"sqlite:{os.path.join(tmp, 'small.db')}"
        first, _ = import_run(a.binary, sdb, small)
        rows.append((f"import of {a.small:,} small files", f"{first:.2f} s", "", "", "", ""))
        again, rss = import_run(a.binary, sdb, small)
        rows.append((f"re-import, {a.small:,} files unchanged", f"{again:.2f} s", "", "", f"{rss:.0f} MB", ""))
        watched = os.path.join(tmp, "watched")
        generate(watched, 3_000_000, rng, lo=1_000_000, hi=2_000_000)
        lat, lost = watch_latency(a.binary, watched, f"sqlite:{os.path.join(tmp, 'w.db')}", a.lines)
        if lat:
            p50 = lat[len(lat) // 2]
            rows.append((f"watch: line written → SSE ({len(lat)} lines, {lost} missed)",
                         f"p50 {p50:.0f} ms", f"max {lat[-1]:.0f} ms", "", "", ""))
        else:
            rows.append(("watch: line written → SSE", "no line arrived", "", "", "", ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| what | time | rate | × cat | peak RSS | |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
