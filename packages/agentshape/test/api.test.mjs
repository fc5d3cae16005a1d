// The package's surface: results mirror the CLI's JSON and the Python
// package's (crates/python/tests/test_api.py, case by case), errors are the
// CLI's categories.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import * as agentshape from "../index.js";
import {
  AgentError, AgentshapeError, Decoder, Extraction, InputError, InvalidOutputError, NoOutputError,
  NotJSONError, ProfileError, SchemaError, UsageError, Validator, check, checkAll, decodeLines,
  extract, fix, lint, parse, repair, validate,
} from "../index.js";
import { REPO } from "./helpers.mjs";

const SCHEMA = {
  type: "object",
  required: ["action", "confidence"],
  properties: {
    action: { enum: ["complete", "continue"] },
    confidence: { type: "integer", minimum: 0, maximum: 100 },
  },
};
const CODE_REVIEW = JSON.parse(readFileSync(join(REPO, "schemas/code-review.json"), "utf8"));

test("extract mirrors the CLI result", () => {
  const e = extract('Sure:\n```json\n{"action": "complete", "confidence": 90,}\n```');
  assert.deepEqual(
    [e.value, e.method, e.repairs, e.coercions, e.valid, e.errors],
    [{ action: "complete", confidence: 90 }, "repaired", ["trailing_comma"], [], true, []],
  );
  assert.deepEqual(e.toJSON(), {
    value: e.value, method: "repaired", repairs: ["trailing_comma"], coercions: [], valid: true, errors: [],
  });
  assert.equal(e.exitCode, 0);
  assert.equal(e.run, undefined);
  assert.ok(e instanceof Extraction);
});

test("results read with their fields apart are whole and share nothing", () => {
  // Note [The fields apart] (crates/wasm/src/extract.rs): the fields
  // after the value are parsed once per distinct text and cached.
  const texts = [
    "{'a': True, 'é': 'ü'}", "{'a': True, 'é': 'ü'}", '```json\n{"b": [1, 2,]}\n```',
    "no json here", '{"c": 1}',
  ];
  const want = [
    [{ a: true, é: "ü" }, "repaired", ["single_quotes", "python_literal"], 0],
    [{ a: true, é: "ü" }, "repaired", ["single_quotes", "python_literal"], 0],
    [{ b: [1, 2] }, "repaired", ["trailing_comma"], 0],
    [null, "none", [], 2],
    [{ c: 1 }, "bare", [], 0],
  ];
  for (let round = 0; round < 2; round++) {
    const got = texts.map((t) => extract(t));
    assert.deepEqual(got.map((e) => [e.value, e.method, e.repairs, e.exitCode]), want);
    for (const e of got) {
      assert.deepEqual([e.coercions, e.errors, e.warnings], [[], [], []]);
      assert.deepEqual(Object.keys(e.toJSON()), ["value", "method", "repairs", "coercions", "valid", "errors"]);
    }
    // The same fields, read twice: each result has its own arrays.
    got[0].repairs.push("mine");
    got[0].errors.push("mine");
    assert.deepEqual(got[1].repairs, ["single_quotes", "python_literal"]);
    assert.deepEqual(got[1].errors, []);
  }
  // A result with errors keeps them (those fields are never shared).
  const bad = extract('{"action": "stop"}', { schema: SCHEMA });
  assert.equal(bad.valid, false);
  assert.ok(bad.errors.length >= 1);
  assert.notEqual(extract('{"action": "stop"}', { schema: SCHEMA }).errors, bad.errors);
});

for (const [name, schema] of [
  ["object", SCHEMA],
  ["JSON text", JSON.stringify(SCHEMA)],
  ["Validator", new Validator(SCHEMA)],
]) {
  test(`schema forms: ${name}`, () => {
    assert.ok(extract('{"action": "complete", "confidence": 90}', { schema }).valid);
    const bad = extract('{"action": "stop", "confidence": 900}', { schema });
    assert.equal(bad.valid, false);
    assert.equal(bad.exitCode, 1);
    assert.deepEqual(
      bad.errors.map((x) => [x.instance_path, x.schema_path]),
      [["/action", "/properties/action/enum"], ["/confidence", "/properties/confidence/maximum"]],
    );
  });
}

test("a schema picks the valid candidate and coerces", () => {
  const text = '```json\n{"action": "complete", "confidence": "90%"}\n```\n```json\n{"nope": 1}\n```';
  const e = extract(text, { schema: SCHEMA, coerce: true });
  assert.ok(e.valid);
  assert.deepEqual(e.value, { action: "complete", confidence: 90 });
  assert.deepEqual(e.coercions, [{ kind: "percent_to_number", instance_path: "/confidence", from: "90%", to: 90 }]);
});

test("several values: warnings", () => {
  const ndjson = '{"a": 1}\n{"a": 2}\n';
  let e = extract(ndjson);
  assert.deepEqual(e.value, { a: 1 });
  assert.deepEqual(e.warnings, ["2 top-level values; took the first"]);
  assert.deepEqual(e.toJSON().warnings, e.warnings);
  e = extract(ndjson, { schema: { type: "array" } });
  assert.deepEqual(e.value, [{ a: 1 }, { a: 2 }]);
  assert.deepEqual(e.repairs, ["collected_values"]);
  assert.deepEqual(e.warnings, []);
  assert.equal("warnings" in e.toJSON(), false);
});

test("errors are the CLI categories", () => {
  assert.ok(SchemaError.prototype instanceof UsageError);
  assert.ok(UsageError.prototype instanceof AgentshapeError);
  const codes = Object.fromEntries(
    ["UsageError", "SchemaError", "ProfileError", "NotJSONError", "InputError", "InvalidOutputError",
      "NoOutputError", "AgentError"].map((n) => [n, agentshape[n].exitCode]),
  );
  assert.deepEqual(codes, {
    UsageError: 64, SchemaError: 64, ProfileError: 64, NotJSONError: 64, InputError: 66,
    InvalidOutputError: 1, NoOutputError: 2, AgentError: 3,
  });
  assert.throws(() => new Validator({ type: 12 }), (e) => e instanceof SchemaError && /invalid schema: at `\/type`/.test(e.message) && e.exitCode === 64);
  assert.throws(() => new Validator('{"type": '), (e) => e instanceof SchemaError && /not valid JSON/.test(e.message));
  assert.throws(() => new Validator({ $ref: "#/$defs/missing" }), (e) => e instanceof SchemaError && /unresolvable/.test(e.message));
  assert.throws(() => new Validator(42), SchemaError);
  assert.throws(() => new Validator("/nonexistent/schema.json"), SchemaError);
  assert.throws(() => extract("x", { profile: "nope" }), (e) => e instanceof ProfileError && /unknown profile `nope`/.test(e.message));
  assert.throws(() => checkAll([{}], { contradictions: false }), (e) => e instanceof UsageError && /nothing to check/.test(e.message));
  assert.throws(() => parse("x", { format: "nope" }), (e) => e instanceof UsageError && /unknown format/.test(e.message));
  assert.throws(() => extract("x", { colour: "red" }), (e) => e instanceof UsageError && /unknown option `colour`/.test(e.message));
  assert.throws(() => new Validator({}, { draft: "9" }), UsageError);
});

test("the agents' own session files are formats too", () => {
  const line = JSON.stringify({
    type: "assistant", uuid: "u1", sessionId: "s-js", isSidechain: false,
    timestamp: "2026-11-26T10:00:00Z", cwd: "/p", version: "2.1.30",
    message: { id: "m1", role: "assistant", model: "claude-sonnet-4-5",
      content: [{ type: "text", text: '{"a": 1}' }], usage: { input_tokens: 3, output_tokens: 2 } },
  });
  for (const format of ["claude_session", "claude-session", "auto"]) {
    const s = parse(line + "\n", { format });
    assert.equal(s.format, "claude-session", format);
    assert.equal(s.session.tokens.output, 2);
  }
  assert.deepEqual(extract(line + "\n", { format: "claude-session" }).value, { a: 1 });
  for (const format of ["codex_rollout", "codex-rollout", "gemini_chat", "gemini-chat"]) parse("", { format });
});

test("raiseForOutcome", () => {
  assert.deepEqual(extract('{"a": 1}').raiseForOutcome().value, { a: 1 });
  assert.throws(() => extract("no json here").raiseForOutcome(), (e) => e instanceof NoOutputError && e.exitCode === 2);
  assert.throws(() => extract('{"action": "x", "confidence": 1}', { schema: SCHEMA }).raiseForOutcome(),
    (e) => e instanceof InvalidOutputError && /\/action/.test(e.message));
});

test("Validator: validate, isValid and JSON text", () => {
  const v = new Validator(SCHEMA);
  assert.ok(v.isValid({ action: "complete", confidence: 5 }));
  const errs = v.validate({ action: "complete" });
  assert.deepEqual(errs, [{ instance_path: "", schema_path: "/required", message: '"confidence" is a required property' }]);
  assert.deepEqual(v.validateJson('{"action": "complete", "confidence": 5}'), []);
  assert.deepEqual(v.validateJson(new TextEncoder().encode('{"action": "complete"}')), errs);
  assert.throws(() => v.validateJson("{nope"), (e) => e instanceof InputError && /not JSON/.test(e.message));
  assert.throws(() => v.isValidJson("{nope"), InputError);
  // A number JSON text holds but no 64-bit type does: reported, never valid.
  const big = v.validateJson('{"action": "complete", "confidence": 123456789012345678901234567890}');
  assert.ok(big.some((e) => e.kind === "number"));
  const many = Array.from({ length: 201 }, (_, k) => v.validate({ action: "complete", confidence: k - 1 }).length === 0);
  assert.deepEqual(many, Array.from({ length: 201 }, (_, k) => k - 1 >= 0 && k - 1 <= 100));
  assert.deepEqual(validate(SCHEMA, { action: "complete", confidence: 1 }), []);
  assert.equal(validate(SCHEMA, {}).length, 2);
  assert.deepEqual(new Validator({}).coerce({ a: 1 }), { value: { a: 1 }, coercions: [] });
  assert.deepEqual(new Validator(SCHEMA).coerce({ action: "Complete", confidence: "90%" }).value, { action: "complete", confidence: 90 });
  assert.deepEqual(v.schema, SCHEMA);
});

test("a schema object used again is compiled again when it changed", () => {
  const schema = { type: "object", required: ["a"] };
  assert.equal(validate(schema, {}).length, 1);
  schema.required = [];
  assert.deepEqual(validate(schema, {}), []);
});

test("invariants are violations with their rule", () => {
  const v = new Validator(CODE_REVIEW);
  const doc = {
    findings: [{ severity: "blocker", file: "a.rs", line: 1, description: "x", raisedBy: "security" }],
    counts: { blocker: 2, major: 0, minor: 0, nit: 0 },
  };
  const errs = v.validate(doc);
  assert.ok(errs.length && errs.every((e) => e.kind === "invariant" && e.rule));
  assert.equal(v.isValid(doc), false);
  assert.deepEqual(check(CODE_REVIEW, doc), { ok: false, errors: errs });
  doc.counts.blocker = 1;
  assert.deepEqual(v.validate(doc), []);
  assert.ok(v.isValid(doc));
  assert.deepEqual(check(CODE_REVIEW, doc), { ok: true, errors: [] });
});

test("profiles by name and as a file's text", () => {
  const text = "Checked jellyfin.\n[EVENT:critical:jellyfin] HTTP 502\n[MEMORY:timing:jellyfin] slow";
  const e = extract(text, { profile: "claude-ops" });
  assert.equal(e.method, "markers");
  assert.equal(e.value.events[0].service, "jellyfin");
  const mine = { toml: 'schema = "s.json"\n', schemas: { "s.json": SCHEMA } };
  assert.ok(extract('{"action": "complete", "confidence": 1}', { profile: mine }).valid);
  assert.equal(extract('{"action": "x"}', { profile: mine }).valid, false);
  assert.throws(() => extract("{}", { profile: { toml: 'schema = "gone.json"\n' } }), ProfileError);
});

test("parse, Decoder and decodeLines agree on every fixture", async () => {
  const dir = join(REPO, "crates/core/tests/fixtures/decode");
  const files = readdirSync(dir).sort();
  assert.ok(files.length);
  for (const name of files) {
    const data = new Uint8Array(readFileSync(join(dir, name)));
    const whole = parse(data);
    const d = new Decoder();
    const events = [];
    for (let i = 0; i < data.length; i += 7) events.push(...d.feed(data.subarray(i, i + 7)));
    const chunked = d.finish();
    assert.deepEqual({ ...whole }, { ...chunked }, name);
    assert.deepEqual({ ...parse(new TextDecoder().decode(data)) }, { ...whole }, name);
    assert.ok(events.every((e) => "type" in e));
    assert.throws(() => d.finish(), UsageError);
    const lines = new TextDecoder().decode(data).split("\n");
    if (lines.at(-1) === "") lines.pop();
    assert.deepEqual({ ...decodeLines(lines) }, { ...whole }, name);
    async function* stream() { yield* lines; }
    assert.deepEqual({ ...(await decodeLines(stream())) }, { ...whole }, name);
  }
});

test("parse a Claude transcript", () => {
  const lines = [
    { type: "system", subtype: "init", session_id: "abc", model: "claude-x" },
    { type: "assistant", message: { content: [{ type: "text", text: "done" }] } },
    { type: "result", subtype: "success", is_error: true, result: "Rate limit reached (429)", num_turns: 2 },
  ];
  const text = lines.map((x) => JSON.stringify(x)).join("\n") + "\nnot json\n";
  const s = parse(text);
  assert.deepEqual(
    [s.format, s.session_id, s.model, s.output, s.saw_result, s.error_category, s.skipped_lines],
    ["claude", "abc", "claude-x", "done", true, "rate_limit", 1],
  );
  assert.ok(s.failed);
  assert.equal(s.result.num_turns, 2);
  const e = extract(text, { format: "auto" });
  assert.equal(e.exitCode, 3);
  assert.equal(e.run.error_category, "rate_limit");
  assert.throws(() => e.raiseForOutcome(), (x) => x instanceof AgentError && /Rate limit/.test(x.message));
});

test("checkAll: invariants and contradictions", () => {
  const review = (sev, blockers) => ({
    findings: [{ severity: sev, file: "src/a.rs", line: 10, description: "path traversal in join", raisedBy: "security" }],
    counts: { blocker: blockers, major: Number(sev === "major"), minor: 0, nit: 0 },
  });
  const r = checkAll({ sec: review("blocker", 1), conv: review("major", 1) }, { schema: CODE_REVIEW });
  assert.deepEqual(r.sources, ["sec", "conv"]);
  assert.equal(r.ok, false);
  assert.deepEqual(r.errors.sec, []);
  assert.deepEqual(r.errors.conv.map((e) => e.kind), ["invariant"]);
  assert.equal(r.contradictions.length, 1);
  const [c] = r.contradictions;
  assert.equal(c.kind, "contradiction");
  assert.deepEqual(c.key, { file: "src/a.rs", line: 10 });
  assert.deepEqual(c.values.map((v) => v.value), ["blocker", "major"]);
  assert.equal(r.contradictionReport.items_seen, 2);
  const clean = checkAll([review("major", 0), review("major", 0)], { profile: "code-review" });
  assert.ok(clean.ok);
  assert.deepEqual(clean.contradictions, []);
  const ex = [review("nit", 0), review("minor", 0)].map((x) => extract(JSON.stringify(x)));
  assert.equal(checkAll(ex, { contradictions: true }).contradictions.length, 1);
  assert.throws(() => checkAll([{}], { items: "findings" }), UsageError);
});

test("lint and fix, with answers mapped back", () => {
  const schema = {
    type: "object",
    properties: { a: { type: "string", minLength: 2 }, b: { type: "integer" } },
    required: ["a"],
  };
  const linted = lint(schema, "openai");
  assert.equal(linted.provider, "openai");
  assert.equal(linted.accepted, false);
  assert.ok(linted.findings.some((f) => f.severity === "error"));
  assert.equal(lint(schema, "gemini").provider, "gemini");
  const fixed = fix(schema, "openai");
  assert.deepEqual(fixed.findings, []);
  assert.equal(fixed.schema.additionalProperties, false);
  assert.ok(fixed.changes.length && fixed.findings_before.length);
  assert.deepEqual(fixed.mapBack({ a: "xy", b: null }), { a: "xy" });
  assert.ok(lint(fixed.schema, "openai").accepted);
  assert.throws(() => lint(schema, "nope"), UsageError);
});

test("repair is a drop-in for jsonrepair", async () => {
  const { jsonrepair } = await import("jsonrepair");
  for (const text of ["{a: 1, 'b': [1, 2,],}", "[1, 2", '{"s": "cut', "{'ok': True, 'n': None}"]) {
    assert.deepEqual(JSON.parse(repair(text)), JSON.parse(jsonrepair(text)), text);
  }
  assert.throws(() => repair("just words"), NoOutputError);
});

test("wrong argument types are TypeErrors or NotJSONErrors", () => {
  assert.throws(() => extract(42), TypeError);
  assert.throws(() => parse(42), TypeError);
  assert.throws(() => new Decoder().feed(42), TypeError);
  assert.throws(() => decodeLines(42), TypeError);
  // Through the core (`codegen: false`) every value is read.
  const v = new Validator({ type: "array" }, { codegen: false });
  for (const bad of [NaN, [1, Infinity], { a: 10n }, undefined, () => 1]) {
    assert.throws(() => v.validate(bad), NotJSONError, String(bad));
  }
  const cyclic = {};
  cyclic.self = cyclic;
  assert.throws(() => v.validate(cyclic), NotJSONError);
  // The compiled check reads what the schema reads (Note [Validators
  // compiled to JavaScript]): a value JSON cannot hold where it looks is
  // the core's NotJSONError; the errors of an invalid instance come from
  // the core, which reads everything; what a valid instance holds where
  // the schema does not look is not read.
  const fast = new Validator({ type: "array" });
  assert.equal(fast.compiledTo, "javascript");
  for (const bad of [NaN, 10n, undefined, () => 1, { a: 10n }, cyclic]) {
    assert.throws(() => fast.validate(bad), NotJSONError, String(bad));
  }
  assert.throws(() => fast.isValid(NaN), NotJSONError);
  assert.equal(fast.isValid({ a: 10n }), false);
  assert.deepEqual(fast.validate([1, Infinity]), []);
  assert.throws(() => checkAll([cyclic], { contradictions: true }), NotJSONError);
});

test("index.d.ts declares every export", () => {
  const dts = readFileSync(join(REPO, "packages/agentshape/index.d.ts"), "utf8");
  for (const name of Object.keys(agentshape)) {
    assert.match(dts, new RegExp(`export declare (class|function|const) ${name}\\b`), name);
  }
});

test("options: unknown ones are refused even when false; a profile alone reaches the AI SDK hook", async () => {
  assert.throws(() => extract("{}", { colour: false }), UsageError);
  const hook = agentshape.agentshapeRepair({ profile: "claude-ops" });
  const out = await hook({ text: "Checked.\n[EVENT:critical:jellyfin] HTTP 502", error: null });
  assert.equal(JSON.parse(out).events[0].service, "jellyfin");
});

test("checkAll leaves the caller's values as they were", () => {
  const e = extract('{"findings": []}');
  const values = { a: e, b: { findings: [] } };
  assert.ok(checkAll(values).ok);
  assert.equal(values.a, e);
});
