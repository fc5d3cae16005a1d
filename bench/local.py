#!/usr/bin/env python3
"""`--provider local` over a fixed, stratified sample of JSONSchemaBench.

Called by bench/local.sh (which builds the binary); standard library only.

    local.py BIN CORPUS OUT_DIR [--coverage-only]

The sample is computed, never stored: every folder of CORPUS
(../shared/corpus/jsonschemabench) is listed and sorted, and
random.Random(SEED).sample picks SAMPLE // folders files from each (all of
a folder that has fewer; what is left over goes to the largest folders, one
each, in name order). The schemas stay in ../shared: each is written to a
temporary file for the run only.

Per schema:
  * coverage (lint): `agentshape lint --provider local --json` accepts the
    schema as it is (what llguidance compiles, by its documented rules);
  * coverage (compiler): `agentshape ask --provider local` did not stop
    with exit 64 (the grammar compiled; ask sends lint's fix when needed);
  * compliance: the answer's `value`, checked by `agentshape validate`
    against the ORIGINAL schema (ask's own verdict is not trusted);
  * timing: ask --json's `timing` (tokens, tokens_per_second, grammar_ms,
    sample_ms), constrained and with --unconstrained.

Environment: SAMPLE (default 100), SEED (default 10), MODEL (default
smollm2-135m), MAX_TOKENS (default 512), THREADS (default: the engine's),
ASK_TIMEOUT seconds per call (default 600, a hang guard), JOBS schemas
at a time (default 1; timing per token is measured inside each ask).
Writes OUT_DIR/results.jsonl (one line per schema and mode) and prints the
markdown table on stdout.
"""

import concurrent.futures
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

# The JSONSchemaBench paper's published LLGuidance coverage on MaskBench.
PAPER = (7765, 10163)


def sample(corpus, n, seed):
    folders = sorted(d for d in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, d)))
    files = {d: sorted(f for f in os.listdir(os.path.join(corpus, d)) if f.endswith(".json")) for d in folders}
    want = {d: min(len(files[d]), n // len(folders)) for d in folders}
    left = n - sum(want.values())
    for d in sorted(folders, key=lambda d: (-len(files[d]), d)):
        if left <= 0:
            break
        if want[d] < len(files[d]):
            want[d] += 1
            left -= 1
    rng = random.Random(seed)
    picked = []
    for d in folders:
        for f in sorted(rng.sample(files[d], want[d])):
            picked.append((d, f))
    return picked


def prompt_of(schema):
    parts = []
    if isinstance(schema, dict):
        for k in ("title", "description"):
            v = schema.get(k)
            if isinstance(v, str) and v.strip():
                parts.append(v.strip())
    what = " ".join(parts)[:300]
    if what:
        return f"Reply with one JSON value for: {what}"
    return "Reply with one example JSON value that matches the schema."


def run(cmd, stdin=None, timeout=600):
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"


def first_json(stdout):
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def ask(bin_, schema_path, prompt, constrained, env):
    cmd = [bin_, "ask", "--provider", "local", "--model", env["MODEL"], "--json",
           "--schema", schema_path, "--max-tokens", env["MAX_TOKENS"]]
    if env.get("THREADS"):
        cmd += ["--threads", env["THREADS"]]
    if not constrained:
        cmd.append("--unconstrained")
    cmd.append(prompt)
    code, out, err = run(cmd, timeout=int(env["ASK_TIMEOUT"]))
    r = first_json(out) or {}
    value = r.get("value")
    valid = False
    if "value" in r and value is not None:
        vcode, _, _ = run([bin_, "validate", "--schema", schema_path, "-"],
                          stdin=json.dumps(value).encode())
        valid = vcode == 0
    t = r.get("timing") or {}
    return {
        "exit": code,
        "compiled": code is not None and code != 64,
        "valid": valid,
        "ask_valid": r.get("valid"),
        "tokens": t.get("tokens"),
        "tokens_per_second": t.get("tokens_per_second"),
        "closing_tokens": t.get("closing_tokens"),
        "rewound_tokens": t.get("rewound_tokens"),
        "error_category": r.get("error_category"),
        "grammar_ms": t.get("grammar_ms"),
        "sample_ms": t.get("sample_ms"),
        "prompt_ms": t.get("prompt_ms"),
        "load_ms": t.get("load_ms"),
        "stderr": err.decode("utf-8", "replace")[-300:] if code not in (0, 1, 2) else "",
    }


def preflight(bin_, env):
    """Exit 64 must mean "the grammar did not compile", not "no engine":
    one trivial ask first, and stop when even that is refused."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}, f)
    try:
        cmd = [bin_, "ask", "--provider", "local", "--model", env["MODEL"], "--json",
               "--schema", f.name, "--max-tokens", "16", "Is the sky blue?"]
        code, _, err = run(cmd, timeout=int(env["ASK_TIMEOUT"]))
    finally:
        os.unlink(f.name)
    if code is None or code == 64 or code >= 66:
        sys.exit("bench/local: `ask --provider local` cannot run here (exit %s): %s\n"
                 "build with `--features local` and fetch the model, or set COVERAGE_ONLY=1"
                 % (code, err.decode("utf-8", "replace").strip()[-500:]))


def pct(a, b):
    return f"{a}/{b} ({100.0 * a / b:.1f}%)" if b else "-"


def main(argv):
    bin_, corpus, out_dir = argv[1], argv[2], argv[3]
    coverage_only = "--coverage-only" in argv
    env = {
        "MODEL": os.environ.get("MODEL", "smollm2-135m"),
        "MAX_TOKENS": os.environ.get("MAX_TOKENS", "512"),
        "THREADS": os.environ.get("THREADS", ""),
        "ASK_TIMEOUT": os.environ.get("ASK_TIMEOUT", "600"),
    }
    n = int(os.environ.get("SAMPLE", "100"))
    seed = int(os.environ.get("SEED", "10"))
    picked = sample(corpus, n, seed)
    os.makedirs(out_dir, exist_ok=True)
    if not coverage_only:
        preflight(bin_, env)
    tmp = tempfile.mkdtemp(prefix="agentshape-local-bench-")

    def one(i, folder, name):
        doc = json.load(open(os.path.join(corpus, folder, name), encoding="utf-8"))
        schema = doc.get("schema", doc)
        path = os.path.join(tmp, f"schema-{i}.json")
        with open(path, "w") as f:
            json.dump(schema, f)
        code, out, _ = run([bin_, "lint", "--provider", "local", "--json", "--schema", path])
        lint = first_json(out) or {}
        row = {"folder": folder, "file": name, "lint_exit": code,
               "lint_accepted": code in (0, 1) and bool(lint.get("accepted")),
               "our_validator": code != 64,
               "rules": sorted({f["rule"] + ":" + f["pointer"].rsplit("/", 1)[-1]
                                for f in lint.get("findings", []) if f.get("severity") == "error"})}
        if not coverage_only:
            prompt = prompt_of(schema)
            row["constrained"] = ask(bin_, path, prompt, True, env)
            if not os.environ.get("CONSTRAINED_ONLY"):
                row["unconstrained"] = ask(bin_, path, prompt, False, env)
        print(f"[{i + 1}/{len(picked)}] {folder}/{name}", file=sys.stderr)
        return row

    # JOBS schemas at a time (each ask on THREADS threads); rows keep the
    # sample's order whatever finishes first.
    jobs = max(1, int(os.environ.get("JOBS", "1")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(lambda a: one(*a), [(i, f, n_) for i, (f, n_) in enumerate(picked)]))
    with open(os.path.join(out_dir, "results.jsonl"), "w") as log:
        for row in rows:
            log.write(json.dumps(row) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    report(rows, n, seed, env, coverage_only)


def report(rows, n, seed, env, coverage_only):
    total = len(rows)
    ours = sum(r["our_validator"] for r in rows)
    lint_ok = sum(r["lint_accepted"] for r in rows)
    folders = sorted({r["folder"] for r in rows})
    print(f"## `--provider local` on JSONSchemaBench (sample of {total}, {len(folders)} folders, seed {seed}, model {env['MODEL']})\n")
    print("| measure | agentshape (llguidance) | JSONSchemaBench paper, LLGuidance (MaskBench) |")
    print("|---|---|---|")
    print(f"| coverage: schemas llguidance compiles as written (lint --provider local) | {pct(lint_ok, total)} | {pct(*PAPER)} |")
    if not coverage_only:
        c = [r["constrained"] for r in rows]
        u = [r.get("unconstrained") for r in rows]
        compiled = [x for x in c if x["compiled"]]
        print(f"| coverage: grammar compiled by `ask` (after lint's fix) | {pct(len(compiled), total)} | |")
        print(f"| compliance, constrained: schema-valid outputs / schemas compiled | {pct(sum(x['valid'] for x in compiled), len(compiled))} | |")
        closed = sum(1 for x in compiled if x["valid"] and (x.get("closing_tokens") or 0) > 0)
        print(f"| of which closed in the budget's last quarter (Note [Closing under the budget]) | {closed} | |")
        rewound = sum(1 for x in compiled if x["valid"] and (x.get("rewound_tokens") or 0) > 0)
        print(f"| of which rolled back and closed sooner | {rewound} | |")
        cut = sum(1 for x in compiled if x.get("error_category") == "max_tokens")
        print(f"| constrained answers cut at MAX_TOKENS={env['MAX_TOKENS']} | {cut} | |")
        same = [y for x, y in zip(c, u) if x["compiled"] and y is not None]
        if same:
            print(f"| compliance, unconstrained (same schemas and prompts, extract + repair + retry) | {pct(sum(y['valid'] for y in same), len(same))} | |")
        for label, xs in (("constrained", compiled), ("unconstrained", same)):
            tps = [x["tokens_per_second"] for x in xs if x.get("tokens_per_second")]
            if tps:
                print(f"| tokens per second, {label} (median over schemas) | {statistics.median(tps):.1f} | |")
        g = sum(x["grammar_ms"] or 0 for x in compiled if x.get("sample_ms"))
        s = sum(x["sample_ms"] or 0 for x in compiled if x.get("sample_ms"))
        if s:
            print(f"| grammar's share of the time per token (Σ grammar_ms / Σ sample_ms) | {100.0 * g / s:.1f}% | |")
    print("\nPer folder (lint coverage):\n")
    print("| folder | schemas | compiles as written |")
    print("|---|---|---|")
    for f in folders:
        rs = [r for r in rows if r["folder"] == f]
        print(f"| {f} | {len(rs)} | {sum(r['lint_accepted'] for r in rs)} |")
    reasons = {}
    for r in rows:
        for k in r["rules"]:
            reasons[k] = reasons.get(k, 0) + 1
    if reasons:
        top = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        print("\nMost common refusals (schemas): " + ", ".join(f"`{k}` {v}" for k, v in top))
    if ours < total:
        print(f"\n{total - ours} schema(s) are rejected by agentshape's own validator (exit 64) and count as not compiled.")


if __name__ == "__main__":
    main(sys.argv)
