#!/usr/bin/env python3
"""Issue 39's usage benchmark: `agentshape usage` over 1 GB of Claude Code
session files, already imported and not yet imported, against `parse --json`
on the same files.

Called by bench/usage.sh (which builds the binary); standard library only.

    usage.py BIN [--mb 1024] [--pg URL] [--skip-pg]

1. `--mb` MB of session files, generated as bench/import.py generates them
   (the same seeded generator), under `CLAUDE_CONFIG_DIR=<tmp>`.
2. `parse --json FILES > /dev/null`: the decoder alone, best of 3.
3. `usage daily --json --files` into a new SQLite store: the files not yet
   imported (the import is most of it), once.
4. `usage daily|session|blocks --json` on that store: already imported,
   best of 5 each; the number of model calls read.
5. The same reports from Postgres (a throwaway server, or --pg URL).
Prints a markdown table; temporary files are removed.
"""

import argparse
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_load import Throwaway  # noqa: E402

# bench/import.py's generator ("import" is a keyword, hence importlib).
generate = importlib.import_module("import").generate


def timed(cmd, env=None, out=subprocess.PIPE):
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, env=env, stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])}…: exit {p.returncode}\n{p.stderr[-2000:].decode(errors='replace')}")
    return took, p.stdout


def best(n, cmd, env=None):
    runs = [timed(cmd, env) for _ in range(n)]
    return min(t for t, _ in runs), runs[-1][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--pg")
    ap.add_argument("--skip-pg", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agentshape-usage-bench-")
    rows = []
    try:
        home = os.path.join(tmp, "claude")
        files, written = generate(home, a.mb * 1_000_000, random.Random(39))
        mb = written / 1e6
        print(f"generated {mb:.0f} MB in {len(files)} files", file=sys.stderr)
        env = dict(os.environ, CLAUDE_CONFIG_DIR=home, HOME=os.path.join(tmp, "nohome"),
                   CODEX_HOME=os.path.join(tmp, "nocodex"), XDG_CONFIG_HOME=os.path.join(tmp, "nocfg"))
        parse, _ = best(3, [a.binary, "parse", "--json", "--quiet", *files])
        rows.append(("`parse --json` (decode only)", f"{parse:.2f} s", f"{mb / parse:.0f} MB/s", "1.0×", ""))
        db = os.path.join(tmp, "u.db")
        cold, out = timed([a.binary, "usage", "daily", "--json", "--quiet", "--files", "--store", db], env)
        calls = json.loads(out)["totals"]["calls"]
        rows.append(("`usage daily --files`, not yet imported (SQLite)", f"{cold:.2f} s",
                     f"{mb / cold:.0f} MB/s", f"{cold / parse:.1f}×", f"{calls:,} calls"))
        stores = [("SQLite", db)]
        pg = None
        if not a.skip_pg:
            pg = None if a.pg else Throwaway()
            url = a.pg or pg.url
            took, _ = timed([a.binary, "import", "--quiet", "--store", url, home], env)
            rows.append(("`import` into Postgres (for the rows below)", f"{took:.2f} s", "", "", ""))
            stores.append(("Postgres", url))
        try:
            for name, store in stores:
                for report in ["daily", "session", "blocks"]:
                    took, _ = best(5, [a.binary, "usage", report, "--json", "--store", store], env)
                    rows.append((f"`usage {report}`, imported ({name})", f"{took * 1000:.0f} ms", "", "",
                                 f"{calls:,} calls"))
        finally:
            if pg:
                pg.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{mb:.0f} MB of Claude Code session files, {len(files)} files")
    print("| what | time | rate | × parse | |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
