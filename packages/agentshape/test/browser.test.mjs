// The package in a real browser: headless Chromium (scripts/setup.sh's
// `chromium` component) loads index.js as an ES module from a local HTTP
// server, so load.js takes its non-Node path (`fetch` of the `.wasm` next
// to it, `WebAssembly.compileStreaming`), and the page writes what the
// calls returned into its DOM, which `--dump-dom` prints.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { REPO } from "./helpers.mjs";

const PKG = join(REPO, "packages/agentshape");
const CHROMIUM = "/usr/bin/chromium";
const TYPES = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

const PAGE = `<!doctype html><meta charset="utf-8"><pre id="out">loading</pre>
<script type="module">
  const out = document.getElementById("out");
  try {
    const a = await import("/index.js");
    const e = a.extract("Sure:\\n\`\`\`json\\n{'ok': True,}\\n\`\`\`");
    const v = new a.Validator({ type: "object", required: ["ok"] });
    let kind = null;
    try { new a.Validator({ type: 12 }); } catch (x) { kind = x instanceof a.SchemaError ? x.exitCode : String(x); }
    out.textContent = "RESULT " + JSON.stringify([a.version, e.value, e.method, v.isValid(e.value), v.isValid({}), v.compiledTo, kind, a.repair("[1, 2,")]);
  } catch (x) {
    out.textContent = "FAILED " + x;
  }
</script>`;

/**
 * The page's RESULT array, served with `csp` as its Content-Security-Policy
 * header when given.
 */
async function runPage(t, csp) {
  assert.ok(existsSync(CHROMIUM), "Chromium is missing; run ./scripts/setup.sh --only chromium");
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/page.html") {
      const headers = { "content-type": "text/html" };
      if (csp) headers["content-security-policy"] = csp;
      res.writeHead(200, headers).end(PAGE);
      return;
    }
    const file = normalize(join(PKG, path));
    if (!file.startsWith(PKG) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/page.html`;
  const { stdout } = await promisify(execFile)(CHROMIUM, [
    "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=/tmp/agentshape-chromium-test",
    "--virtual-time-budget=20000", "--dump-dom", url,
  ], { timeout: 120_000, maxBuffer: 1 << 20 });
  const m = /(RESULT|FAILED) ([^<]*)/.exec(stdout);
  assert.ok(m, `no result in the page: ${stdout.slice(0, 500)}`);
  assert.equal(m[1], "RESULT", m[2]);
  return JSON.parse(m[2].replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
}

test("index.js loads and works in headless Chromium (fetch path)", async (t) => {
  const got = await runPage(t, null);
  assert.deepEqual(got, ["0.1.0", { ok: true }, "repaired", true, false, "javascript", 64, "[1,2]"]);
});

// A page whose policy forbids `eval` (no 'unsafe-eval'; WebAssembly
// allowed by 'wasm-unsafe-eval'): the schema cannot become JavaScript, so
// objects take the core's path and get the same answers.
test("under a Content-Security-Policy without unsafe-eval, objects are judged by the core", async (t) => {
  const got = await runPage(t, "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'");
  assert.deepEqual(got, ["0.1.0", { ok: true }, "repaired", true, false, "webassembly", 64, "[1,2]"]);
});
