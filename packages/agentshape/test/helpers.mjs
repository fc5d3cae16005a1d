// Shared helpers of the package's tests (run by scripts/test.sh with `node --test`).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * `../shared` next to the repository; from a git worktree elsewhere, the
 * main checkout's `/work/shared` (the fallback core's and the Python
 * package's tests use). `null` when neither exists.
 */
export function sharedDir() {
  for (const candidate of [join(REPO, "..", "shared"), "/work/shared"]) {
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
  }
  return null;
}

/**
 * JSON equality with key order, as the Python tests' `same_json` (which
 * also tells 1 from 1.0: a JavaScript number cannot, so neither can this).
 */
export function sameJson(a, b) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    return a === b || (Number.isNaN(a) && Number.isNaN(b));
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson(a[k], b[k]));
}

/**
 * `npm pack` the package into `dir` and unpack the tarball into
 * `dir/app/node_modules/agentshape`, as `npm install` of it would: the
 * package a user gets. Returns `{app, files}` (the tarball's paths, sorted).
 */
export function installPacked(dir) {
  const pkg = join(REPO, "packages/agentshape");
  const out = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: pkg, encoding: "utf8" }));
  const app = join(dir, "app");
  const into = join(app, "node_modules/agentshape");
  mkdirSync(into, { recursive: true });
  execFileSync("tar", ["xzf", join(dir, out[0].filename), "-C", into, "--strip-components=1"]);
  return { app, files: out[0].files.map((f) => f.path).sort() };
}

/**
 * `installPacked` into a fresh folder under `tmp` named `prefix...`,
 * with the app's `package.json` that `npm install agentshape` leaves:
 * Deno resolves a bare specifier from node_modules only for a dependency
 * its package.json declares. Returns `{dir, app}`.
 */
export function installedApp(tmp, prefix) {
  const dir = mkdtempSync(join(tmp, prefix));
  const { app } = installPacked(dir);
  writeFileSync(join(app, "package.json"), JSON.stringify({ type: "module", dependencies: { agentshape: "0.1.0" } }));
  return { dir, app };
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: undefined },
};
const STOP = { unified: "stop", raw: "stop" };

/**
 * An AI SDK mock model (`Mock`: `ai/test`'s MockLanguageModelV3 in ai 6,
 * V4 in ai 7, whose results have the same shape) whose one reply is
 * `text`, whole (`doGenerate`) or streamed in `pieces` pieces (`doStream`).
 */
export function mockModel(Mock, text, pieces = 3) {
  const size = Math.ceil(text.length / pieces);
  const deltas = [];
  for (let at = 0; at < text.length; at += size) deltas.push(text.slice(at, at + size));
  return new Mock({
    doGenerate: async () => ({ content: [{ type: "text", text }], finishReason: STOP, usage: USAGE, warnings: [] }),
    doStream: async () => ({
      stream: new ReadableStream({
        start(c) {
          c.enqueue({ type: "stream-start", warnings: [] });
          c.enqueue({ type: "text-start", id: "t" });
          for (const delta of deltas) c.enqueue({ type: "text-delta", id: "t", delta });
          c.enqueue({ type: "text-end", id: "t" });
          c.enqueue({ type: "finish", finishReason: STOP, usage: USAGE });
          c.close();
        },
      }),
    }),
  });
}
