// The package in Deno, Bun and the newest Node, not only Node 20 and
// browsers (issue 43): the packed tarball is installed into a fresh folder
// as `npm install` would, and one smoke script (`smoke` below, written out
// with its inputs) runs in Node, Deno, Bun and the newest Node, the
// binaries of pinned devDependencies: `deno` and `bun` of the package,
// `node` of packages/agentshape/compat (scripts/setup.sh's `wasm`
// component installs them with `npm ci`). Deno gets only
// `--allow-read=node_modules/agentshape` (Note [Reading the .wasm] in
// load.js). The script asserts as it goes and prints one JSON line: the
// others' must be Node's, byte for byte. Then the package's own test files
// run under `bun test` and under the newest Node's `node --test` as they
// are, and the newest Node runs compat/ai_sdk.test.mjs (ai 7, which needs
// Node 22 or later).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { REPO, installedApp } from "./helpers.mjs";

const run = promisify(execFile);
const PKG = join(REPO, "packages/agentshape");
const MISSING = "run ./scripts/setup.sh --only wasm (it installs the package's devDependencies `deno` and `bun`, and compat's `node`, with npm ci)";
/** Where each runtime's binary is, the folder whose package.json pins it. */
const HOMES = { deno: PKG, bun: PKG, node: join(PKG, "compat") };
/** No update check (Deno), no crash reports (Bun): nothing but the files. */
const ENV = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" };

/** The command line of each runtime, run in the app folder. */
const RUNTIMES = {
  deno: ["run", "--allow-read=node_modules/agentshape", "smoke.mjs"],
  bun: ["run", "smoke.mjs"],
  node: ["smoke.mjs"],
};

/**
 * The calls every runtime makes: `a` is the package, `load` its load.js
 * (for the trap), `assert` node:assert/strict (Deno and Bun have it too),
 * `input` the files the test read. Written out with `Function.toString`,
 * so it may use nothing from this file's scope.
 */
async function smoke(a, load, assert, input) {
  const SCHEMA = {
    type: "object",
    required: ["action", "confidence"],
    properties: { action: { enum: ["complete", "continue"] }, confidence: { type: "integer", minimum: 0, maximum: 100 } },
  };
  const out = { version: a.version };

  const fenced = a.extract('Done.\n```json\n{"action": "complete", "confidence": 90}\n```');
  assert.equal(fenced.method, "fenced");
  const repaired = a.extract("Sure:\n```json\n{'action': 'complete', 'confidence': 90,}\n```");
  assert.equal(repaired.method, "repaired");
  assert.ok(repaired.repairs.length > 0);
  const valid = a.extract('{"action": "continue", "confidence": "75%"}', { schema: SCHEMA, coerce: true });
  assert.equal(valid.exitCode, 0);
  const invalid = a.extract('{"action": "stop", "confidence": 900}', { schema: SCHEMA });
  assert.equal(invalid.exitCode, 1);
  assert.equal(invalid.errors.length, 2);
  assert.throws(() => invalid.raiseForOutcome(), a.InvalidOutputError);
  out.extract = [fenced, repaired, valid, invalid].map((e) => e.toJSON());

  out.repair = ["{a: 1, 'b': [1, 2,],}", "[1, 2", "{'ok': True, 'n': None}"].map((t) => a.repair(t));
  assert.equal(out.repair[0], '{"a":1,"b":[1,2]}');
  assert.throws(() => a.repair("just words"), a.NoOutputError);

  const v = new a.Validator(SCHEMA);
  assert.equal(v.isValid({ action: "complete", confidence: 5 }), true);
  assert.equal(v.isValid({ action: "complete" }), false);
  out.validate = [v.validate({ action: "complete" }), v.validate({ action: "x", confidence: -1 }), v.validateJson('{"action": "complete", "confidence": 5}')];
  assert.deepEqual(out.validate[2], []);

  const runs = {};
  for (const [name, text] of Object.entries(input.transcripts)) {
    const s = a.parse(text);
    const lines = text.split("\n").filter((l) => l !== "");
    assert.deepEqual({ ...a.decodeLines(lines) }, { ...s }, name);
    async function* stream() { yield* lines; }
    assert.deepEqual({ ...(await a.decodeLines(stream())) }, { ...s }, name);
    const e = a.extract(text, { format: "auto" });
    runs[name] = { summary: { ...s }, failed: s.failed, extract: e.toJSON(), exitCode: e.exitCode };
  }
  assert.equal(runs["rate-limit-429.ndjson"].failed, true);
  assert.equal(runs["rate-limit-429.ndjson"].summary.error_category, "rate_limit");
  assert.equal(runs["rate-limit-429.ndjson"].exitCode, 3);
  assert.equal(runs["healthy-structured.ndjson"].failed, false);
  out.parse = runs;

  const review = (blockers) => ({
    findings: [{ severity: "blocker", file: "a.rs", line: 1, description: "x", raisedBy: "security" }],
    counts: { blocker: blockers, major: 0, minor: 0, nit: 0 },
  });
  out.check = [a.check(input.codeReview, review(2)), a.check(input.codeReview, review(1))];
  assert.equal(out.check[0].ok, false);
  assert.ok(out.check[0].errors.every((e) => e.kind === "invariant"));
  assert.deepEqual(out.check[1], { ok: true, errors: [] });

  const loose = { type: "object", properties: { a: { type: "string", minLength: 2 }, b: { type: "integer" } }, required: ["a"] };
  const linted = a.lint(loose, "openai");
  assert.equal(linted.accepted, false);
  const fixed = a.fix(loose, "openai");
  assert.deepEqual(fixed.findings, []);
  assert.ok(a.lint(fixed.schema, "openai").accepted);
  out.lint = linted;
  out.fix = { ...fixed, mapBack: fixed.mapBack({ a: "xy", b: null }) };
  assert.deepEqual(out.fix.mapBack, { a: "xy" });

  out.errors = [{ type: 12 }, '{"type": ', { $ref: "#/$defs/missing" }].map((schema) => {
    try {
      new a.Validator(schema);
      return null;
    } catch (e) {
      assert.ok(e instanceof a.SchemaError && e instanceof a.UsageError && e instanceof a.AgentshapeError);
      return [e.name, e.exitCode, a.SchemaError.exitCode, e.message];
    }
  });
  assert.equal(out.errors[0][1], 64);

  await load.ready();
  const before = load.raw();
  const kept = new a.Validator({ type: "object", required: ["a"] });
  assert.throws(() => load.call((b) => b.__trapForTests()), (e) => e instanceof a.InternalError && e.exitCode === 70 && e.cause instanceof WebAssembly.RuntimeError);
  assert.notEqual(load.raw(), before);
  out.afterTrap = [a.extract("{'a': 1,}").value, kept.isValid({ a: 1 }), kept.isValid({})];
  assert.deepEqual(out.afterTrap, [{ a: 1 }, true, false]);
  return out;
}

let dir;
let app;
before(() => {
  ({ dir, app } = installedApp(tmpdir(), "agentshape-runtimes-"));
  const transcripts = {};
  for (const name of ["healthy-structured.ndjson", "rate-limit-429.ndjson", "codex-exec.jsonl"]) {
    transcripts[name] = readFileSync(join(REPO, "examples", name), "utf8");
  }
  const codeReview = JSON.parse(readFileSync(join(REPO, "schemas/code-review.json"), "utf8"));
  // A module, not a file the script reads: Deno needs no permission for it.
  writeFileSync(join(app, "input.mjs"), `export default ${JSON.stringify({ transcripts, codeReview })};\n`);
  writeFileSync(join(app, "smoke.mjs"), [
    'import * as a from "agentshape";',
    'import * as load from "./node_modules/agentshape/load.js";',
    'import assert from "node:assert/strict";',
    'import input from "./input.mjs";',
    `const smoke = ${smoke.toString()};`,
    "console.log(JSON.stringify(await smoke(a, load, assert, input)));",
    "",
  ].join("\n"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The script's one output line in `cmd`, or a failure with its stderr. */
async function smokeIn(cmd, args) {
  const { stdout } = await run(cmd, args, { cwd: app, env: ENV, timeout: 120_000, maxBuffer: 16 << 20 });
  const lines = stdout.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `${cmd} printed ${lines.length} lines`);
  return lines[0];
}

let inNode;
test("the smoke script passes in Node", async () => {
  inNode = await smokeIn(process.execPath, ["smoke.mjs"]);
  assert.ok(JSON.parse(inNode).version);
});

// The scheme decides, not a `process` global (which a runtime may lack, or
// a browser bundle define): without one, Node still reads the file (its
// `fetch` cannot; Note [Reading the .wasm] in load.js).
test("the .wasm is read by its URL's scheme, without a process global", async () => {
  writeFileSync(join(app, "no_process.mjs"), [
    "delete globalThis.process;",
    'const a = await import("agentshape");',
    "console.log(JSON.stringify([typeof process, a.extract(\"{'a': 1,}\").value]));",
    "",
  ].join("\n"));
  assert.equal(await smokeIn(process.execPath, ["no_process.mjs"]), '["undefined",{"a":1}]');
});

/**
 * The runtime's binary, checked to be the pinned devDependency's version;
 * a missing or broken one fails the test, naming the set-up command.
 */
async function binary(name) {
  const bin = join(HOMES[name], "node_modules/.bin", name);
  assert.ok(existsSync(bin), `${name} is missing (${bin}): ${MISSING}`);
  const pinned = JSON.parse(readFileSync(join(HOMES[name], "package.json"), "utf8")).devDependencies[name];
  let version;
  try {
    ({ stdout: version } = await run(bin, ["--version"], { env: ENV }));
  } catch (e) {
    assert.fail(`\`${name} --version\` failed (${e.message.split("\n")[0]}): ${MISSING}`);
  }
  assert.ok(version.includes(pinned), `${name} --version says ${JSON.stringify(version.trim())}, the pin is ${pinned}: ${MISSING}`);
  return bin;
}

for (const [name, args] of Object.entries(RUNTIMES)) {
  const which = name === "node" ? "the newest Node" : name;
  test(`the same calls in ${which} give Node ${process.versions.node.split(".")[0]}'s results, byte for byte`, async () => {
    const got = await smokeIn(await binary(name), args);
    assert.ok(inNode, "the Node run failed");
    assert.equal(got, inNode);
  });
}

// The package's own test files under `bun test` and `deno test`,
// unchanged (both implement node:test's `test`, `before` and `after`): all
// but this one, which would start itself again, and browser.test.mjs, which
// tests Chromium (elsewhere it would only serve the files, and its Chromium
// profile folder could meet the one `node --test` starts at the same time).
// Bun stops a test after 5 s by default: the 100 MB string in
// hostile.test.mjs takes longer on a busy machine. Deno runs them with
// every permission (they start processes, read the repository) and
// without its type check (it would want @types/node for the JavaScript),
// and not pack.test.mjs, which starts `process.execPath` (Deno there) as
// npm's Node in a folder without a package.json.
/**
 * The package's own test files another runtime runs: all but this one,
 * which would start itself again, and browser.test.mjs (below).
 */
function ownTests(...also) {
  const skip = ["runtimes.test.mjs", "browser.test.mjs", ...also];
  const files = readdirSync(join(PKG, "test")).filter((f) => f.endsWith(".test.mjs") && !skip.includes(f)).sort();
  assert.ok(files.length >= 8, files.join(" "));
  return files.map((f) => `./test/${f}`);
}

test("the package's own tests pass under bun test", async () => {
  const bin = await binary("bun");
  const files = ownTests();
  let out;
  try {
    out = await run(bin, ["test", "--timeout", "120000", ...files], { cwd: PKG, env: ENV, timeout: 600_000, maxBuffer: 64 << 20 });
  } catch (e) {
    assert.fail(`bun test failed:\n${e.stderr?.split("\n").filter((l) => !l.startsWith("(pass)")).join("\n") ?? e.message}`);
  }
  // Bun's summary goes to stderr: " N pass", " 0 fail", "Ran N tests across M files".
  const ran = /Ran (\d+) tests across (\d+) files/.exec(out.stderr);
  assert.ok(ran, out.stderr.slice(-2000));
  assert.equal(Number(ran[2]), files.length);
  assert.match(out.stderr, /^ 0 fail$/m);
});

test("the package's own tests pass under deno test", async () => {
  const bin = await binary("deno");
  const files = ownTests("pack.test.mjs");
  let out;
  try {
    out = await run(bin, ["test", "-A", "--no-check", ...files], { cwd: PKG, env: ENV, timeout: 600_000, maxBuffer: 64 << 20 });
  } catch (e) {
    assert.fail(`deno test failed:\n${(e.stdout ?? "").split("\n").filter((l) => /FAILED|=>|error/i.test(l)).join("\n") || e.message}`);
  }
  const summary = /^ok \| (\d+) passed \| 0 failed/m.exec(out.stdout);
  assert.ok(summary, out.stdout.slice(-2000));
  assert.ok(Number(summary[1]) >= files.length, summary[0]);
});

/** `node --test` of `files` (from the package's folder) in the newest Node: its closing counts, or a failure with what failed. */
async function newestNodeTests(files) {
  const bin = await binary("node");
  let out;
  try {
    // Without NODE_TEST_CONTEXT, which `node --test` gives the files it
    // runs: with it, this run would report to its parent's protocol.
    const { NODE_TEST_CONTEXT: _, ...env } = ENV;
    out = await run(bin, ["--test", "--test-reporter=tap", ...files], { cwd: PKG, env, timeout: 600_000, maxBuffer: 64 << 20 });
  } catch (e) {
    const failed = (e.stdout ?? "").split("\n").filter((l) => /^\s*not ok /.test(l) || /^\s+(error|location):/.test(l));
    assert.fail(`node --test in ${bin} failed:\n${failed.join("\n") || e.message}`);
  }
  const count = (what) => Number(new RegExp(`^# ${what} (\\d+)$`, "m").exec(out.stdout)?.[1]);
  return { pass: count("pass"), fail: count("fail") };
}

// The same files unchanged in the newest Node (Node 20 runs them as the
// package's own tests), and the adapters against the current AI SDK.
test("the package's own tests pass in the newest Node", async () => {
  const files = ownTests();
  const { pass, fail } = await newestNodeTests(files);
  assert.equal(fail, 0);
  assert.ok(pass >= files.length, `${pass} tests passed`);
});

test("the AI SDK adapters pass against the current ai (7) in the newest Node", async () => {
  const { pass, fail } = await newestNodeTests(["./compat/ai_sdk.test.mjs"]);
  assert.equal(fail, 0);
  assert.ok(pass >= 10, `${pass} tests passed`);
});

// The declarations of the adapters (index.d.ts) against ai 7's own types:
// `agentshapeOutput` is its `Output`, `agentshapeRepair` its `repairText`
// (compat/ai_sdk_types.ts, with `@ts-expect-error` lines that must stay
// errors).
test("the adapters' types fit the current AI SDK's, checked by deno check", async () => {
  const bin = await binary("deno");
  try {
    await run(bin, ["check", "ai_sdk_types.ts"], { cwd: join(PKG, "compat"), env: ENV, timeout: 180_000, maxBuffer: 16 << 20 });
  } catch (e) {
    assert.fail(`deno check compat/ai_sdk_types.ts failed:\n${e.stderr || e.message}`);
  }
});
