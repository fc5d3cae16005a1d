// The tarball `npm pack` makes (what scripts/build-wasm.sh leaves in
// target/npm) installs and loads on its own: in a fresh folder's
// node_modules, without zod (an optional peer dependency) or any bundler.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { installPacked } from "./helpers.mjs";

// One tarball, installed once, for both tests.
let dir;
let app;
let files;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "agentshape-pack-"));
  ({ app, files } = installPacked(dir));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("the packed tarball installs and works without zod or a bundler", () => {
  assert.deepEqual(files, [
    "README.md", "compile.js", "dist/agentshape_wasm.js", "dist/agentshape_wasm_bg.wasm", "errors.js", "index.d.ts",
    "index.js", "load.js", "package.json", "zod.js",
  ]);
  writeFileSync(join(app, "main.mjs"), `
    import { extract, Validator, version } from "agentshape";
    const e = extract("Sure: \\u0060\\u0060\\u0060json\\n{'ok': True,}\\n\\u0060\\u0060\\u0060");
    const v = new Validator({ type: "object", required: ["ok"] });
    console.log(JSON.stringify([version, e.value, v.isValid(e.value), v.compiledTo]));
  `);
  assert.deepEqual(readdirSync(join(app, "node_modules")), ["agentshape"]);
  const got = JSON.parse(execFileSync(process.execPath, ["main.mjs"], { cwd: app, encoding: "utf8" }));
  assert.deepEqual(got, ["0.1.0", { ok: true }, true, "javascript"]);
});

/**
 * The package README's quick start: its first `js` block and the `text`
 * block after it, which says what the example prints.
 */
function quickStart(readme) {
  const from = readme.indexOf("## Quick start");
  assert.ok(from >= 0, "the README has a Quick start section");
  const block = (lang, at) => {
    const open = readme.indexOf("```" + lang + "\n", at);
    assert.ok(open >= 0, `a ${lang} block after the Quick start heading`);
    const start = open + lang.length + 4;
    const end = readme.indexOf("\n```", start);
    return { text: readme.slice(start, end + 1), end };
  };
  const code = block("js", from);
  return { code: code.text, output: block("text", code.end).text };
}

test("the README's quick start prints what the README says, from the packed tarball", () => {
  // The README read from the tarball: what a user of the package sees.
  const readme = readFileSync(join(app, "node_modules/agentshape/README.md"), "utf8");
  const { code, output } = quickStart(readme);
  assert.match(code, /from "agentshape"/);
  writeFileSync(join(app, "quick_start.mjs"), code);
  // Run by Node, whose `console.log` the README shows (this file also
  // runs under `bun test`, runtimes.test.mjs, where `process.execPath`
  // is Bun, which prints objects its own way).
  const node = process.versions.bun === undefined ? process.execPath : "node";
  const got = execFileSync(node, ["quick_start.mjs"], { cwd: app, encoding: "utf8" });
  assert.equal(got, output);
});
