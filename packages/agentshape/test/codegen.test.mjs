// Validators compiled to JavaScript (Note [Validators compiled to
// JavaScript] in compile.js): which schemas compile, and that the compiled
// check answers every instance as the core does (`codegen: false`), on a
// table of edge cases and on every schema and instance of JSONSchemaBench.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { NotJSONError, UsageError, Validator, validate } from "../index.js";
import { compileCheck } from "../compile.js";
import { sharedDir } from "./helpers.mjs";

/** What `f()` gives: its value, or the class name of what it threw. */
function outcome(f) {
  try {
    return f();
  } catch (e) {
    return `throws ${e.constructor.name}`;
  }
}

/**
 * The compiled validator and the core's agree on `instance`, for both
 * `isValid` and `validate` (empty or not); returns the compiled answer.
 */
function agree(fast, core, instance, label) {
  const a = outcome(() => fast.isValid(instance));
  const b = outcome(() => core.isValid(instance));
  assert.equal(a, b, `${label}: isValid ${a} (compiled) vs ${b} (core)`);
  const c = outcome(() => fast.validate(instance).length === 0);
  const d = outcome(() => core.validate(instance).length === 0);
  assert.equal(c, d, `${label}: validate ${c} (compiled) vs ${d} (core)`);
  assert.equal(c, a, `${label}: validate and isValid disagree`);
  return a;
}

/** A name for an instance in a message (some cannot be made a string). */
function label(x) {
  try {
    return typeof x === "bigint" ? `${x}n` : JSON.stringify(x) ?? String(x);
  } catch {
    return Object.prototype.toString.call(x);
  }
}

function pair(schema, options = {}) {
  const fast = new Validator(schema, options);
  assert.equal(fast.compiledTo, "javascript", `expected ${JSON.stringify(schema)} to compile to JavaScript`);
  return [fast, new Validator(schema, { ...options, codegen: false })];
}

test("the agent response schema, a Zod-shaped one and ordinary shapes compile to JavaScript", () => {
  for (const schema of [
    { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false },
    { $schema: "http://json-schema.org/draft-07/schema#", definitions: { n: { type: "integer" } }, items: { $ref: "#/definitions/n" } },
    { $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" },
    { anyOf: [{ type: "string", maxLength: 3 }, { type: "number", minimum: 0 }] },
    { type: "array", prefixItems: [{ const: 1 }], items: false, uniqueItems: true, contains: { type: "null" }, minContains: 0 },
    { if: { properties: { a: { const: 1 } } }, then: { required: ["b"] }, else: { required: ["c"] } },
  ]) {
    assert.equal(new Validator(schema).compiledTo, "javascript", JSON.stringify(schema));
  }
});

test("schemas whose meaning is not restated in JavaScript stay with the core", () => {
  const declined = [
    [{ unevaluatedProperties: false }, {}],
    [{ $dynamicAnchor: "x", properties: { a: { $dynamicRef: "#x" } } }, {}],
    [{ type: "object", "x-invariants": [{ rule: "size(self) > 0" }] }, {}],
    [{ $schema: "http://json-schema.org/draft-07/schema#", format: "email" }, {}],
    [{ format: "email" }, { assertFormats: true }],
    [{ multipleOf: 0.1 }, {}],
    [{ $schema: "http://json-schema.org/draft-04/schema#", maximum: 3, exclusiveMaximum: true }, {}],
    [{ $ref: "http://localhost:1234/other.json" }, { remotes: { "http://localhost:1234/other.json": { type: "string" } } }],
    [{ $defs: { a: { $id: "http://x/a", type: "string" } }, $ref: "#/$defs/a" }, {}],
    [{ $anchor: "top", type: "string" }, {}],
    [{ type: "object" }, { codegen: false }],
  ];
  for (const [schema, options] of declined) {
    assert.equal(new Validator(schema, options).compiledTo, "webassembly", JSON.stringify(schema));
  }
  // `format` is an annotation in 2020-12 unless asserted: compiled.
  assert.equal(new Validator({ format: "email" }).compiledTo, "javascript");
  assert.throws(() => new Validator({}, { codegen: "yes" }), UsageError);
});

test("edge cases: the compiled check answers as the core does", () => {
  const cycle = { a: 1 };
  cycle.self = cycle;
  const cases = [
    // Members named like Object.prototype's are read as own members only.
    [{ required: ["constructor", "__proto__", "toString"] }, [{}, JSON.parse('{"constructor": 1, "__proto__": 2, "toString": 3}'), { constructor: 1 }]],
    [{ properties: { constructor: { type: "string" } } }, [{}, { constructor: 1 }, { constructor: "x" }]],
    // `undefined` members are absent, as JSON.stringify drops them.
    [{ type: "object", required: ["a"], additionalProperties: false }, [{ a: undefined }, { a: 1, b: undefined }, { a: 1, b: 2 }]],
    [{ type: "object", maxProperties: 1, minProperties: 1 }, [{ a: 1, b: undefined }, { a: 1, b: 2 }, {}]],
    // Values JSON cannot hold, where the schema reads them, go to the core.
    [{ type: "number" }, [NaN, Infinity, 1n, 1, "1"]],
    [{ items: { type: "string" } }, [[undefined], ["a", undefined], ["a"]]],
    [{ properties: { when: { type: "string" } } }, [{ when: new Date(0) }, { when: "x" }]],
    [{ $defs: { n: { type: "object", properties: { self: { $ref: "#/$defs/n" } } } }, $ref: "#/$defs/n" }, [cycle, { self: { self: {} } }]],
    [{ minimum: 0 }, [NaN, -1, 0, "x"]],
    // Text that is counted or matched holds no lone surrogate for the compiled check.
    [{ type: "string", maxLength: 2 }, ["\ud800", "ab", "abc", "\ud83d\ude00\ud83d\ude00", "\ud83d\ude00\ud83d\ude00x"]],
    [{ type: "string", minLength: 2 }, ["a", "\ud83d\ude00", "\ud83d\ude00\ud83d\ude00", "ab"]],
    [{ type: "string", pattern: "^a+$" }, ["aaa", "ab", "a\ud800"]],
    [{ patternProperties: { "^x": { type: "integer" } }, additionalProperties: false }, [{ x1: 1 }, { x1: 1.5 }, { y: 1 }, {}]],
    [{ propertyNames: { maxLength: 2 } }, [{ ab: 1 }, { abc: 1 }]],
    // Numbers: integers as JSON reads them, multipleOf exact or the core's.
    [{ type: "integer" }, [1, 1.0, 1.5, 1e300, -0]],
    [{ multipleOf: 3 }, [9, 10, 4.5, 1e20, 2 ** 53 + 2, -9]],
    [{ exclusiveMinimum: 0, maximum: 1e21 }, [0, 1e-300, 1e21, 1e22]],
    // JSON equality: key order free, 1 and 1.0 one number.
    [{ enum: [{ a: 1, b: [1, 2] }, "x", null] }, [{ b: [1, 2], a: 1 }, { a: 1 }, "x", null, undefined]],
    [{ const: { a: [1, { b: null }] } }, [{ a: [1, { b: null }] }, { a: [1, {}] }, { a: [1, { b: null }], c: undefined }]],
    [{ uniqueItems: true }, [[1, 1.0], [1, "1"], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [[1], [1, 2]], [0, -0], [true, 1], [NaN, 1]]],
    [{ type: "array", contains: { type: "string" }, minContains: 2, maxContains: 3 }, [["a"], ["a", "b"], ["a", "b", "c", "d"], [1, "a", "b"]]],
    [{ oneOf: [{ type: "integer" }, { minimum: 2 }] }, [1, 2, 2.5, "x"]],
    [{ not: { type: "null" } }, [null, 0]],
    [{ dependentRequired: { a: ["b"] }, dependentSchemas: { c: { required: ["d"] } } }, [{ a: 1 }, { a: 1, b: 1 }, { c: 1 }, { c: 1, d: 1 }]],
    [{ $schema: "http://json-schema.org/draft-07/schema#", dependencies: { a: ["b"], c: { required: ["d"] } } }, [{ a: 1 }, { a: 1, b: 1 }, { c: 1 }]],
    [{ $schema: "http://json-schema.org/draft-07/schema#", items: [{ type: "string" }], additionalItems: false }, [["a"], ["a", 1], [1]]],
    [{ $schema: "http://json-schema.org/draft-07/schema#", $ref: "#/definitions/s", maxLength: 1, definitions: { s: { type: "string" } } }, ["abc", 1]],
    [{ $ref: "#/$defs/s", maxLength: 1, $defs: { s: { type: "string" } } }, ["abc", "a", 1]],
    [{ type: ["string", "null"], minLength: 1 }, ["", "a", null, 0]],
    [{ type: "object" }, [[], null, new Map(), Object.create(null)]],
    [true, [1, "x", null]],
    [false, [1]],
  ];
  for (const [schema, instances] of cases) {
    const [fast, core] = pair(schema);
    for (const x of instances) agree(fast, core, x, `${JSON.stringify(schema)} on ${label(x)}`);
  }
  // Where the schema never reads a value, it is not looked at (as ajv).
  const fast = new Validator({ type: "object", required: ["a"] });
  assert.equal(fast.isValid({ a: 1, b: NaN }), true);
  assert.equal(new Validator(true).isValid(NaN), true);
  assert.throws(() => new Validator({ type: "object", required: ["a"] }, { codegen: false }).isValid({ a: 1, b: NaN }), NotJSONError);
  // A cycle the schema does not follow is not followed.
  assert.equal(new Validator({ type: "object", required: ["self"] }).isValid(cycle), true);
});

test("validate(schema, instance) uses the compiled check and keeps the core's errors", () => {
  const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
  assert.deepEqual(validate(schema, { a: 1 }), []);
  const errors = validate(schema, { a: "x" });
  assert.deepEqual(errors.map((e) => [e.instance_path, e.schema_path]), [["/a", "/properties/a/type"]]);
  assert.deepEqual(errors, new Validator(schema, { codegen: false }).validate({ a: "x" }));
});

test("compileCheck is a function of the schema alone and gives its code", () => {
  const check = compileCheck({ type: "string" });
  assert.equal(check("x"), true);
  assert.equal(check(1), false);
  assert.equal(check(1n), null);
  assert.match(check.code, /typeof x === "string"/);
  assert.equal(compileCheck({ unevaluatedItems: false }), null);
});

// Every schema of the sample that the core compiles, every labelled
// instance, the compiled check against the core (formats as each draft
// reads them).
const shared = sharedDir();
const bench = shared && join(shared, "corpus/jsonschemabench");
const present = bench !== null && (() => {
  try { return statSync(bench).isDirectory(); } catch { return false; }
})();

if (!present) {
  test("JSONSchemaBench: compiled checks agree with the core", { skip: "../shared/corpus/jsonschemabench not found" }, () => {});
} else {
  test("JSONSchemaBench: compiled checks agree with the core on every instance", () => {
    const splits = readdirSync(bench, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    let schemas = 0;
    let compiled = 0;
    let instances = 0;
    const failures = [];
    for (const split of splits) {
      for (const name of readdirSync(join(bench, split)).filter((n) => n.endsWith(".json")).sort()) {
        const doc = JSON.parse(readFileSync(join(bench, split, name), "utf8"));
        for (const options of [{}]) {
          let fast;
          try {
            fast = new Validator(doc.schema, options);
          } catch {
            continue; // the core refuses the schema: no compiled check either
          }
          schemas++;
          if (fast.compiledTo !== "javascript") continue;
          compiled++;
          const core = new Validator(doc.schema, { ...options, codegen: false });
          for (const t of doc.tests ?? []) {
            instances++;
            try {
              agree(fast, core, t.data, `${split}/${name} ${JSON.stringify(options)} ${t.description}`);
            } catch (e) {
              failures.push(e.message);
            }
          }
        }
      }
    }
    console.log(`JSONSchemaBench: ${compiled} of ${schemas} schema compilations became JavaScript; ${instances} instances compared`);
    assert.deepEqual(failures, []);
    // Most real-world schemas compile (the rest use what compile.js declines).
    assert.ok(compiled > schemas / 2, `${compiled} of ${schemas}`);
  });
}

// Random schemas of the compiled keywords against random instances
// (seeded: a failure names its seed and can be replayed).
test("random schemas and instances: the compiled check agrees with the core", () => {
  // mulberry32: every bit of its output is usable (an LCG's low bits repeat).
  let seed = 20261130;
  const rand = (n) => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = (xs) => xs[rand(xs.length)];
  const NAMES = ["a", "b", "constructor", "x1", ""];
  // No lone surrogate: the core reads one anywhere, the compiled check only
  // where the schema looks (the edge table above covers that).
  const SCALARS = [0, -0, 1, 1.5, -3, 2 ** 53, 2 ** 53 + 2, 1e21, 1e-7, 9, 27, "", "a", "ab", "\ud83d\ude00", "xyz", "x1", "1", "é", true, false, null];
  function value(depth) {
    const r = rand(depth > 2 ? 3 : 5);
    if (r < 3) return pick(SCALARS);
    if (r === 3) return Array.from({ length: rand(4) }, () => value(depth + 1));
    const o = {};
    for (let i = rand(4); i > 0; i--) o[pick(NAMES)] = value(depth + 1);
    return o;
  }
  function schema(depth) {
    if (depth > 2 || rand(6) === 0) return pick([true, false, {}]);
    const s = {};
    for (let i = 1 + rand(3); i > 0; i--) {
      switch (rand(30)) {
        case 22: s.dependentRequired = { [pick(NAMES)]: [pick(NAMES)] }; break;
        case 23: s.dependentSchemas = { [pick(NAMES)]: schema(depth + 1) }; break;
        case 24: s.propertyNames = { pattern: pick(["^a", "^x\\d$", "^$"]) }; break;
        case 25: s.maxProperties = rand(3); s.minProperties = rand(2); break;
        case 26: s.maxItems = rand(3); s.minItems = rand(2); break;
        case 27: s.$ref = "#/$defs/d"; break;
        case 28: s.enum = [value(1), value(1), pick(SCALARS)]; break;
        case 29: s.allOf = [schema(depth + 1), schema(depth + 1)]; break;
        case 0: s.type = pick(["string", "number", "integer", "boolean", "null", "array", "object", ["string", "null"], ["integer", "array"]]); break;
        case 1: s.enum = [pick(SCALARS), value(2)]; break;
        case 2: s.const = value(2); break;
        case 3: s.minimum = pick([0, 1, -1.5]); break;
        case 4: s.exclusiveMaximum = pick([1, 2 ** 53, 1.5]); break;
        case 5: s.multipleOf = pick([1, 2, 3]); break;
        case 6: s.maxLength = rand(3); break;
        case 7: s.minLength = rand(3); break;
        case 8: s.pattern = pick(["^a", "b$", "^.$", "\\d"]); break;
        case 9: s.items = schema(depth + 1); break;
        case 10: s.prefixItems = [schema(depth + 1)]; break;
        case 11: s.uniqueItems = true; break;
        case 12: s.contains = schema(depth + 1); s.minContains = rand(2); break;
        case 13: s.properties = { [pick(NAMES)]: schema(depth + 1), [pick(NAMES)]: schema(depth + 1) }; break;
        case 14: s.required = [pick(NAMES)]; break;
        case 15: s.additionalProperties = schema(depth + 1); break;
        case 16: s.patternProperties = { "^x": schema(depth + 1) }; break;
        case 17: s.propertyNames = { maxLength: 1 }; break;
        case 18: s.anyOf = [schema(depth + 1), schema(depth + 1)]; break;
        case 19: s.oneOf = [schema(depth + 1), schema(depth + 1)]; break;
        case 20: s.not = schema(depth + 1); break;
        default: s.if = schema(depth + 1); s.then = schema(depth + 1); s.else = schema(depth + 1); break;
      }
    }
    return s;
  }
  let compared = 0;
  for (let n = 0; n < 400; n++) {
    const at = seed;
    const s = schema(0);
    // A `$defs` entry for `$ref` to reach, recursive half the time.
    if (typeof s === "object") {
      s.$defs = {
        d: rand(2)
          ? { type: ["object", "array", "string"], items: { $ref: "#/$defs/d" }, properties: { a: { $ref: "#/$defs/d" } }, maxLength: 2 }
          : schema(1),
      };
    }
    const [fast, core] = pair(s);
    for (let i = 0; i < 12; i++) {
      const x = value(0);
      agree(fast, core, x, `seed ${at}: ${JSON.stringify(s)} on ${label(x)}`);
      compared++;
    }
  }
  assert.equal(compared, 4800);
});

test("a Zod 4 schema (formats with patterns, int bounds, additionalProperties) compiles and agrees", async () => {
  const { z } = await import("zod");
  const Reply = z.object({
    action: z.enum(["complete", "continue"]),
    confidence: z.number().int(),
    email: z.string().email().optional(),
    tags: z.array(z.string()).max(3),
    when: z.iso.datetime().optional(),
  });
  const [fast, core] = pair(Reply);
  for (const x of [
    { action: "complete", confidence: 3, tags: [] },
    { action: "x", confidence: 3, tags: [] },
    { action: "complete", confidence: 3.5, tags: [] },
    { action: "complete", confidence: 3, tags: [], email: "nope" },
    { action: "complete", confidence: 3, tags: [], email: "a@example.com", when: "2026-11-30T00:00:00Z" },
    { action: "complete", confidence: 3, tags: [], when: "2026-02-30T00:00:00Z" },
    { action: "complete", confidence: 3, tags: ["a", "b", "c", "d"] },
    { action: "complete", confidence: 3, tags: [], extra: 1 },
  ]) {
    agree(fast, core, x, label(x));
  }
});
