#!/usr/bin/env python3
"""Issue 11's load test: sessions replayed by concurrent processes into one
store, counted by SQL, on Postgres and on SQLite.

Called by bench/store_load.sh (which builds the binary); standard library only.

    store_load.py BIN [--sessions N] [--events E] [--procs P] [--pg URL]

N transcripts (default 1,000) are generated into a temporary folder, never
kept: examples/healthy-structured.ndjson with its `events` replaced by E
(default 50) events whose messages are unique to the transcript. P
(default 8) workers each replay their share, one `agentshape run --replay`
process at a time, so P processes write at once, into:
  * Postgres: --pg URL (an empty database), else a throwaway server started
    here with initdb + pg_ctl (Debian's postgresql package; as `nobody`
    under root; Unix socket only; fsync off, as the tests run it) and
    removed at the end;
  * SQLite: a new file in the temporary folder (WAL, the default store).
Then SQL checks, per store: sessions stored, events stored, sessions
without exactly E events, (session, message) pairs stored twice, sessions
not `completed`: lost = N*E - events, doubled = pairs stored twice.
Prints a markdown table: sessions/s and events/s over the wall time of
the whole load (process start-up included: that is what a fleet pays).
Exits 1 when anything was lost or doubled.
"""

import argparse
import concurrent.futures
import json
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEVELS = ["info", "warning", "critical"]

CHECK = """SELECT
    (SELECT COUNT(*) FROM sessions),
    (SELECT COUNT(*) FROM events),
    (SELECT COUNT(*) FROM sessions s
      WHERE (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id) <> {events}),
    (SELECT COUNT(*) FROM (SELECT session_id, message FROM events
      GROUP BY session_id, message HAVING COUNT(*) > 1) d),
    (SELECT COUNT(*) FROM sessions WHERE status <> 'completed')"""


def generate(folder, sessions, events):
    """N transcripts, each with E events unique to it."""
    with open(os.path.join(ROOT, "examples", "healthy-structured.ndjson")) as f:
        lines = f.read().splitlines()
    result = json.loads(lines[-1])
    paths = []
    for n in range(sessions):
        result["structured_output"]["events"] = [
            {"level": LEVELS[i % 3], "service": f"svc-{i % 7}",
             "message": f"transcript {n} event {i}"}
            for i in range(events)
        ]
        path = os.path.join(folder, f"t{n}.ndjson")
        with open(path, "w") as f:
            f.write("\n".join(lines[:-1] + [json.dumps(result)]) + "\n")
        paths.append(path)
    return paths


def pg_bin():
    base = os.environ.get("AGENTSHAPE_PG_BIN")
    if base:
        return base
    versions = sorted(
        (int(v), v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()
    ) if os.path.isdir("/usr/lib/postgresql") else []
    if not versions:
        sys.exit("Postgres is not installed: run ./scripts/setup.sh --only postgres")
    return f"/usr/lib/postgresql/{versions[-1][1]}/bin"


class Throwaway:
    """A Postgres server in a temporary folder, as crates/testkit's pg.rs."""

    def __init__(self):
        self.bin = pg_bin()
        self.dir = tempfile.mkdtemp(prefix="agentshape-load-pg-")
        self.data = os.path.join(self.dir, "data")
        self.user = None
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            self.user = (nobody.pw_uid, nobody.pw_gid)
            os.chown(self.dir, *self.user)
        self.run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                 "-E", "UTF8", "--locale=C", "--no-sync")
        opts = (f"-c listen_addresses='' -c unix_socket_directories='{self.dir}' "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                "-c max_connections=300")
        self.run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "server.log"),
                 "-w", "-t", "60", "-o", opts, "start")
        self.run("createdb", "-h", self.dir, "-U", "postgres", "load")
        self.url = f"postgresql://postgres@{urllib.parse.quote(self.dir, safe='')}/load"

    def run(self, program, *args):
        def demote():
            if self.user:
                os.setgid(self.user[1])
                os.setuid(self.user[0])
        subprocess.run([os.path.join(self.bin, program), *args], check=True,
                       cwd=self.dir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       env={**os.environ, "LC_ALL": "C"}, preexec_fn=demote)

    def close(self):
        try:
            self.run("pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def load(binary, store, transcripts, procs, logs):
    """Replay every transcript with `procs` processes at a time; the wall time."""
    def worker(w):
        for n in range(w, len(transcripts), procs):
            out = subprocess.run(
                [binary, "run", "--profile", "claude-ops", "--replay", transcripts[n],
                 "--session-id", f"load-{n}", "--store", store, "--log-dir", logs],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, timeout=600)
            if out.returncode != 0:
                sys.stderr.write(f"session {n}: exit {out.returncode}: "
                                 f"{out.stderr.decode(errors='replace')}\n")
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(procs) as pool:
        list(pool.map(worker, range(procs)))
    return time.monotonic() - start


def psql(url, sql):
    out = subprocess.run([os.path.join(pg_bin(), "psql"), "-At", "-F", " ", "-d", url,
                          "-c", sql], check=True, capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--pg", help="an empty Postgres database (default: a throwaway server)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agentshape-load-")
    server = None
    rows = []
    bad = False
    try:
        transcripts = generate(tmp, a.sessions, a.events)
        if a.pg:
            url = a.pg
        else:
            server = Throwaway()
            url = server.url
        db = os.path.join(tmp, "agentshape.db")
        check = CHECK.format(events=a.events)
        for name, store in [("Postgres", url), ("SQLite", f"sqlite:{db}")]:
            wall = load(a.binary, store, transcripts, a.procs, os.path.join(tmp, f"logs-{name}"))
            if name == "Postgres":
                got = psql(url, check)
            else:
                with sqlite3.connect(db) as c:
                    got = list(c.execute(check).fetchone())
            sessions, events, short, doubled, not_completed = got
            lost = a.sessions * a.events - events
            bad |= bool(lost or doubled or short or not_completed or sessions != a.sessions)
            rows.append((name, sessions, events, lost, doubled, wall,
                         sessions / wall, events / wall))
            sys.stderr.write(f"{name}: {sessions} sessions, {events} events in {wall:.1f} s\n")
    finally:
        if server:
            server.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{a.sessions} sessions x {a.events} events, {a.procs} concurrent `run --replay` processes, "
          f"{os.cpu_count()} cores\n")
    print("| store | sessions stored | events stored | lost | doubled | wall s | sessions/s | events/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, s, e, lost, dup, wall, sps, eps in rows:
        print(f"| {name} | {s} | {e} | {lost} | {dup} | {wall:.1f} | {sps:.1f} | {eps:.0f} |")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
