// The adapters' declarations (index.d.ts) against the current AI SDK's
// own types (ai 7): `deno check` of this program is a test in
// test/runtimes.test.mjs. It is never run; the `@ts-expect-error` lines
// must stay errors.
import { generateObject, generateText, type OutputInterface, streamText } from "ai";
import type { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
// @deno-types="../index.d.ts"
import { agentshapeOutput, agentshapeRepair } from "../index.js";

const Reply = z.object({ action: z.enum(["complete", "continue"]), confidence: z.number().int() });
type Reply = z.infer<typeof Reply>;
declare const model: MockLanguageModelV4;

const output: OutputInterface<Reply, unknown> = agentshapeOutput<Reply>({ schema: Reply, coerce: true, name: "reply" });
const made = await generateText({ model, prompt: "p", output: agentshapeOutput<Reply>({ schema: Reply }) });
const action: "complete" | "continue" = made.output.action;
// @ts-expect-error the output is typed by the type argument
const notANumber: number = made.output.action;
const streamed = streamText({ model, prompt: "p", output: agentshapeOutput<Reply>({ schema: Reply }) });
const hooked = await generateObject({ model, prompt: "p", schema: Reply, repairText: agentshapeRepair({ schema: Reply }) });
const confidence: number = hooked.object.confidence;
// @ts-expect-error an option agentshapeOutput does not take
agentshapeOutput({ schema: Reply, retries: 2 });
export { action, confidence, notANumber, output, streamed };
