// The AI SDK adapters against the real `ai` package (6 here, under Node
// 20; ai 7 under the newest Node in compat/ai_sdk.test.mjs): the
// `experimental_repairText` hook of `generateObject` and the `output` of
// `generateText`/`streamText`, with `ai/test`'s mock model
// (MockLanguageModelV3 in ai 6), whose reply is the kind of text models
// print: prose, a fence, a trailing comma.
import assert from "node:assert/strict";
import { test } from "node:test";
import { NoObjectGeneratedError, Output, generateObject, generateText, jsonSchema, streamText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { InvalidOutputError, NoOutputError, agentshapeOutput, agentshapeRepair } from "../index.js";
import { mockModel } from "./helpers.mjs";

const Reply = z.object({ action: z.enum(["complete", "continue"]), confidence: z.number().int() });

/** A mock model whose one reply is `text`, whole or streamed in `pieces` pieces. */
function model(text, pieces) {
  return mockModel(MockLanguageModelV3, text, pieces);
}

const MESSY = "Sure! Here it is:\n```json\n{\"action\": \"complete\", \"confidence\": 90,}\n```\nAnything else?";

test("without a repair hook the SDK fails on the reply", async () => {
  await assert.rejects(generateObject({ model: model(MESSY), schema: Reply, prompt: "p" }), (e) => NoObjectGeneratedError.isInstance(e));
});

test("experimental_repairText: agentshapeRepair() makes it parse", async () => {
  const { object } = await generateObject({
    model: model(MESSY), schema: Reply, prompt: "p", experimental_repairText: agentshapeRepair(),
  });
  assert.deepEqual(object, { action: "complete", confidence: 90 });
});

test("with the schema, the valid candidate is taken and coerced", async () => {
  const text = "Draft:\n```json\n{\"action\": \"thinking\"}\n```\nFinal:\n```json\n{action: 'continue', confidence: '7'}\n```\n```json\n{\"other\": true}\n```";
  const { object } = await generateObject({
    model: model(text), schema: Reply, prompt: "p",
    experimental_repairText: agentshapeRepair({ schema: Reply, coerce: true }),
  });
  assert.deepEqual(object, { action: "continue", confidence: 7 });
});

test("a plain JSON Schema through the SDK's jsonSchema()", async () => {
  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  const { object } = await generateObject({
    model: model("{'ok': True"), schema: jsonSchema(schema), prompt: "p",
    experimental_repairText: agentshapeRepair({ schema }),
  });
  assert.deepEqual(object, { ok: true });
});

test("nothing to repair: null, and the SDK's own error", async () => {
  await assert.rejects(
    generateObject({ model: model("I cannot do that."), schema: Reply, prompt: "p", experimental_repairText: agentshapeRepair() }),
    (e) => NoObjectGeneratedError.isInstance(e),
  );
});

// agentshapeOutput: the `output` setting of generateText/streamText (Note
// [An Output, not only a hook] in index.js); the SDK's own Output.object
// fails on the same replies.
test("generateText with Output.object fails on the reply; with agentshapeOutput it parses", async () => {
  await assert.rejects(
    generateText({ model: model(MESSY), output: Output.object({ schema: Reply }), prompt: "p" }).then((r) => r.output),
    (e) => NoObjectGeneratedError.isInstance(e),
  );
  const { output } = await generateText({ model: model(MESSY), output: agentshapeOutput({ schema: Reply }), prompt: "p" });
  assert.deepEqual(output, { action: "complete", confidence: 90 });
});

test("agentshapeOutput asks the provider for JSON with the schema, as Output.object does", async () => {
  const m = model(MESSY);
  await generateText({ model: m, output: agentshapeOutput({ schema: Reply, name: "reply", description: "the answer" }), prompt: "p" });
  const theirs = model(MESSY);
  await generateText({ model: theirs, output: Output.object({ schema: Reply, name: "reply", description: "the answer" }), prompt: "p" }).catch(() => null);
  assert.deepEqual(m.doGenerateCalls[0].responseFormat, theirs.doGenerateCalls[0].responseFormat);
  assert.equal(m.doGenerateCalls[0].responseFormat.type, "json");
});

test("the request for a nested Zod schema is the SDK's own: draft-07, every object closed", async () => {
  const Plan = z.object({
    steps: z.array(z.object({ id: z.number().int(), title: z.string(), done: z.boolean().default(false) })),
    meta: z.object({ by: z.string() }).optional(),
  });
  const reply = '{"steps": [{"id": 1, "title": "a"}]}';
  const ours = model(reply);
  const { output } = await generateText({ model: ours, output: agentshapeOutput({ schema: Plan }), prompt: "p" });
  assert.deepEqual(output, { steps: [{ id: 1, title: "a", done: false }] });
  const theirs = model(reply);
  await generateText({ model: theirs, output: Output.object({ schema: Plan }), prompt: "p" }).then((r) => r.output);
  const format = ours.doGenerateCalls[0].responseFormat;
  assert.deepEqual(format, theirs.doGenerateCalls[0].responseFormat);
  assert.equal(format.schema.properties.steps.items.additionalProperties, false);
  assert.equal(format.schema.properties.meta.additionalProperties, false);
});

test("agentshapeOutput: a Zod schema's defaults and transforms apply, its refinements judge", async () => {
  const Shouted = z.object({ action: z.string().transform((s) => s.toUpperCase()), n: z.number().default(3) });
  const { output } = await generateText({ model: model("{'action': 'go'}"), output: agentshapeOutput({ schema: Shouted }), prompt: "p" });
  assert.deepEqual(output, { action: "GO", n: 3 });
  const Even = z.object({ n: z.number().refine((n) => n % 2 === 0, "n must be even") });
  const failed = await generateText({ model: model("{n: 3}"), output: agentshapeOutput({ schema: Even }), prompt: "p" }).then((r) => r.output, (e) => e);
  assert.ok(failed instanceof InvalidOutputError, String(failed));
  assert.match(failed.message, /n must be even/);
  assert.equal(failed.text, "{n: 3}");
  assert.deepEqual(failed.extraction.value, { n: 3 });
  assert.equal(failed.finishReason, "stop");
});

test("agentshapeOutput: an invalid reply throws InvalidOutputError with the errors to send back", async () => {
  const failed = await generateText({
    model: model('{"action": "stop", "confidence": 1}'), output: agentshapeOutput({ schema: Reply }), prompt: "p",
  }).then((r) => r.output, (e) => e);
  assert.ok(failed instanceof InvalidOutputError, String(failed));
  assert.equal(failed.exitCode, 1);
  assert.equal(failed.extraction.errors[0].instance_path, "/action");
  assert.equal(typeof failed.usage, "object");
  const none = await generateText({ model: model("I cannot do that."), output: agentshapeOutput({ schema: Reply }), prompt: "p" })
    .then((r) => r.output, (e) => e);
  assert.ok(none instanceof NoOutputError, String(none));
  assert.equal(none.text, "I cannot do that.");
});

test("agentshapeOutput with coerce, and without a schema", async () => {
  const { output } = await generateText({
    model: model("```json\n{action: 'Continue', confidence: '75%'}\n```"), output: agentshapeOutput({ schema: Reply, coerce: true }), prompt: "p",
  });
  assert.deepEqual(output, { action: "continue", confidence: 75 });
  const any = await generateText({ model: model("ok: {'a': [1, 2,]}"), output: agentshapeOutput(), prompt: "p" });
  assert.deepEqual(any.output, { a: [1, 2] });
});

test("streamText with agentshapeOutput: partial values while the reply streams, the whole one at its end", async () => {
  const result = streamText({ model: model(MESSY, 6), output: agentshapeOutput({ schema: Reply }), prompt: "p" });
  const partials = [];
  for await (const p of result.partialOutputStream) partials.push(p);
  assert.ok(partials.length >= 2, JSON.stringify(partials));
  assert.deepEqual(partials.at(-1), { action: "complete", confidence: 90 });
  assert.deepEqual(await result.output, { action: "complete", confidence: 90 });
});
