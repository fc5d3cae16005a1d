#!/usr/bin/env bash
# Race agentshape against the peer baselines of ../shared/bench on the same
# generated corpus, and check everyone's answers against the ground truth.
#
#   bench/compare.sh            full corpus (~330 MB, generated once into bench/data)
#   SMALL=1 bench/compare.sh    the small corpus (smoke test, seconds)
#   RUNS=5 ONLY="stream repair validate invariants" bench/compare.sh
#   AGENTSHAPE=/path/to/agentshape bench/compare.sh   another build
#   ONLY=python bench/compare.sh   the Python package in-process (bench/python.py),
#                                  on the shared replies and on bench/varied_corpus.py's
#
# `invariants` races `validate --jsonl` on 3,000 code-review documents of 64
# findings with the schema's `x-invariants` against the same schema without
# them (no peer has CEL invariants: the ratio is their cost over validation).
#
# Prints, per task, the median whole-process wall time of each command
# (hyperfine, 1 warm-up), agentshape's throughput ratio to each peer, and the
# correct counts. Ratios compare runs made in the same hyperfine call.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
# PEER_BENCH overrides where the peers live (a git worktree elsewhere).
peer="$(cd "${PEER_BENCH:-$root/../shared/bench}" 2>/dev/null && pwd)" || {
  echo "skipped: ../shared/bench not found next to the repository" >&2; exit 0; }
runs="${RUNS:-5}"
only="${ONLY:-stream repair validate invariants}"
if [ -n "${SMALL:-}" ]; then data="$here/data-small"; gen=(--small); else data="$here/data"; gen=(); fi
res="$data/results"

"$here/setup.sh"
export NODE_PATH="$here/.deps/node_modules"
if [ ! -f "$data/CORPUS.json" ]; then
  echo "generating the corpus into $data ..." >&2
  python3 "$peer/gen_corpus.py" "$data" "${gen[@]}"
fi
if [[ " $only " == *" python "* ]]; then
  # The Python package from a release build, in its own venv beside the
  # peers (bench/.deps, git-ignored), then bench/python.py in-process.
  venv="$here/.deps/pyvenv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -c 'import maturin, json_repair, jsonschema, fastjsonschema' 2>/dev/null ||
    "$venv/bin/python" -m pip install -q "maturin>=1.9.4,<2" json_repair jsonschema fastjsonschema
  # A wheel, not `maturin develop`: an editable install puts the module in
  # crates/python/python/agentshape/, where .venv's debug build lives too.
  rm -rf "$venv/wheels"
  (cd "$root/crates/python" && VIRTUAL_ENV="$venv" "$venv/bin/maturin" build --release --locked -q -o "$venv/wheels")
  "$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$venv"/wheels/agentshape-*.whl
  mkdir -p "$res"
  # The second reply corpus (long strings, indented objects), made once.
  [ -f "$data/varied/CORPUS.json" ] ||
    "$venv/bin/python" "$here/varied_corpus.py" "$data/varied" ${SMALL:+--count 500} >&2
  "$venv/bin/python" "$here/python.py" --data "$data" --peer "$peer" --repeat "${RUNS:-3}" --out "$res/python.json"
  only="${only//python/}"
  [ -n "${only// /}" ] || exit 0
fi
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"   # another build (an earlier commit's, to compare)
else
  (cd "$root" && cargo build --release --locked --quiet -p agentshape)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
mkdir -p "$res"

# Our output file is removed before each timed run (hyperfine --prepare,
# untimed): rewriting an existing file on ext4 makes the kernel flush the
# old contents at close (auto_da_alloc), and the next run's truncate waits
# for that disk write: +40 ms on a 200 ms `extract --jsonl` run, measured
# (alternating runs: 239 ms median into an existing file, 201 ms into a new
# one, 197 ms into /dev/null). The peers' timed runs write no output.
race() { # task ours-output ours-command peer-name peer-command [peer-name peer-command ...]
  local task="$1" output="$2" ours="$3"; shift 3
  # One --prepare per command, in order: only ours removes its file, so the
  # last run of ours is what the checks below read.
  local prepares=(--prepare "rm -f $output") names=(--command-name agentshape) cmds=("$ours")
  while [ $# -gt 0 ]; do
    prepares+=(--prepare true); names+=(--command-name "$1"); cmds+=("$2"); shift 2
  done
  local args=(--style basic --warmup 1 --runs "$runs" --export-json "$res/$task.json"
              "${prepares[@]}" "${names[@]}" "${cmds[@]}")
  echo "== $task" >&2
  hyperfine "${args[@]}" >&2
}

: >"$res/checks.jsonl"
check() { # name check-output-line
  python3 -c 'import json,sys; r=json.loads(sys.argv[2]); r["name"]=sys.argv[1]; print(json.dumps(r))' "$1" "$2" >>"$res/checks.jsonl"
}

if [[ " $only " == *" stream "* ]]; then
  race stream "$res/ours-streams.jsonl" "$bin parse --json --quiet $data/streams/stream-*.ndjson > $res/ours-streams.jsonl || true" \
    python-clauditor "python3 $peer/base_stream_py.py $data --no-check" \
    python-orjson "python3 $peer/base_stream_py.py $data --json orjson --no-check"
  python3 "$here/adapt.py" streams "$res/ours-streams.jsonl" "$res/ours-streams.adapted.jsonl"
  check agentshape-stream "$(python3 "$peer/check_outputs.py" streams "$data" "$res/ours-streams.adapted.jsonl" || true)"
  check python-clauditor-stream "$(python3 "$peer/base_stream_py.py" "$data" | tail -n 1)"
fi
if [[ " $only " == *" repair "* ]]; then
  race repair "$res/ours-replies.jsonl" "$bin extract --jsonl --json --quiet $data/replies/replies.jsonl > $res/ours-replies.jsonl || true" \
    json_repair "python3 $peer/base_repair_py.py $data --pick last --no-check"
  python3 "$here/adapt.py" replies "$res/ours-replies.jsonl" "$res/ours-replies.adapted.jsonl"
  check agentshape-repair "$(python3 "$peer/check_outputs.py" replies "$data" "$res/ours-replies.adapted.jsonl" || true)"
  check json_repair-repair "$(python3 "$peer/base_repair_py.py" "$data" --pick last | tail -n 1)"
fi
if [[ " $only " == *" validate "* ]]; then
  race validate "$res/ours-verdicts.jsonl" "$bin validate --schema $data/schemas/agent-response.json --jsonl --json --quiet $data/instances/instances.jsonl > $res/ours-verdicts.jsonl || true" \
    ajv "node $peer/base_validate_ajv.js $data --no-check" \
    fastjsonschema "python3 $peer/base_validate_py.py $data --impl fastjsonschema --no-check"
  python3 "$here/adapt.py" instances "$res/ours-verdicts.jsonl" "$res/ours-verdicts.txt"
  check agentshape-validate "$(python3 "$peer/check_outputs.py" instances "$data" "$res/ours-verdicts.txt" || true)"
  check ajv-validate "$(node "$peer/base_validate_ajv.js" "$data" | tail -n 1)"
fi
if [[ " $only " == *" invariants "* ]]; then
  python3 - "$root/schemas/code-review.json" "$data/invariants" <<'PY'
import json, os, sys
schema = json.load(open(sys.argv[1]))
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
json.dump(schema, open(os.path.join(out, "with.json"), "w"))
schema.pop("x-invariants")
json.dump(schema, open(os.path.join(out, "without.json"), "w"))
sev = ["blocker", "major", "minor", "nit"]
with open(os.path.join(out, "reviews.jsonl"), "w") as f:
    for d in range(3000):
        findings = [{"severity": sev[(i + d) % 4], "file": f"src/mod{i % 5}.rs", "line": i + 1,
                     "description": f"finding number {i} about the code", "raisedBy": "security"}
                    for i in range(64)]
        counts = {s: sum(x["severity"] == s for x in findings) for s in sev}
        if d % 10 == 0:
            counts["blocker"] += 1  # one document in ten breaks an invariant
        f.write(json.dumps({"findings": findings, "counts": counts}) + "\n")
PY
  inv="$data/invariants"
  race invariants "$res/ours-invariants.jsonl" "$bin validate --schema $inv/with.json --jsonl --json --quiet $inv/reviews.jsonl > $res/ours-invariants.jsonl || true" \
    plain-validation "$bin validate --schema $inv/without.json --jsonl --json --quiet $inv/reviews.jsonl > /dev/null || true"
  check agentshape-invariants "$(python3 -c 'import json,sys; v=[json.loads(l) for l in open(sys.argv[1])]; bad=[r["line"] for r in v if not r["valid"]]; ok=len(v)==3000 and bad==list(range(1,3001,10)) and all(e.get("kind")=="invariant" for r in v for e in r["errors"]); print(json.dumps({"correct": 3000 if ok else 0, "checked": len(v)}))' "$res/ours-invariants.jsonl")"
fi

python3 - "$res" <<'PY'
import glob, json, os, sys
res = sys.argv[1]
print("| task | command | median s (min-max) | agentshape speed-up |")
print("|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(res, "*.json"))):
    task = os.path.basename(path)[:-5]
    data = json.load(open(path))
    if not isinstance(data, dict) or "results" not in data:
        continue  # python.json: bench/python.py's own table
    rows = data["results"]
    ours = next(r for r in rows if r["command"] == "agentshape")
    for r in rows:
        ratio = "" if r is ours else f'{r["median"] / ours["median"]:.1f}x'
        print(f'| {task} | {r["command"]} | {r["median"]:.3f} ({r["min"]:.3f}-{r["max"]:.3f}) | {ratio} |')
print()
print("| checked | correct |")
print("|---|---|")
for line in open(os.path.join(res, "checks.jsonl")):
    r = json.loads(line)
    extra = ""
    if r.get("first_mismatches"):
        extra = f' first mismatch: {r["first_mismatches"][0]}'
    print(f'| {r["name"]} | {r.get("correct")}/{r.get("checked")}{extra} |')
PY
