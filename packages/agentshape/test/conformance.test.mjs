// The JSON Schema Test Suite through the package, as crates/core/tests/
// conformance.rs and the Python package's test_conformance.py run it: the
// required tests (not `optional/`) of draft7 and draft2020-12, the draft
// forced per directory, `http://localhost:1234/<path>` served from the
// suite's `remotes/<path>` (here handed over as `remotes`), and
// `isValid` and `validate` must both agree with every test.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";

import { SchemaError, Validator } from "../index.js";
import { sharedDir } from "./helpers.mjs";

const shared = sharedDir();
const suite = shared && join(shared, "corpus/json-schema-test-suite");
const present = suite !== null && (() => {
  try { return statSync(join(suite, "tests")).isDirectory(); } catch { return false; }
})();

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".json") ? [join(dir, d.name)] : []);
}

if (!present) {
  test("JSON Schema Test Suite", { skip: "../shared/corpus/json-schema-test-suite not found (looked next to the repository and at /work/shared)" }, () => {});
} else {
  const remotesDir = join(suite, "remotes");
  const remotes = Object.fromEntries(
    walk(remotesDir).map((p) => [`http://localhost:1234/${relative(remotesDir, p)}`, JSON.parse(readFileSync(p, "utf8"))]),
  );
  let compiledGroups = 0;
  let groups = 0;
  for (const [directory, draft] of [["draft7", "draft-07"], ["draft2020-12", "2020-12"]]) {
    const dir = join(suite, "tests", directory);
    const files = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();
    test(`${directory} has test files`, () => assert.ok(files.length > 30));
    for (const name of files) {
      test(`JSON Schema Test Suite ${directory}/${name}`, () => {
        const failures = [];
        let cases = 0;
        for (const group of JSON.parse(readFileSync(join(dir, name), "utf8"))) {
          // Each group twice: as the package compiles it (JavaScript when
          // compile.js takes the schema) and through the core alone.
          for (const codegen of [true, false]) {
            let v;
            try {
              v = new Validator(group.schema, { draft, remotes, codegen });
            } catch (e) {
              if (!(e instanceof SchemaError)) throw e;
              failures.push(`${group.description}: schema did not compile: ${e.message}`);
              break;
            }
            if (codegen) groups++;
            if (v.compiledTo === "javascript") compiledGroups++;
            for (const t of group.tests) {
              cases++;
              const fast = v.isValid(t.data);
              const errors = v.validate(t.data);
              if (fast !== t.valid || (errors.length === 0) !== t.valid) {
                failures.push(`${group.description} / ${t.description} (${v.compiledTo}): expected ${t.valid}, isValid=${fast}, errors=${JSON.stringify(errors)}`);
              }
            }
          }
        }
        assert.ok(cases > 0);
        assert.deepEqual(failures, []);
      });
    }
  }
  // Most groups exercise the compiled check, not only the core.
  test("most of the suite's schemas compile to JavaScript", () => {
    console.log(`JSON Schema Test Suite: ${compiledGroups} of ${groups} groups compiled to JavaScript`);
    assert.ok(compiledGroups > groups / 2, `${compiledGroups} of ${groups}`);
  });
}
