// agentshape (the npm package, WebAssembly) against the JavaScript peers, in
// one Node process, on the shared bench corpora (../shared/bench/README.md):
//
//   (b) extraction and repair of the 20,000 replies: agentshape's `extract`
//       and `repair` against `jsonrepair` given what the corpus's reference
//       rule picks (the Python baseline's `--pick last`, ported), and
//       against `jsonrepair` on the whole text. Each is timed to a value
//       (`extract(t).value`; `JSON.parse` of `repair`'s and `jsonrepair`'s
//       answers, every value kept, as a caller keeps them), and `repair`
//       and `jsonrepair` also to their own result, the text (Note [Repair
//       timed to its text]);
//   (c) validation of the 100,000 instances: agentshape's `Validator`
//       against ajv's compiled validator (`new Ajv()`, as
//       base_validate_ajv.js), from the JSON text of each line (JSON.parse +
//       validate for ajv, `isValidJson` for agentshape, and `validateJson`,
//       which also answers every violation of an invalid line) and from objects
//       already parsed (`validate` alone, `isValid`: the schema compiled to
//       JavaScript, Note [Validators compiled to JavaScript] in
//       packages/agentshape/compile.js).
//
//   node bench/wasm/bench.mjs CORPUS [--runs N]
//
// CORPUS is made by `python3 ../shared/bench/gen_corpus.py /tmp/agentshape-bench`
// (bench/wasm/run.sh does it; never into the repository). Prints one line per
// measurement and a last JSON line with every figure; times are the median
// of N rounds (default 3) after a warm-up round, each a whole pass over the
// corpus per case, the cases interleaved.
// Correctness is checked against the corpus's ground truth (replies: the
// `expected` value, JSON equality with key order free; instances: labels).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { Validator, extract, repair } from "../../packages/agentshape/index.js";
import { loadTimes } from "../../packages/agentshape/load.js";

// The peers are the package's devDependencies (scripts/setup.sh --only wasm).
const peer = createRequire(new URL("../../packages/agentshape/package.json", import.meta.url));
const Ajv = peer("ajv");
const { jsonrepair } = peer("jsonrepair");

const args = process.argv.slice(2);
const corpus = args[0];
if (!corpus) {
  console.error("usage: node bench/wasm/bench.mjs CORPUS [--runs N]");
  process.exit(64);
}
const runsAt = args.indexOf("--runs");
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;

function readJsonl(path) {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");
}

/**
 * Each case's median wall time in seconds over `RUNS` rounds after one
 * warm-up round, and its last pass's result. Rounds interleave the cases
 * (A B C, A B C, ...) so that a change in the machine's load (a shared host)
 * falls on all of them alike, not on whichever ran during it.
 */
function timeAll(cases) {
  const out = {};
  const times = {};
  for (let r = 0; r <= RUNS; r++) {
    for (const [name, f] of Object.entries(cases)) {
      const t0 = process.hrtime.bigint();
      out[name] = f();
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r > 0) (times[name] ??= []).push(s);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, t]) => {
    t.sort((a, b) => a - b);
    return [name, { seconds: t[Math.floor(t.length / 2)], min: t[0], max: t.at(-1), out: out[name] }];
  }));
}

/** JSON equality, key order free (the corpus checker's canonical JSON, but JavaScript's numbers). */
function equal(a, b) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
}

// ---- the reference pick rule, ported from base_repair_py.py (--pick last) ----
const FENCE = /```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n([\s\S]*?)(?:\n[ \t]*```|$)/g;
const TOKEN = /"(?:[^"\\]|\\[\s\S])*"?|[{}[\]]/g;

function braceSpan(text) {
  const cands = [text.indexOf("{"), text.indexOf("[")].filter((i) => i >= 0);
  if (!cands.length) return null;
  const i = Math.min(...cands);
  let depth = 0;
  TOKEN.lastIndex = i;
  for (let m; (m = TOKEN.exec(text)) !== null;) {
    const tok = m[0];
    if (tok[0] === '"') continue;
    if (tok === "{" || tok === "[") depth++;
    else if (--depth === 0) return text.slice(i, m.index + 1);
  }
  return text.slice(i);
}

function pickLast(text) {
  const fences = [...text.matchAll(FENCE)];
  const tagged = fences.filter((m) => m[1].toLowerCase() === "json");
  if (tagged.length) return tagged.at(-1)[2];
  const untagged = fences.filter((m) => m[1] === "" && (m[2].includes("{") || m[2].includes("[")));
  if (untagged.length) return untagged.at(-1)[2];
  return braceSpan(text);
}

function viaJsonrepair(src) {
  if (src === null) return null;
  try {
    return JSON.parse(jsonrepair(src));
  } catch {
    return null;
  }
}

function viaRepair(text) {
  try {
    return JSON.parse(repair(text));
  } catch {
    return null;
  }
}

// Note [Repair timed to its text]: `repair(text)` answers text, as
// `jsonrepair(text)` does, so the two are also timed to that: each
// answer's length read (so nothing is left unread or kept), -1 where
// either throws. Timed with a `JSON.parse` of every answer, as the value
// rows are, both also pay the parse and the garbage collector's copying
// of the values kept (about half of `repair`'s time so, a fifth of
// `jsonrepair`'s): the speed of repair itself is the text rows. The
// texts are not kept in an array either: `jsonrepair` builds its answer
// by concatenation, and keeping 20,000 such strings (ropes of small
// pieces) costs it more in collection than making them did (1.24 s
// against 0.77 s a round here). The answers are scored as the value
// rows' (`parsedIn`), which parse the same calls' answers.
function repairLength(text) {
  try {
    return repair(text).length;
  } catch {
    return -1;
  }
}

function jsonrepairLength(src) {
  if (src === null) return -1;
  try {
    return jsonrepair(src).length;
  } catch {
    return -1;
  }
}

const results = { node: process.versions.node, runs: RUNS, load_ms: loadTimes };
console.log(`load: compile ${loadTimes.compileMs.toFixed(1)} ms, instantiate ${loadTimes.instantiateMs.toFixed(1)} ms`);

// ---- (b) replies ----
{
  const rows = readJsonl(join(corpus, "replies/replies.jsonl")).map((l) => JSON.parse(l));
  const texts = rows.map((r) => r.text);
  const score = (values) => values.reduce((n, v, i) => n + (equal(v, rows[i].expected) ? 1 : 0), 0);
  const cases = {
    "agentshape extract": () => texts.map((t) => { const e = extract(t); return e.method === "none" ? null : e.value; }),
    "agentshape repair": () => texts.map(viaRepair),
    "agentshape repair, text": () => texts.map(repairLength),
    "jsonrepair, reference pick": () => texts.map((t) => viaJsonrepair(pickLast(t))),
    "jsonrepair, ref. pick, text": () => texts.map((t) => jsonrepairLength(pickLast(t))),
    "jsonrepair, whole text": () => texts.map((t) => viaJsonrepair(t)),
  };
  // A text row's answers are its value row's, parsed (Note [Repair timed
  // to its text]): scored there, from the same calls, before it.
  const parsedIn = {
    "agentshape repair, text": "agentshape repair",
    "jsonrepair, ref. pick, text": "jsonrepair, reference pick",
  };
  results.replies = { items: texts.length };
  for (const [name, { seconds, min, max, out }] of Object.entries(timeAll(cases))) {
    const correct = name in parsedIn ? results.replies[parsedIn[name]].correct : score(out);
    results.replies[name] = { seconds, min, max, correct };
    console.log(`replies: ${name.padEnd(28)} ${seconds.toFixed(3)} s [${min.toFixed(3)}-${max.toFixed(3)}]  ${Math.round(texts.length / seconds)} replies/s  correct ${correct}/${texts.length}`);
  }
  const r = results.replies;
  const ratios = [
    ["agentshape extract", "jsonrepair, reference pick", "extract to a value"],
    ["agentshape repair", "jsonrepair, reference pick", "repair to a value (JSON.parse of each answer)"],
    ["agentshape repair, text", "jsonrepair, ref. pick, text", "repair to its text"],
  ];
  for (const [ours, theirs, what] of ratios) {
    const x = r[theirs].seconds / r[ours].seconds;
    console.log(`replies: ${what}: agentshape is ${x.toFixed(1)}x jsonrepair (reference pick)`);
  }
}

// ---- (c) instances ----
{
  const schema = JSON.parse(readFileSync(join(corpus, "schemas/agent-response.json"), "utf8"));
  const lines = readJsonl(join(corpus, "instances/instances.jsonl"));
  const labels = readJsonl(join(corpus, "instances/labels.jsonl")).map((l) => JSON.parse(l).valid);
  const ajv = new Ajv().compile(schema);
  const v = new Validator(schema);
  const objects = lines.map((l) => JSON.parse(l));
  const score = (verdicts) => verdicts.reduce((n, x, i) => n + (x === labels[i] ? 1 : 0), 0);
  const cases = {
    "ajv, JSON.parse + validate": () => lines.map((l) => ajv(JSON.parse(l))),
    "agentshape isValidJson": () => lines.map((l) => v.isValidJson(l)),
    "agentshape validateJson": () => lines.map((l) => v.validateJson(l).length === 0),
    "ajv validate (objects)": () => objects.map((o) => ajv(o)),
    "agentshape isValid (objects)": () => objects.map((o) => v.isValid(o)),
    "agentshape validate (objects)": () => objects.map((o) => v.validate(o).length === 0),
  };
  results.instances = { items: lines.length };
  for (const [name, { seconds, min, max, out }] of Object.entries(timeAll(cases))) {
    const correct = score(out);
    results.instances[name] = { seconds, min, max, correct };
    console.log(`instances: ${name.padEnd(30)} ${seconds.toFixed(3)} s [${min.toFixed(3)}-${max.toFixed(3)}]  ${Math.round(lines.length / seconds)} instances/s  correct ${correct}/${lines.length}`);
  }
  const i = results.instances;
  console.log(`instances: from text, agentshape is ${(i["ajv, JSON.parse + validate"].seconds / i["agentshape isValidJson"].seconds).toFixed(2)}x ajv`);
  console.log(`instances: from text with every violation, agentshape validateJson is ${(i["ajv, JSON.parse + validate"].seconds / i["agentshape validateJson"].seconds).toFixed(2)}x ajv`);
  console.log(`instances: from objects, agentshape is ${(i["ajv validate (objects)"].seconds / i["agentshape isValid (objects)"].seconds).toFixed(2)}x ajv (${v.compiledTo})`);
  console.log(`instances: from objects, agentshape validate is ${(i["ajv validate (objects)"].seconds / i["agentshape validate (objects)"].seconds).toFixed(2)}x ajv`);
  results.instances.compiled_to = v.compiledTo;
}

console.log(JSON.stringify(results));
