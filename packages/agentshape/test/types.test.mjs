// index.d.ts is written by hand (index.js is the source), so it is checked
// by a TypeScript compiler: Deno's, the package's pinned devDependency
// `deno` (scripts/setup.sh's `wasm` component installs it with `npm ci`).
// Two checks: the declarations on their own, strictly (Deno, like `tsc`
// with `skipLibCheck`, reads a `.d.ts`, and anything under node_modules,
// without checking it, so they are checked as a `.ts` file of their own);
// and a TypeScript program written as a user would write it, against the
// packed tarball installed as `npm install` leaves it: it must type-check
// (its `@ts-expect-error` lines must be errors, so the types are not
// `any`) and then run in Deno, where it asserts that what the
// declarations promise is what the package returns.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { REPO, installedApp } from "./helpers.mjs";

const run = promisify(execFile);
const DENO = join(REPO, "packages/agentshape/node_modules/.bin/deno");
const MISSING = "run ./scripts/setup.sh --only wasm (it installs the package's devDependency `deno` with npm ci)";
const ENV = { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" };

/** `deno args...` in `cwd`: its output, or a failure that shows Deno's errors. */
async function deno(cwd, args) {
  assert.ok(existsSync(DENO), `deno is missing (${DENO}): ${MISSING}`);
  try {
    return await run(DENO, args, { cwd, env: ENV, timeout: 180_000, maxBuffer: 16 << 20 });
  } catch (e) {
    assert.fail(`deno ${args.join(" ")} failed:\n${e.stderr || e.message}`);
  }
}

/** A user's program: every export used with the types the declarations give. */
const PROGRAM = `
import {
  AgentshapeError, Extraction, Extractor, InputError, NoOutputError, SchemaError, Validator,
  check, checkAll, decodeLines, extract, fix, lint, parse, repair, validate, version,
  type Json, type Method, type Violation,
} from "agentshape";

// No node:assert: with a node_modules folder Deno would want @types/node there.
const assert = {
  equal(a: unknown, b: unknown): void {
    if (a !== b) throw new Error(\`\${JSON.stringify(a)} !== \${JSON.stringify(b)}\`);
  },
  deepEqual(a: unknown, b: unknown): void {
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(\`\${JSON.stringify(a)} differs from \${JSON.stringify(b)}\`);
  },
  ok(a: unknown): void {
    if (!a) throw new Error("not ok");
  },
  throws(f: () => unknown, ok: (err: unknown) => boolean): void {
    try {
      f();
    } catch (err) {
      if (ok(err)) return;
      throw err;
    }
    throw new Error("did not throw");
  },
};

const e: Extraction = extract("Sure:\\n\`\`\`json\\n{'status': 'ok', 'n': 2,}\\n\`\`\`");
const method: Method = e.method;
const repairs: string[] = e.repairs;
const code: 0 | 1 | 2 | 3 = e.exitCode;
assert.deepEqual([method, repairs, code, e.value], ["repaired", ["single_quotes", "trailing_comma"], 0, { status: "ok", n: 2 }]);
// @ts-expect-error the value may be null (nothing found)
const n: number = e.value.n;

interface Reply { status: "ok" | "failed"; n: number }
const typed = extract<Reply>('{"status": "failed", "n": 1}');
const status: "ok" | "failed" | undefined = typed.value?.status;
assert.equal(status, "failed");

const fixed: string = repair("{a: 1, 'b': [1, 2,]");
assert.equal(fixed, '{"a":1,"b":[1,2]}');
// @ts-expect-error repair answers text
const notText: object = repair("{}");
assert.throws(() => repair("no JSON here"), (err: unknown) => err instanceof NoOutputError && err.exitCode === 2);

const v = new Validator({ type: "object", required: ["status"], properties: { status: { enum: ["ok", "failed"] } } });
const violations: Violation[] = v.validate({ status: "maybe" });
assert.equal(violations[0].instance_path, "/status");
const ok: boolean = v.isValid(e.value);
assert.equal(ok, true);
assert.equal(v.isValidJson('{"status": "ok"}'), true);
const where: "javascript" | "webassembly" = v.compiledTo;
assert.equal(where, "javascript");
const coerced: { value: Json; coercions: { kind: string; instance_path: string }[] } = new Validator({
  type: "object", properties: { p: { type: "integer" } },
}).coerce({ p: "90%" });
assert.deepEqual(coerced.value, { p: 90 });
assert.equal(coerced.coercions[0].instance_path, "/p");
assert.deepEqual(v.schema, { type: "object", required: ["status"], properties: { status: { enum: ["ok", "failed"] } } });
assert.deepEqual(validate({ type: "string" }, "x"), []);
assert.throws(
  // @ts-expect-error a schema is an object, a boolean, JSON text, a Zod schema or a Validator
  () => new Validator(42),
  (err: unknown) => err instanceof SchemaError,
);
assert.throws(() => new Validator({ type: 12 }), (err: unknown) => err instanceof SchemaError && err.exitCode === 64);

const reused = new Extractor({ schema: { type: "object", required: ["a"] }, coerce: true });
assert.equal(reused.extract("{'a': 1}").valid, true);

const lines = [
  '{"type":"system","subtype":"init","session_id":"s1","model":"m"}',
  '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1"}',
];
const summary = parse(lines.join("\\n"));
const failed: boolean = summary.failed;
const skipped: number = summary.skipped_lines;
assert.deepEqual([summary.format, failed, skipped], ["claude", false, 0]);
assert.equal(decodeLines(lines).failed, false);
const streamed: boolean = (await decodeLines((async function* () { yield* lines; })())).failed;
assert.equal(streamed, false);

const checked: { ok: boolean; errors: Violation[] } = check({ type: "object" }, {});
assert.equal(checked.ok, true);
assert.equal(checkAll([{ a: 1 }, { a: 1 }]).ok, true);
const linted = lint({ type: "object", properties: { a: { type: "string", minLength: 2 } } }, "openai");
assert.equal(linted.accepted, false);
assert.throws(
  // @ts-expect-error a provider agentshape does not know
  () => lint({}, "no-such-provider"),
  (err: unknown) => err instanceof AgentshapeError && err.exitCode === 64,
);
const mended = fix({ type: "object", properties: { a: { type: "string" } } }, "openai");
assert.deepEqual(mended.mapBack({ a: "x" }), { a: "x" });

// Bytes that are not UTF-8 are a line skipped and counted, not an error.
assert.equal(parse(new Uint8Array([0xff, 0xfe]), { format: "claude" }).skipped_lines, 1);
let caught: unknown = null;
try {
  parse("{}", { maxLineBytes: -1 });
} catch (err) {
  caught = err;
}
assert.ok(caught instanceof AgentshapeError); // a bad option
assert.ok(new InputError("x") instanceof AgentshapeError);
console.log(JSON.stringify({ version, n, notText: typeof notText }));
`;

let dir;
let app;
before(() => {
  ({ dir, app } = installedApp(tmpdir(), "agentshape-types-"));
  writeFileSync(join(app, "main.ts"), PROGRAM);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("index.d.ts type-checks on its own, strictly", async () => {
  const own = join(dir, "declarations");
  mkdirSync(own);
  copyFileSync(join(REPO, "packages/agentshape/index.d.ts"), join(own, "index_d.ts"));
  await deno(own, ["check", "index_d.ts"]);
});

test("a TypeScript program type-checks against the packed tarball's types and runs as they say", async () => {
  await deno(app, ["check", "main.ts"]);
  const { stdout } = await deno(app, ["run", "--allow-read=node_modules/agentshape", "main.ts"]);
  // `n` and `notText` were the `@ts-expect-error` lines: JavaScript runs
  // them anyway (a property of null throws, so `n` is never reached when
  // the types are right; here `e.value` is an object).
  assert.deepEqual(JSON.parse(stdout), { version: "0.1.0", n: 2, notText: "string" });
});
