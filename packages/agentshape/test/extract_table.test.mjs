// The same extract table as the Rust and Python conformance tests
// (crates/core/tests/data/extract/cases.jsonl), through the package.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { extract } from "../index.js";
import { REPO, sameJson } from "./helpers.mjs";

const rows = readFileSync(join(REPO, "crates/core/tests/data/extract/cases.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));

test("the shared table has every row", () => {
  assert.equal(rows.filter((r) => r.table === "repair").length, 79);
  assert.equal(rows.filter((r) => r.table === "order").length, 32);
  assert.equal(rows.filter((r) => r.table === "replaced").length, 9);
});

rows.forEach((row, i) => {
  test(`extract table ${row.table}-${i}`, () => {
    const got = extract(row.input);
    const want = row.method === "none" && row.value === null ? null : row.value;
    assert.ok(sameJson(got.value, want), `${JSON.stringify(row.input)}: ${JSON.stringify(got.value)}`);
    assert.equal(got.method, row.method);
    assert.deepEqual(got.repairs, row.repairs);
    // A found JSON `null` is a value too: `method` tells it from nothing
    // found; a row says `valid` when text was replaced (core's Note [Replaced text]).
    assert.equal(got.valid, row.valid ?? got.method !== "none");
    if (!got.valid && got.method !== "none") {
      assert.ok(got.errors.length && got.errors.every((e) => e.kind === "text"), JSON.stringify(got.errors));
    }
    // The bytes form reads the same reply.
    assert.ok(sameJson(extract(new TextEncoder().encode(row.input)).value, want));
  });
});
