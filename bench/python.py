#!/usr/bin/env python3
"""The Python package in-process against the Python peers, on the shared corpus.

    python bench/python.py [--data bench/data] [--peer ../shared/bench] [--repeat 3]
                           [--skip-jsonschema] [--out results.json]

Run it with a Python where `agentshape` is installed from a release build
(`bench/compare.sh` with ONLY=python makes bench/.deps/pyvenv for this) and
json_repair, fastjsonschema and jsonschema are importable.

(b) extraction, 20,000 replies: `agentshape.extract(text).value` per reply
    (and `.method` only, which builds no Python value)
    against `json_repair.loads` on the candidate the corpus's extraction rule
    picks (`base_repair_py.py --pick last`, imported from the peer folder, as
    bench/compare.sh races it); then `extract_many` on 1 and 2 threads.
    Correct counts by the peers' own `benchlib.check_replies`, and how many
    values equal json_repair's. The same rows again on the second corpus,
    `--varied DIR` (default DATA/varied; `python3 bench/varied_corpus.py DIR`
    writes it): replies with strings of hundreds of characters (escapes,
    non-ASCII) in indented objects, fenced or after prose.
(c) validation, 100,000 instances against schemas/agent-response.json:
    "validate only" (instances parsed by `json.loads` beforehand, in blocks
    of 10,000, untimed): fastjsonschema, jsonschema `Draft7Validator`,
    `Validator.is_valid(dict)`, `Validator.validate(dict)` (the error list;
    both walk the objects in place: Note [Validating Python objects in place]
    in crates/python/src/instance.rs), the walk alone (an empty schema),
    `json.dumps` + `Validator.validate_json` (the route through text),
    `Validator.validate_many` on 1 and 2 threads; and "from the line":
    `json.loads` + fastjsonschema against `Validator.validate_json(line)`.
    Verdicts checked against instances/labels.jsonl.

Each figure is the median of `--repeat` runs of the whole loop (in-process
seconds, `time.perf_counter`); ratios compare figures of this one process.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def peer_dir(arg):
    for d in (arg, os.path.join(ROOT, "..", "shared", "bench"), "/work/shared/bench"):
        if d and os.path.isfile(os.path.join(d, "benchlib.py")):
            return os.path.abspath(d)
    sys.exit("skipped: ../shared/bench not found next to the repository")


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        # The last run's result is freed here, untimed: freeing 20,000
        # values inside the next run would charge it to that run (the same
        # seconds for every implementation, so the fastest most).
        out = None
        # What the harness holds (the corpus, its answers, the other
        # implementation's 20,000 values kept for the checks) is moved out
        # of the collector's sight, untimed: otherwise every collection in
        # a run walks it, and the run measured after the others holds the
        # most (ours held json_repair's values; json_repair held none).
        # Each run is charged for the objects it makes, as in a program
        # that holds only its own; gc.freeze() is CPython's tool for it.
        gc.collect()
        gc.freeze()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        gc.unfreeze()
    timed.runs = times  # every run's seconds, for the spread
    return statistics.median(times), out


def join_pairs(v):
    """`v` with each pair of surrogates in its strings made the one character."""
    if isinstance(v, str):
        if any("\ud800" <= c <= "\udfff" for c in v):
            return v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return v
    if isinstance(v, list):
        return [join_pairs(x) for x in v]
    if isinstance(v, dict):
        return {join_pairs(k): join_pairs(x) for k, x in v.items()}
    return v


def extract_rows(label, replies, repeat, row, results, benchlib):
    """The extraction rows on one corpus (`label`: "shared" or "varied")."""
    import agentshape
    import json_repair
    import base_repair_py as peer_repair
    task = f"extract ({label})"
    texts = [r["text"] for r in replies]
    n = len(texts)

    t_jr, theirs = timed(lambda: [peer_repair.extract(t, "last") for t in texts], repeat)
    c, k, per_kind = benchlib.check_replies(replies, theirs)
    jr_runs = timed.runs
    row(task, f"json_repair {getattr(json_repair, '__version__', '')} (--pick last)",
        t_jr, n, c, k, runs=jr_runs)
    if c != k:
        print(f"json_repair misses per kind ({label}): {per_kind}", file=sys.stderr)
    # The same calls without building the Python values: what core's
    # extraction costs, apart from the dicts and lists every parser
    # that returns Python objects pays for (json.loads included).
    t_core, _ = timed(lambda: [agentshape.extract(t).method for t in texts], repeat)
    row(task, "agentshape.extract per reply, .method only (no Python value built)",
        t_core, n, None, None, {"json_repair": t_jr}, runs=timed.runs)
    t_one, got = timed(lambda: [agentshape.extract(t).value for t in texts], repeat)
    c, k, per_kind = benchlib.check_replies(replies, got)
    ours_runs = timed.runs
    row(task, "agentshape.extract per reply", t_one, n, c, k, {"json_repair": t_jr},
        runs=ours_runs)
    # The same-process ratio of each run (json_repair's i-th over ours'), for the spread.
    ratios = sorted(j / o for j, o in zip(jr_runs, ours_runs))
    print(json.dumps({"task": task, "ratio_per_run": [round(x, 1) for x in ratios]}),
          file=sys.stderr)
    results[f"ratios_{label}"] = ratios
    if c != k:
        print(f"agentshape misses per kind ({label}): {per_kind}", file=sys.stderr)
    same = sum(benchlib.canonical(x) == benchlib.canonical(y) for x, y in zip(got, theirs))
    # json_repair's own parser (used when json.loads fails) keeps an escaped
    # pair such as `\ud83d\ude80` as two lone surrogates; joined, they are
    # the one character json.loads and agentshape give.
    joined = sum(benchlib.canonical(x) == benchlib.canonical(join_pairs(y))
                 for x, y in zip(got, theirs))
    print(json.dumps({"task": task, "same_value_as_json_repair": same,
                      "same_once_its_surrogate_pairs_are_joined": joined, "of": n}),
          file=sys.stderr)
    results[f"same_as_json_repair_{label}"] = (same, joined)
    for threads in (1, 2):
        t, got = timed(lambda: [e.value for e in agentshape.extract_many(texts, threads=threads)],
                       repeat)
        c, k, _ = benchlib.check_replies(replies, got)
        row(task, f"agentshape.extract_many threads={threads}", t, n, c, k,
            {"json_repair": t_jr, "extract per reply": t_one})
        results[f"extract_many_{label}_{threads}"] = t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--peer", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-jsonschema", action="store_true",
                    help="jsonschema takes ~25 s per pass over the instances")
    ap.add_argument("--only", default="extract validate")
    ap.add_argument("--varied", default=None,
                    help="the second reply corpus (bench/varied_corpus.py; default DATA/varied, "
                         "'none' to skip)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    peer = peer_dir(a.peer)
    sys.path.insert(0, peer)
    import benchlib  # noqa: E402  (the peers' own checks)

    import agentshape
    paths = benchlib.corpus_paths(a.data)
    if not os.path.isfile(paths["replies"]):
        sys.exit(f"no corpus at {a.data}: python3 {peer}/gen_corpus.py {a.data}")
    rows = []
    results = {}

    def row(task, name, seconds, items, correct, checked, base=None, runs=None):
        r = {"task": task, "impl": name, "seconds": round(seconds, 4), "items": items,
             "items_per_s": round(items / seconds), "correct": correct, "checked": checked}
        if runs:
            r["runs"] = [round(x, 4) for x in runs]
        if base is not None:
            r["speedup_vs"] = {k: round(v / seconds, 1) for k, v in base.items()}
        rows.append(r)
        print(json.dumps(r), file=sys.stderr)
        return seconds

    if "extract" in a.only:
        corpora = [("shared", paths["replies"])]
        if a.varied != "none":
            varied = a.varied or os.path.join(a.data, "varied")
            vpath = os.path.join(varied, "replies", "replies.jsonl")
            if not os.path.isfile(vpath):
                sys.exit(f"no varied corpus at {varied}: python3 {HERE}/varied_corpus.py {varied}")
            corpora.append(("varied", vpath))
        for label, path in corpora:
            extract_rows(label, benchlib.read_jsonl(path), a.repeat, row, results, benchlib)

    if "validate" in a.only:
        import fastjsonschema
        import jsonschema
        schema = json.load(open(paths["schema"], encoding="utf-8"))
        with open(paths["instances"], encoding="utf-8") as f:
            lines = [line for line in f if line.strip()]
        labels = [json.loads(x)["valid"] for x in open(paths["labels"], encoding="utf-8")]
        n = len(lines)
        fast = fastjsonschema.compile(schema)
        exc = fastjsonschema.JsonSchemaValueException
        draft7 = jsonschema.Draft7Validator(schema)
        v = agentshape.Validator(schema)
        empty = agentshape.Validator({})

        def fjs(d):
            try:
                fast(d)
                return True
            except exc:
                return False

        impls = {
            "fastjsonschema": lambda block: [fjs(d) for d in block],
            "agentshape Validator.is_valid(dict)": lambda block: [v.is_valid(d) for d in block],
            "agentshape Validator.validate(dict)": lambda block: [not v.validate(d) for d in block],
            "agentshape Validator({}).is_valid(dict): the in-place walk alone": lambda block: [
                empty.is_valid(d) for d in block],
            "json.dumps alone": lambda block: [bool(json.dumps(d)) for d in block],
            "agentshape json.dumps + validate_json": lambda block: [
                not v.validate_json(json.dumps(d)) for d in block],
            "agentshape Validator.validate_many threads=1": lambda block: [
                not e for e in v.validate_many(block, threads=1)],
            "agentshape Validator.validate_many threads=2": lambda block: [
                not e for e in v.validate_many(block, threads=2)],
        }
        if not a.skip_jsonschema:
            impls["jsonschema Draft7Validator"] = lambda block: [draft7.is_valid(d) for d in block]
        spent = {k: [] for k in impls}
        verdicts = {k: [] for k in impls}
        for _ in range(a.repeat):
            run = {k: 0.0 for k in impls}
            got = {k: [] for k in impls}
            for start in range(0, n, 10_000):
                block = [json.loads(x) for x in lines[start:start + 10_000]]
                for name, fn in impls.items():
                    if name.startswith("jsonschema") and spent[name]:
                        continue  # one pass is enough for the slow one
                    t0 = time.perf_counter()
                    out = fn(block)
                    run[name] += time.perf_counter() - t0
                    got[name] += out
                del block
            for name in impls:
                if got[name]:
                    spent[name].append(run[name])
                    verdicts[name] = got[name]
        base = statistics.median(spent["fastjsonschema"])
        for name in impls:
            if "alone" in name:
                t = statistics.median(spent[name])
                row("validate only", name, t, n, None, None, None)
                continue
            t = statistics.median(spent[name])
            c, k = benchlib.check_verdicts([{"valid": x} for x in labels], verdicts[name])
            cmp = None if name == "fastjsonschema" else {"fastjsonschema": base}
            if name.startswith("agentshape") and not a.skip_jsonschema:
                cmp["jsonschema"] = statistics.median(spent["jsonschema Draft7Validator"])
            row("validate only", name, t, n, c, k, cmp)

        t_peer, got = timed(lambda: [fjs(json.loads(x)) for x in lines], a.repeat)
        c, k = benchlib.check_verdicts([{"valid": x} for x in labels], got)
        row("validate from the line", "json.loads + fastjsonschema", t_peer, n, c, k)
        t_ours, got = timed(lambda: [not v.validate_json(x) for x in lines], a.repeat)
        c, k = benchlib.check_verdicts([{"valid": x} for x in labels], got)
        row("validate from the line", "agentshape Validator.validate_json(line)", t_ours, n, c, k,
            {"json.loads + fastjsonschema": t_peer})

    print("| task | implementation | in-process s | items/s | speed-up | correct |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        up = ", ".join(f"{v}x vs {k}" for k, v in r.get("speedup_vs", {}).items())
        ok = "" if r["correct"] is None else f'{r["correct"]:,}/{r["checked"]:,}'
        print(f'| {r["task"]} | {r["impl"]} | {r["seconds"]:.3f} | {r["items_per_s"]:,} | {up} | {ok} |')
    for k, v in results.items():
        if k.startswith("ratios_"):
            print(f"\n{k[len('ratios_'):]} corpus: extract(text).value over json_repair, "
                  f"run by run: {', '.join(f'{x:.1f}x' for x in v)}")
        if k.startswith("same_as_json_repair_"):
            print(f"\n{k[len('same_as_json_repair_'):]} corpus: agentshape's value equals "
                  f"json_repair's on {v[0]:,} replies, on {v[1]:,} once json_repair's "
                  "surrogate pairs are joined")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
