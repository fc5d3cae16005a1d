// Zod interop: a Zod 4 schema is accepted anywhere a schema is, converted
// with Zod's own toJSONSchema (zod is a dev dependency here, an optional
// peer dependency of the package).
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";

import { Extractor, SchemaError, Validator, agentshapeRepair, check, extract, lint, validate } from "../index.js";

const Reply = z.object({
  action: z.enum(["complete", "continue"]),
  confidence: z.number().int().min(0).max(100),
  notes: z.array(z.string()).optional(),
});

test("a Zod schema in extract, the Validator, validate, check and lint", () => {
  const e = extract("Done:\n```json\n{action: 'complete', confidence: 90,}\n```", { schema: Reply });
  assert.ok(e.valid);
  assert.deepEqual(e.value, { action: "complete", confidence: 90 });
  // Zod agrees with what agentshape accepted.
  assert.deepEqual(Reply.parse(e.value), e.value);
  const bad = extract('{"action": "stop", "confidence": 900}', { schema: Reply });
  assert.equal(bad.valid, false);
  assert.deepEqual(bad.errors.map((x) => x.instance_path), ["/action", "/confidence"]);
  const v = new Validator(Reply);
  assert.ok(v.isValid({ action: "continue", confidence: 1 }));
  // Converted for Zod's input (Note [Zod's input, not its output] in
  // zod.js): an unknown key is let through, as Zod's parse strips it.
  assert.equal(v.schema.additionalProperties, undefined);
  assert.equal(v.isValid({ action: "continue", confidence: 1, extra: true }), true);
  assert.equal(validate(Reply, { action: "continue" }).length, 1);
  assert.equal(check(Reply, { action: "continue", confidence: 1 }).ok, true);
  assert.equal(lint(Reply, "openai").provider, "openai");
  assert.ok(new Extractor({ schema: Reply, coerce: true }).extract('{"action": "Complete", "confidence": "90%"}').valid);
});

test("the candidate Zod accepts wins over an earlier one", () => {
  const text = '```json\n{"action": "draft"}\n```\nActually:\n```json\n{"action": "continue", "confidence": 5}\n```\n```json\n{"unrelated": 1}\n```';
  const e = extract(text, { schema: Reply });
  assert.ok(e.valid);
  assert.deepEqual(e.value, { action: "continue", confidence: 5 });
});

test("what Zod cannot convert, and Zod 3 schemas, are SchemaErrors", () => {
  assert.throws(() => new Validator(z.object({ when: z.date() })), SchemaError);
  const zod3Like = { _def: { typeName: "ZodString" }, safeParse: () => ({ success: true }) };
  assert.throws(() => new Validator(zod3Like), (e) => e instanceof SchemaError && /Zod 4/.test(e.message));
});

test("agentshapeRepair with a Zod schema returns JSON Zod parses", async () => {
  const repairText = agentshapeRepair({ schema: Reply, coerce: true });
  const out = await repairText({ text: "```json\n{action: 'complete', confidence: '90%',}\n```", error: null });
  assert.deepEqual(Reply.parse(JSON.parse(out)), { action: "complete", confidence: 90 });
  assert.equal(await repairText({ text: "no json at all", error: null }), null);
});

test("Zod's input is judged: a defaulted field may be absent, a transform converts, a strict object stays closed", () => {
  const Task = z.object({ title: z.string().transform((t) => t.trim()), priority: z.number().int().default(3) });
  const e = extract("```json\n{title: ' ship it '}\n```", { schema: Task });
  assert.ok(e.valid, JSON.stringify(e.errors));
  assert.deepEqual(Task.parse(e.value), { title: "ship it", priority: 3 });
  assert.equal(new Validator(Task).isValid({ title: "x", priority: "high" }), false);
  const Strict = z.strictObject({ a: z.string() });
  assert.equal(new Validator(Strict).isValid({ a: "x", b: 1 }), false);
  assert.equal(new Validator(Strict).isValid({ a: "x" }), true);
});
