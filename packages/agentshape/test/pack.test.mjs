// The tarball `npm pack` makes (what scripts/build-wasm.sh leaves in
// target/npm) installs and loads on its own: in a fresh folder's
// node_modules, without zod (an optional peer dependency) or any bundler.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { installPacked } from "./helpers.mjs";

test("the packed tarball installs and works without zod or a bundler", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentshape-pack-"));
  try {
    const { app, files } = installPacked(dir);
    assert.deepEqual(files, [
      "compile.js", "dist/agentshape_wasm.js", "dist/agentshape_wasm_bg.wasm", "errors.js", "index.d.ts", "index.js",
      "load.js", "package.json", "zod.js",
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
