// Shared helpers of the package's tests (run by scripts/test.sh with `node --test`).
import { existsSync, statSync } from "node:fs";
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
