// The repair corpus (../shared/corpus/repair/cases.jsonl) through the
// package: the same scoring, groups and floors as
// crates/core/tests/it/repair_corpus/ (which prints the same table), and
// `repair()` (the jsonrepair drop-in) gives the value `extract()` finds on
// every row.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NoOutputError, extract, repair } from "../index.js";
import { sharedDir } from "./helpers.mjs";

/** The Rust test's floors (percent), per group. */
const FLOORS = { jsonrepair: 85.5, json_repair: 87.5, baml: 48.9, "ai-fixjson": 91.0 };

const shared = sharedDir();
const path = shared && join(shared, "corpus/repair/cases.jsonl");

/** serde_json's equality on parsed values: key order is free (1 and 1.0 cannot differ in JavaScript). */
function equal(a, b) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
}

if (path === null || !existsSync(path)) {
  test("repair corpus", { skip: "../shared/corpus/repair/cases.jsonl not found (looked next to the repository and at /work/shared)" }, () => {});
} else {
  const cases = readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const perGroup = new Map();
  const repairDiffers = [];
  for (const c of cases) {
    let group = c.id.slice(0, c.id.lastIndexOf("-"));
    if (group === "baml") {
      const target = c.baml_target ?? "";
      if (!(target.includes("lass(") || target.includes("map("))) group = "baml-coercion";
    }
    const e = extract(c.input);
    const got = e.method === "none" ? undefined : e.value;
    const ok = (c.repairable ?? true) ? got !== undefined && equal(got, c.expected) : got === undefined;
    const [n, a] = perGroup.get(group) ?? [0, 0];
    perGroup.set(group, [n + 1, a + (ok ? 1 : 0)]);
    let repaired;
    try {
      repaired = JSON.parse(repair(c.input));
    } catch (err) {
      if (!(err instanceof NoOutputError)) throw err;
      repaired = undefined;
    }
    if (!(repaired === undefined ? got === undefined : got !== undefined && equal(repaired, got))) repairDiffers.push(c.id);
  }
  const pct = (a, n) => (n === 0 ? 100 : (100 * a) / n);
  const lines = [`${"group".padEnd(14)} ${"cases".padStart(5)} ${"agree".padStart(6)} percent`];
  for (const [g, [n, a]] of [...perGroup].sort(([x], [y]) => (x < y ? -1 : 1))) {
    lines.push(`${g.padEnd(14)} ${String(n).padStart(5)} ${String(a).padStart(6)} ${pct(a, n).toFixed(1).padStart(6)}%`);
  }
  console.log(lines.join("\n"));

  for (const [g, floor] of Object.entries(FLOORS)) {
    test(`repair corpus agreement floor ${g}`, () => {
      const [n, a] = perGroup.get(g) ?? [0, 0];
      assert.ok(n > 0, `no ${g} rows`);
      assert.ok(pct(a, n) + 1e-9 >= floor, `${g}: ${a}/${n} = ${pct(a, n).toFixed(1)}% below the floor ${floor}%`);
    });
  }
  test("repair() gives what extract() finds on every row", () => {
    assert.deepEqual(repairDiffers, []);
  });
}
