// The AI SDK adapter against the current `ai` (7), which needs Node 22 or
// later: run by test/runtimes.test.mjs under this folder's Node (the
// newest, a pinned devDependency), never by `node --test
// packages/agentshape/test/` (Node 20, and ai 6: test/ai_sdk.test.mjs).
// ai 7 names the hook `repairText` (`experimental_repairText` is its
// deprecated alias) and its mock model is `MockLanguageModelV4`; it
// deprecates `generateObject` for `generateText` with an `output`, which
// `agentshapeOutput` is (Note [An Output, not only a hook] in index.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { NoObjectGeneratedError, Output, generateObject, generateText, jsonSchema, streamObject, streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";

import { InvalidOutputError, agentshapeOutput, agentshapeRepair } from "../index.js";
import { mockModel } from "../test/helpers.mjs";

const Reply = z.object({ action: z.enum(["complete", "continue"]), confidence: z.number().int() });

/** A mock model whose one reply is `text`, whole or streamed in `pieces` pieces. */
function model(text, pieces) {
  return mockModel(MockLanguageModelV4, text, pieces);
}

const MESSY = "Sure! Here it is:\n```json\n{\"action\": \"complete\", \"confidence\": 90,}\n```\nAnything else?";

test("ai 7 under the newest Node", () => {
  assert.ok(Number(process.versions.node.split(".")[0]) >= 22, process.version);
});

test("without a repair hook the SDK fails on the reply", async () => {
  await assert.rejects(generateObject({ model: model(MESSY), schema: Reply, prompt: "p" }), (e) => NoObjectGeneratedError.isInstance(e));
});

test("repairText: agentshapeRepair() makes it parse", async () => {
  const { object } = await generateObject({ model: model(MESSY), schema: Reply, prompt: "p", repairText: agentshapeRepair() });
  assert.deepEqual(object, { action: "complete", confidence: 90 });
});

test("the deprecated experimental_repairText takes it too", async () => {
  const { object } = await generateObject({
    model: model(MESSY), schema: Reply, prompt: "p", experimental_repairText: agentshapeRepair(),
  });
  assert.deepEqual(object, { action: "complete", confidence: 90 });
});

test("with the schema, the valid candidate is taken and coerced", async () => {
  const text = "Draft:\n```json\n{\"action\": \"thinking\"}\n```\nFinal:\n```json\n{action: 'continue', confidence: '7'}\n```\n```json\n{\"other\": true}\n```";
  const { object } = await generateObject({
    model: model(text), schema: Reply, prompt: "p", repairText: agentshapeRepair({ schema: Reply, coerce: true }),
  });
  assert.deepEqual(object, { action: "continue", confidence: 7 });
});

test("a plain JSON Schema through the SDK's jsonSchema()", async () => {
  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
  const { object } = await generateObject({
    model: model("{'ok': True"), schema: jsonSchema(schema), prompt: "p", repairText: agentshapeRepair({ schema }),
  });
  assert.deepEqual(object, { ok: true });
});

test("streamObject: the streamed reply is repaired at its end", async () => {
  const result = streamObject({ model: model(MESSY, 5), schema: Reply, prompt: "p", repairText: agentshapeRepair() });
  for await (const _ of result.partialObjectStream);
  assert.deepEqual(await result.object, { action: "complete", confidence: 90 });
});

test("nothing to repair: null, and the SDK's own error", async () => {
  await assert.rejects(
    generateObject({ model: model("I cannot do that."), schema: Reply, prompt: "p", repairText: agentshapeRepair() }),
    (e) => NoObjectGeneratedError.isInstance(e),
  );
});

test("generateText: Output.object fails on the reply, agentshapeOutput reads it and asks for the same format", async () => {
  const theirs = model(MESSY);
  await assert.rejects(
    generateText({ model: theirs, output: Output.object({ schema: Reply, name: "reply" }), prompt: "p" }).then((r) => r.output),
    (e) => NoObjectGeneratedError.isInstance(e),
  );
  const ours = model(MESSY);
  const { output } = await generateText({ model: ours, output: agentshapeOutput({ schema: Reply, name: "reply" }), prompt: "p" });
  assert.deepEqual(output, { action: "complete", confidence: 90 });
  assert.deepEqual(ours.doGenerateCalls[0].responseFormat, theirs.doGenerateCalls[0].responseFormat);
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

test("generateText with agentshapeOutput: an invalid reply is InvalidOutputError with its extraction", async () => {
  const failed = await generateText({
    model: model('{"action": "stop", "confidence": 1}'), output: agentshapeOutput({ schema: Reply }), prompt: "p",
  }).then((r) => r.output, (e) => e);
  assert.ok(failed instanceof InvalidOutputError, String(failed));
  assert.equal(failed.extraction.errors[0].instance_path, "/action");
});

test("streamText with agentshapeOutput: partials, then the whole value", async () => {
  const result = streamText({ model: model(MESSY, 6), output: agentshapeOutput({ schema: Reply }), prompt: "p" });
  const partials = [];
  for await (const p of result.partialOutputStream) partials.push(p);
  assert.ok(partials.length >= 2, JSON.stringify(partials));
  assert.deepEqual(await result.output, { action: "complete", confidence: 90 });
});
