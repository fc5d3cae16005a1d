// Note [Validators compiled to JavaScript]
//
// `Validator.isValid(object)` handed the object to the WebAssembly core as
// JSON text: `JSON.stringify` of a 1.5 KB instance alone costs more than
// ajv's whole compiled check of it, so no speed of the core could make the
// object path as fast as ajv (measured 0.05-0.06x). What makes ajv fast is
// that it never serialises: it turns the schema into JavaScript that reads
// the object where the schema says to look. This module does the same for
// the schemas whose meaning it can state exactly in JavaScript, and
// declines (returns `null`) for the rest, which keep the core's path:
//
// - It answers only yes/no. `validate` uses it for the yes; the errors of
//   an invalid instance (their wording, paths and order) always come from
//   the core, so both paths print the same thing.
// - It declines whole schemas, never parts: `$dynamicRef`/`$recursiveRef`,
//   `unevaluated*`, `$anchor`, an `$id` below the root, a `$ref` to another
//   document, `format` where the draft or `assertFormats` makes it an
//   assertion, draft-04 (boolean `exclusiveMaximum`), a non-integer
//   `multipleOf`, a `pattern` JavaScript's `u` regexes refuse, a keyword
//   used in a draft that does not have it (the core's reading of those is
//   not restated here), and `x-invariants` (CEL rules: the core checks
//   them).
// - A value is read only where the schema reads it, as ajv does. Where it
//   reads one that JSON text cannot hold as written (NaN, an infinity, a
//   BigInt, `undefined` in an array, a Date or other non-plain object, a
//   lone surrogate, a cycle through a recursive `$ref`), the compiled check
//   gives up (`null`) and the caller takes the core's path, which refuses
//   or reads it exactly as before. What the schema never reads is never
//   looked at (`codegen: false` reads everything through the core).
// - Numbers: an object's numbers are already doubles, and the core reads
//   the same doubles from `JSON.stringify`'s text, so comparisons agree.
//   `multipleOf` is compiled only for an integer divisor and answered only
//   for safe-integer instances (exact remainder); any other instance gives
//   up to the core, whose division rule is not restated here.
// - An object's property is absent when its value is `undefined` (what
//   `JSON.stringify` drops); names that `Object.prototype` has
//   (`constructor`, `__proto__`, `toString`) are read as own properties
//   only.
//
// The conformance suite runs through both paths (test/conformance.test.mjs)
// and test/codegen.test.mjs compares the two on every schema and instance
// of JSONSchemaBench.

/** Thrown inside a compiled check when it meets a value it must not judge. */
const GIVE_UP = Symbol("agentshape: give up to the core");

/** A schema (or a part of it) this module does not compile. */
class Declined extends Error {}

const DRAFT_NAMES = {
  4: 4, draft4: 4, "draft-04": 4,
  6: 6, draft6: 6, "draft-06": 6,
  7: 7, draft7: 7, "draft-07": 7,
  "2019-09": 2019, "draft2019-09": 2019,
  "2020-12": 2020, "draft2020-12": 2020,
};

const DRAFT_URIS = {
  "json-schema.org/draft/2020-12/schema": 2020,
  "json-schema.org/schema": 2020,
  "json-schema.org/draft/2019-09/schema": 2019,
  "json-schema.org/draft-07/schema": 7,
  "json-schema.org/draft-06/schema": 6,
  "json-schema.org/draft-04/schema": 4,
};

/** The draft the core compiles `schema` as (crates/core/src/validate/draft.rs). */
function draftOf(schema, forced) {
  const uri = schema !== null && typeof schema === "object" ? schema.$schema : undefined;
  let declared;
  if (uri !== undefined) {
    // A meta-schema of its own can switch vocabularies off, even under a
    // forced draft: the core reads it, this module does not.
    if (typeof uri !== "string") throw new Declined("$schema");
    declared = DRAFT_URIS[uri.trim().replace(/#+$/, "").replace(/^https?:\/\//, "")];
    if (declared === undefined) throw new Declined("$schema");
  }
  if (forced !== undefined && forced !== null) {
    const d = DRAFT_NAMES[String(forced)];
    if (d === undefined) throw new Declined(`draft ${forced}`);
    return d;
  }
  return declared ?? 2020;
}

// Keywords that never change a verdict in any draft the module compiles.
const ANNOTATIONS = new Set([
  "$schema", "$comment", "$defs", "definitions", "title", "description", "default",
  "examples", "readOnly", "writeOnly", "deprecated",
]);

// Keywords whose meaning the module does not restate: the schema is declined.
const DECLINED = new Set([
  "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$anchor",
  "$vocabulary", "unevaluatedProperties", "unevaluatedItems", "x-invariants",
]);

// The drafts in which each compiled keyword exists, as [first, last].
const SINCE = {
  type: [6, 2020], enum: [6, 2020], const: [6, 2020], multipleOf: [6, 2020],
  maximum: [6, 2020], minimum: [6, 2020], exclusiveMaximum: [6, 2020], exclusiveMinimum: [6, 2020],
  maxLength: [6, 2020], minLength: [6, 2020], pattern: [6, 2020],
  maxItems: [6, 2020], minItems: [6, 2020], uniqueItems: [6, 2020], contains: [6, 2020],
  minContains: [2019, 2020], maxContains: [2019, 2020],
  maxProperties: [6, 2020], minProperties: [6, 2020], required: [6, 2020],
  properties: [6, 2020], patternProperties: [6, 2020], additionalProperties: [6, 2020],
  propertyNames: [6, 2020], dependencies: [6, 7], dependentRequired: [2019, 2020],
  dependentSchemas: [2019, 2020], allOf: [6, 2020], anyOf: [6, 2020], oneOf: [6, 2020],
  not: [6, 2020], if: [7, 2020], then: [7, 2020], else: [7, 2020],
  items: [6, 2020], prefixItems: [2020, 2020], additionalItems: [6, 2019],
  $ref: [6, 2020], $id: [6, 2020], format: [6, 2020],
  contentEncoding: [6, 2020], contentMediaType: [6, 2020], contentSchema: [2019, 2020],
};

/** A string literal for generated code. */
const lit = (s) => JSON.stringify(s);

/** Whether `v` is a JSON value that generated code can hold as a literal (no object, no array). */
const isScalar = (v) => v === null || typeof v === "string" || typeof v === "boolean" ||
  (typeof v === "number" && Number.isFinite(v));

// ---- helpers the generated code calls (`h.` in it) --------------------------

/** Whether `x` is not a JSON value as JSON.stringify would write it unchanged. */
function odd(x) {
  switch (typeof x) {
    case "string":
      return !x.isWellFormed();
    case "boolean":
      return false;
    case "number":
      return !Number.isFinite(x);
    case "object":
      if (x === null || Array.isArray(x)) return false;
      return x.constructor !== Object || typeof x.toJSON === "function";
    default:
      return true;
  }
}

/** Give up on `x` when it is odd; otherwise the failed check stands. */
function fail(x) {
  if (odd(x)) throw GIVE_UP;
  return false;
}

/**
 * Whether `x` is read as a JSON object: what ajv reads as one. A Date or
 * another object with a `toJSON` that stands where the schema wants an
 * object is read as the object it is, not as what `toJSON` gives (where a
 * check fails on it, `fail` gives it to the core).
 */
function isObject(x) {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The number of Unicode code points of `s` (what the core counts for `*Length`). */
function codePoints(s) {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** JSON equality of two values (numbers by value, objects key-order free, `undefined` members absent). */
function equal(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    if (odd(a) || odd(b)) throw GIVE_UP;
    return false;
  }
  const arr = Array.isArray(a);
  if (arr !== Array.isArray(b)) return false;
  if (arr) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false;
    return true;
  }
  if (!isObject(a) || !isObject(b)) throw GIVE_UP;
  let n = 0;
  for (const k in a) {
    const v = a[k];
    if (v === undefined) continue;
    n++;
    if (!Object.hasOwn(b, k) || !equal(v, b[k])) return false;
  }
  for (const k in b) if (b[k] !== undefined) n--;
  return n === 0;
}

/** Whether no two items of `a` are JSON-equal. */
function unique(a) {
  let scalars = true;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const t = typeof x;
    if ((t === "number" && !Number.isFinite(x)) || (t === "string" && !x.isWellFormed())) throw GIVE_UP;
    if (t !== "string" && t !== "number" && t !== "boolean") {
      scalars = false;
      break;
    }
  }
  if (scalars) {
    // A number and a string never collide in a Set; 0 and -0 do, as in JSON.
    if (new Set(a).size === a.length) return true;
  }
  for (let i = 1; i < a.length; i++) {
    for (let j = 0; j < i; j++) if (equal(a[i], a[j])) return false;
  }
  return true;
}

/** Whether `x` equals one of `values`. */
function oneOf(x, values) {
  for (const v of values) if (equal(x, v)) return true;
  return false;
}

/** The number of members `x` has as JSON text (`undefined` ones are dropped). */
function size(x) {
  let n = 0;
  for (const k in x) if (x[k] !== undefined) n++;
  return n;
}

const HELPERS = Object.freeze({ odd, fail, isObject, codePoints, equal, unique, oneOf, size, GIVE_UP });

// ---- the generator -------------------------------------------------------------

/** Resolve a JSON Pointer fragment (`#/a/b`, percent- and `~`-escaped) in `root`. */
function resolvePointer(root, ref) {
  const fragment = ref.slice(1);
  if (fragment === "") return root;
  if (!fragment.startsWith("/")) throw new Declined(`$ref ${ref}`);
  let at = root;
  for (const raw of fragment.slice(1).split("/")) {
    let token;
    try {
      token = decodeURIComponent(raw);
    } catch {
      throw new Declined(`$ref ${ref}`);
    }
    token = token.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") throw new Declined(`$ref ${ref}`);
    // A resource of its own on the way changes what the pointer means.
    if (at !== root && typeof at.$id === "string") throw new Declined(`$ref ${ref} through an $id`);
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Declined(`$ref ${ref}`);
      at = at[Number(token)];
    } else {
      if (!Object.hasOwn(at, token)) throw new Declined(`$ref ${ref}`);
      at = at[token];
    }
  }
  if (at === undefined) throw new Declined(`$ref ${ref}`);
  return at;
}

class Generator {
  constructor(root, draft, assertFormats) {
    this.root = root;
    this.draft = draft;
    this.formats = assertFormats ?? draft <= 7;
    this.consts = [];
    this.fns = [];
    this.names = new Map();
    this.vars = 0;
    this.checked = new Set();
  }

  /** A constant for generated code: `c[i]`. */
  constant(v) {
    this.consts.push(v);
    return `c[${this.consts.length - 1}]`;
  }

  /** A fresh variable name. */
  fresh(prefix) {
    return `${prefix}${this.vars++}`;
  }

  /** The name of a function answering `schema` for one value (made once per schema object). */
  fnFor(schema) {
    if (schema === true) return "yes";
    if (schema === false) return "no";
    let name = this.names.get(schema);
    if (name !== undefined) return name;
    name = `f${this.names.size}`;
    this.names.set(schema, name);
    const slot = this.fns.length;
    this.fns.push("");
    this.fns[slot] = `function ${name}(x) {\n${this.body(schema, "x")}return true;\n}\n`;
    return name;
  }

  /** A regular expression constant for `pattern`, or declined. */
  regex(pattern) {
    if (typeof pattern !== "string") throw new Declined("pattern");
    try {
      return this.constant(new RegExp(pattern, "u"));
    } catch {
      throw new Declined(`pattern ${pattern}`);
    }
  }

  /** The schema's keywords checked against the draft; declines what the module does not compile. */
  vet(schema) {
    if (this.checked.has(schema)) return;
    this.checked.add(schema);
    for (const k of Object.keys(schema)) {
      if (DECLINED.has(k)) throw new Declined(k);
      if (ANNOTATIONS.has(k)) continue;
      const range = SINCE[k];
      if (range === undefined) continue; // not a keyword: an annotation
      if (this.draft < range[0] || this.draft > range[1]) throw new Declined(`${k} in draft ${this.draft}`);
    }
    if ("$id" in schema && schema !== this.root) throw new Declined("$id below the root");
    if ("format" in schema && this.formats) throw new Declined("format asserted");
    if (this.draft <= 7 && ("contentEncoding" in schema || "contentMediaType" in schema)) {
      throw new Declined("content keywords in draft 6/7");
    }
  }

  /** Statements that `return false` (or give up) when `v` fails `schema`. */
  body(schema, v) {
    if (schema === true) return "";
    if (schema === false) return `return false;\n`;
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
      throw new Declined("a schema that is not an object or a boolean");
    }
    this.vet(schema);
    if ("$ref" in schema) {
      const ref = schema.$ref;
      if (typeof ref !== "string" || !ref.startsWith("#")) throw new Declined("$ref to another document");
      const target = resolvePointer(this.root, ref);
      const call = `if (!${this.fnFor(target)}(${v})) return false;\n`;
      // Before 2019-09 a `$ref` replaces its siblings.
      if (this.draft <= 7) return call;
      return call + this.keywords(schema, v);
    }
    return this.keywords(schema, v);
  }

  keywords(s, v) {
    let out = "";
    const has = (k) => Object.hasOwn(s, k);
    const typed = has("type");
    const kindKeywords = ["multipleOf", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum",
      "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "contains", "items",
      "prefixItems", "additionalItems", "maxProperties", "minProperties", "required", "properties",
      "patternProperties", "additionalProperties", "propertyNames", "dependencies", "dependentRequired",
      "dependentSchemas"];
    if (typed) {
      out += `if (!(${this.typeTest(s.type, v)})) return h.fail(${v});\n`;
    } else if (kindKeywords.some(has)) {
      // No `type` to reject an odd value first: what it is decides which
      // keywords apply.
      out += `if (h.odd(${v})) throw h.GIVE_UP;\n`;
    }
    if (has("enum")) {
      if (!Array.isArray(s.enum)) throw new Declined("enum");
      if (s.enum.every(isScalar)) {
        const tests = s.enum.map((e) => `${v} === ${lit(e)}`).join(" || ") || "false";
        out += `if (!(${tests})) return h.fail(${v});\n`;
      } else {
        out += `if (!h.oneOf(${v}, ${this.constant(s.enum)})) return false;\n`;
      }
    }
    if (has("const")) {
      if (isScalar(s.const)) out += `if (${v} !== ${lit(s.const)}) return h.fail(${v});\n`;
      else out += `if (!h.equal(${v}, ${this.constant(s.const)})) return false;\n`;
    }
    // A single `type` has proved the kind: its keywords need no guard.
    const only = typed && (typeof s.type === "string" ? s.type : s.type.length === 1 ? s.type[0] : null);
    const guard = (kind, test, inner) => (inner === "" ? "" : only === kind ? inner : `if (${test}) {\n${inner}}\n`);
    out += this.numberKeywords(s, v, has);
    out += guard("string", `typeof ${v} === "string"`, this.stringKeywords(s, v, has));
    out += guard("array", `Array.isArray(${v})`, this.arrayKeywords(s, v, has));
    out += guard("object", `h.isObject(${v})`, this.objectKeywords(s, v, has));
    if (has("allOf")) {
      for (const sub of this.list(s.allOf, "allOf")) out += this.block(sub, v);
    }
    if (has("anyOf")) {
      const calls = this.list(s.anyOf, "anyOf").map((sub) => `${this.fnFor(sub)}(${v})`);
      out += `if (!(${calls.join(" || ")})) return false;\n`;
    }
    if (has("oneOf")) {
      const subs = this.list(s.oneOf, "oneOf");
      const n = this.fresh("n");
      out += `{ let ${n} = 0;\n`;
      for (const sub of subs) out += `if (${this.fnFor(sub)}(${v}) && ++${n} > 1) return false;\n`;
      out += `if (${n} !== 1) return false; }\n`;
    }
    if (has("not")) out += `if (${this.fnFor(s.not)}(${v})) return false;\n`;
    if (has("if") && (has("then") || has("else"))) {
      const cond = `${this.fnFor(s.if)}(${v})`;
      const then = has("then") ? this.body(s.then, v) : "";
      const other = has("else") ? this.body(s.else, v) : "";
      out += `if (${cond}) {\n${then}} else {\n${other}}\n`;
    }
    // An `if` alone decides nothing (only `unevaluated*` could read its
    // annotations, and those are declined).
    return out;
  }

  /** `subs` when it is a non-empty array of schemas. */
  list(subs, what) {
    if (!Array.isArray(subs) || subs.length === 0) throw new Declined(what);
    return subs;
  }

  /** `schema` checked inline on `v`, in a block of its own. */
  block(schema, v) {
    const b = this.body(schema, v);
    return b === "" ? "" : `{\n${b}}\n`;
  }

  typeTest(type, v) {
    const names = typeof type === "string" ? [type] : type;
    if (!Array.isArray(names) || names.length === 0) throw new Declined("type");
    return names.map((t) => {
      switch (t) {
        // Not `isWellFormed()` here (a third of the whole check's time):
        // a lone surrogate matters where text is counted or matched, and
        // those keywords check it.
        case "string": return `typeof ${v} === "string"`;
        case "number": return `(typeof ${v} === "number" && Number.isFinite(${v}))`;
        case "integer": return `Number.isInteger(${v})`;
        case "boolean": return `typeof ${v} === "boolean"`;
        case "null": return `${v} === null`;
        case "array": return `Array.isArray(${v})`;
        case "object": return `h.isObject(${v})`;
        default: throw new Declined(`type ${t}`);
      }
    }).join(" || ");
  }

  numberKeywords(s, v, has) {
    const checks = [];
    const num = (k) => {
      if (typeof s[k] !== "number") throw new Declined(k);
      return lit(s[k]);
    };
    if (has("maximum")) checks.push(`${v} > ${num("maximum")}`);
    if (has("minimum")) checks.push(`${v} < ${num("minimum")}`);
    if (has("exclusiveMaximum")) checks.push(`${v} >= ${num("exclusiveMaximum")}`);
    if (has("exclusiveMinimum")) checks.push(`${v} <= ${num("exclusiveMinimum")}`);
    let out = "";
    if (checks.length) out += `if (typeof ${v} === "number" && (${checks.join(" || ")})) return false;\n`;
    if (has("multipleOf")) {
      const m = s.multipleOf;
      if (!Number.isSafeInteger(m) || m <= 0) throw new Declined("multipleOf");
      out += `if (typeof ${v} === "number") { if (!Number.isSafeInteger(${v})) throw h.GIVE_UP; if (${v} % ${m} !== 0) return false; }\n`;
    }
    return out;
  }

  stringKeywords(s, v, has) {
    const inner = [];
    const count = (k) => {
      if (!Number.isSafeInteger(s[k]) || s[k] < 0) throw new Declined(k);
      return s[k];
    };
    if (has("maxLength")) {
      const m = count("maxLength");
      inner.push(`if (${v}.length > ${m} && h.codePoints(${v}) > ${m}) return false;\n`);
    }
    if (has("minLength")) {
      const m = count("minLength");
      // A string of n code units has between n/2 and n code points.
      if (m > 0) inner.push(`if (${v}.length < ${m} || (${v}.length < ${2 * m} && h.codePoints(${v}) < ${m})) return false;\n`);
    }
    if (has("pattern")) inner.push(`if (!${this.regex(s.pattern)}.test(${v})) return false;\n`);
    if (!inner.length) return "";
    return `if (!${v}.isWellFormed()) throw h.GIVE_UP;\n${inner.join("")}`;
  }

  arrayKeywords(s, v, has) {
    let inner = "";
    const count = (k) => {
      if (!Number.isSafeInteger(s[k]) || s[k] < 0) throw new Declined(k);
      return s[k];
    };
    if (has("maxItems")) inner += `if (${v}.length > ${count("maxItems")}) return false;\n`;
    if (has("minItems")) inner += `if (${v}.length < ${count("minItems")}) return false;\n`;
    if (has("uniqueItems")) {
      if (typeof s.uniqueItems !== "boolean") throw new Declined("uniqueItems");
      if (s.uniqueItems) inner += `if (!h.unique(${v})) return false;\n`;
    }
    // Items by position, then the rest.
    let prefix = [];
    let rest;
    if (this.draft >= 2020) {
      if (has("prefixItems")) prefix = this.list(s.prefixItems, "prefixItems");
      if (has("items")) rest = s.items;
    } else if (has("items")) {
      if (Array.isArray(s.items)) {
        prefix = s.items;
        if (has("additionalItems")) rest = s.additionalItems;
      } else {
        rest = s.items;
      }
    }
    prefix.forEach((sub, i) => {
      const b = this.body(sub, `${v}[${i}]`);
      if (b !== "") inner += `if (${v}.length > ${i}) {\n${b}}\n`;
    });
    if (rest !== undefined) {
      const i = this.fresh("i");
      const e = this.fresh("e");
      const b = this.body(rest, e);
      if (b !== "") inner += `for (let ${i} = ${prefix.length}; ${i} < ${v}.length; ${i}++) {\nconst ${e} = ${v}[${i}];\n${b}}\n`;
    }
    if (has("contains")) {
      let min = 1;
      let max;
      if (this.draft >= 2019 && has("minContains")) min = count("minContains");
      if (this.draft >= 2019 && has("maxContains")) max = count("maxContains");
      const f = this.fnFor(s.contains);
      const n = this.fresh("n");
      const i = this.fresh("i");
      inner += `{ let ${n} = 0;\nfor (let ${i} = 0; ${i} < ${v}.length; ${i}++) if (${f}(${v}[${i}])) ${n}++;\n`;
      inner += `if (${n} < ${min}${max === undefined ? "" : ` || ${n} > ${max}`}) return false; }\n`;
    }
    return inner;
  }

  /** An own member `name` of the object `v` (names on Object.prototype read as own only). */
  member(v, name) {
    const read = `${v}[${lit(name)}]`;
    return name in Object.prototype ? `(Object.hasOwn(${v}, ${lit(name)}) ? ${read} : undefined)` : read;
  }

  objectKeywords(s, v, has) {
    let inner = "";
    const count = (k) => {
      if (!Number.isSafeInteger(s[k]) || s[k] < 0) throw new Declined(k);
      return s[k];
    };
    if (has("maxProperties")) inner += `if (h.size(${v}) > ${count("maxProperties")}) return false;\n`;
    if (has("minProperties")) inner += `if (h.size(${v}) < ${count("minProperties")}) return false;\n`;
    const props = has("properties") ? this.objectOf(s.properties, "properties") : {};
    const required = new Set();
    if (has("required")) {
      if (!Array.isArray(s.required) || !s.required.every((r) => typeof r === "string")) throw new Declined("required");
      for (const r of s.required) {
        // A required member the properties check reads anyway is checked there.
        if (Object.hasOwn(props, r) && props[r] !== true) required.add(r);
        else inner += `if (${this.member(v, r)} === undefined) return false;\n`;
      }
    }
    const requiredIf = (deps, k) => {
      if (!Array.isArray(deps) || !deps.every((r) => typeof r === "string")) throw new Declined(k);
      return deps.map((r) => `if (${this.member(v, r)} === undefined) return false;\n`).join("");
    };
    const dependent = (name, then) => (then === "" ? "" : `if (${this.member(v, name)} !== undefined) {\n${then}}\n`);
    if (has("dependencies")) {
      for (const [name, dep] of Object.entries(this.objectOf(s.dependencies, "dependencies"))) {
        inner += dependent(name, Array.isArray(dep) ? requiredIf(dep, "dependencies") : this.body(dep, v));
      }
    }
    if (has("dependentRequired")) {
      for (const [name, dep] of Object.entries(this.objectOf(s.dependentRequired, "dependentRequired"))) {
        inner += dependent(name, requiredIf(dep, "dependentRequired"));
      }
    }
    if (has("dependentSchemas")) {
      for (const [name, dep] of Object.entries(this.objectOf(s.dependentSchemas, "dependentSchemas"))) {
        inner += dependent(name, this.body(dep, v));
      }
    }
    for (const [name, sub] of Object.entries(props)) {
      const p = this.fresh("p");
      const b = this.body(sub, p);
      if (required.has(name)) {
        inner += `{ const ${p} = ${this.member(v, name)};\nif (${p} === undefined) return false;\n${b}}\n`;
      } else if (b !== "") {
        inner += `{ const ${p} = ${this.member(v, name)};\nif (${p} !== undefined) {\n${b}} }\n`;
      }
    }
    const patterns = has("patternProperties")
      ? Object.entries(this.objectOf(s.patternProperties, "patternProperties")).map(([p, sub]) => [this.regex(p), sub])
      : [];
    const additional = has("additionalProperties") ? s.additionalProperties : undefined;
    if (patterns.length || (additional !== undefined && additional !== true)) {
      const k = this.fresh("k");
      const e = this.fresh("e");
      let loop = `for (const ${k} in ${v}) {\nconst ${e} = ${v}[${k}];\nif (${e} === undefined) continue;\n`;
      if (patterns.length) {
        loop += `let m${k} = false;\n`;
        for (const [re, sub] of patterns) {
          loop += `if (${re}.test(${k})) {\nm${k} = true;\n${this.body(sub, e)}}\n`;
        }
      }
      if (additional !== undefined && additional !== true) {
        const names = Object.keys(props);
        const known = names.length ? `switch (${k}) {\n${names.map((n) => `case ${lit(n)}:`).join("\n")}\ncontinue;\n}\n` : "";
        loop += known;
        if (patterns.length) loop += `if (m${k}) continue;\n`;
        loop += this.body(additional, e);
      }
      inner += `${loop}}\n`;
    }
    if (has("propertyNames")) {
      const n = this.fresh("k");
      const b = this.body(s.propertyNames, n);
      if (b !== "") inner += `for (const ${n} in ${v}) {\nif (${v}[${n}] === undefined) continue;\n${b}}\n`;
    }
    return inner;
  }

  /** `o` when it is a JSON object. */
  objectOf(o, what) {
    if (o === null || typeof o !== "object" || Array.isArray(o)) throw new Declined(what);
    return o;
  }

  build() {
    const root = this.fnFor(this.root);
    const code = `"use strict";\nconst yes = () => true, no = () => false;\n${this.fns.join("")}return ${root};\n`;
    // eslint-disable-next-line no-new-func
    const make = new Function("h", "c", code);
    return { check: make(HELPERS, this.consts), code };
  }
}

/**
 * A yes/no check of plain JavaScript values against `schema`, written as
 * JavaScript (Note [Validators compiled to JavaScript]): `check(x)` is
 * `true`, `false`, or `null` when the value holds something the check must
 * leave to the core. `null` instead of a check when the schema is not one
 * this module compiles, or the environment forbids compiling code (a
 * Content-Security-Policy without `unsafe-eval`).
 *
 * @param schema the schema as a parsed JSON value (the one the core compiled)
 * @param options `{draft, assertFormats}` as given to the Validator
 */
export function compileCheck(schema, options = {}) {
  let built;
  try {
    const draft = draftOf(schema, options.draft);
    if (draft < 6) return null;
    built = new Generator(schema, draft, options.assertFormats).build();
  } catch (e) {
    // EvalError: a Content-Security-Policy without `unsafe-eval`;
    // RangeError: a schema nested deeper than the stack can compile.
    if (e instanceof Declined || e instanceof EvalError || e instanceof SyntaxError || e instanceof RangeError) return null;
    throw e;
  }
  const check = built.check;
  const run = (x) => {
    try {
      return check(x);
    } catch (e) {
      // A cycle through a recursive `$ref` or nesting past the stack: the
      // core's path refuses or reads it.
      if (e === GIVE_UP || e instanceof RangeError) return null;
      throw e;
    }
  };
  Object.defineProperty(run, "code", { value: built.code });
  return run;
}
