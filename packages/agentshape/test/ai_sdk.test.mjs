// The AI SDK adapter against the real `ai` package: `generateObject` with
// `ai/test`'s mock model (MockLanguageModelV3 in ai 6), whose reply is the
// kind of text models print: prose, a fence, a trailing comma.
import assert from "node:assert/strict";
import { test } from "node:test";
import { NoObjectGeneratedError, generateObject, jsonSchema } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { agentshapeRepair } from "../index.js";

const Reply = z.object({ action: z.enum(["complete", "continue"]), confidence: z.number().int() });

function model(text) {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 20, text: 20, reasoning: undefined },
      },
      warnings: [],
    }),
  });
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
