#!/usr/bin/env bash
# `--provider local` (SmolLM2 under llguidance) over a fixed, stratified
# sample of ../shared/corpus/jsonschemabench: coverage, compliance
# (constrained and --unconstrained, checked by `agentshape validate`),
# tokens per second and the grammar's share of the time per token, beside
# the JSONSchemaBench paper's LLGuidance figure (7,765 / 10,163, ~76%).
#
#   bench/local.sh                 100 schemas, seed 10 (the README's table)
#   SAMPLE=10 bench/local.sh       a smoke run
#   COVERAGE_ONLY=1 bench/local.sh lint coverage only (no model, no `local` feature)
#   CONSTRAINED_ONLY=1 bench/local.sh   no --unconstrained runs (half the time)
#
# Also: SEED, MODEL (default smollm2-135m), MAX_TOKENS (512), THREADS,
# ASK_TIMEOUT (600 s per call, a hang guard), JOBS (schemas at a time, 1),
# AGENTSHAPE (a built binary).
# Per-schema results: bench/data-local/results.jsonl. Details: bench/local.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
# ../shared next to the repository; from a git worktree elsewhere, /work/shared.
corpus="${CORPUS:-$root/../shared/corpus/jsonschemabench}"
[ -d "$corpus" ] || [ -n "${CORPUS:-}" ] || corpus=/work/shared/corpus/jsonschemabench
[ -d "$corpus" ] || { echo "skipped: ../shared/corpus/jsonschemabench not found next to the repository" >&2; exit 0; }
corpus="$(cd "$corpus" && pwd)"

only=()
[ -z "${COVERAGE_ONLY:-}" ] || only=(--coverage-only)
if [ -n "${AGENTSHAPE:-}" ]; then
  bin="$AGENTSHAPE"
else
  features=()
  # The engine is the `local` cargo feature; without it only coverage can run.
  if [ -z "${COVERAGE_ONLY:-}" ]; then features=(--features local); fi
  (cd "$root" && cargo build --release --quiet -p agentshape "${features[@]}")
  bin="${CARGO_TARGET_DIR:-$root/target}/release/agentshape"
fi
if [ -z "${COVERAGE_ONLY:-}" ]; then
  # The model must be there before timing anything (no download inside a run).
  "$bin" model fetch "${MODEL:-smollm2-135m}" --quiet >&2
fi
python3 "$here/local.py" "$bin" "$corpus" "$here/data-local" "${only[@]}"
