// agentshape for JavaScript: the Python package's API over the same Rust
// core, compiled to WebAssembly (crates/wasm). Values cross the boundary as
// JSON text (crates/wasm's Note [Text crosses as JSON]); results are plain
// objects with the CLI's field names (`instance_path`, `schema_path`, ...),
// so the Python and CLI documentation carries over.

import {
  AgentError, AgentshapeError, InputError, InternalError, InvalidOutputError, NoOutputError,
  NotJSONError, ProfileError, SchemaError, UsageError,
} from "./errors.js";
import { compileCheck } from "./compile.js";
import { errorNamed } from "./errors.js";
import { call, generation, memoryOf, raw } from "./load.js";

export { loadTimes, ready } from "./load.js";
import { closedObjects, isZod, zodToJSONSchema } from "./zod.js";

export {
  AgentError, AgentshapeError, InputError, InternalError, InvalidOutputError, NoOutputError,
  NotJSONError, ProfileError, SchemaError, UsageError,
};

/** The version of the Rust core inside. */
export const version = raw().version();

// ---- values to JSON text -------------------------------------------------

function refuseNonFinite(_key, v) {
  if (typeof v === "number" && !Number.isFinite(v)) {
    throw new NotJSONError(`${v} is not a JSON number`);
  }
  if (typeof v === "bigint") {
    throw new NotJSONError("a BigInt is not a JSON number (convert it to a Number or a string first)");
  }
  return v;
}

/**
 * A JavaScript value as JSON text, refusing what JSON cannot hold
 * (`NotJSONError`): NaN and the infinities (which `JSON.stringify` would
 * silently turn into `null`), BigInts, cycles, nesting deeper than the
 * engine's stack, and `undefined` or a function at the top.
 */
export function toJSONText(value, what = "value") {
  let text;
  try {
    text = JSON.stringify(value);
    // JSON.stringify writes NaN and the infinities as `null`: only text
    // with a `null` in it can hide one, and only that text is walked; the
    // replacer (which says what it found, but costs about 20 µs per 1.5 KB
    // instance) runs only when the walk finds one or meets a `toJSON`.
    if (text !== undefined && text.includes("null") && mayHideNonFinite(value)) {
      JSON.stringify(value, refuseNonFinite);
    }
  } catch (e) {
    if (e instanceof AgentshapeError) throw e;
    if (e instanceof RangeError) throw new NotJSONError(`${what}: nesting too deep for JSON`, { cause: e });
    throw new NotJSONError(`${what}: ${e.message}`, { cause: e });
  }
  if (text === undefined) throw new NotJSONError(`${what}: ${typeof value} is not a JSON value`);
  return text;
}

/**
 * `f()`, which hands the core's validator JSON text `toJSONText` made of a
 * value: the core's refusal of that text's depth is the value's, a
 * `NotJSONError` ("nesting too deep", as `check` and `mapBack` already
 * say), not an `InputError` about text the caller never wrote. Where
 * `JSON.stringify` has a depth limit of its own (Node 20's runs out of
 * stack before 10,000 levels) the value is refused there; Node 26's and
 * Deno's write a million levels, and the core's reader stops at 128.
 */
function ofValue(what, f) {
  try {
    return f();
  } catch (e) {
    if (e instanceof InputError && e.message.includes("recursion limit exceeded")) {
      throw new NotJSONError(`${what}: nesting too deep for JSON`, { cause: e });
    }
    throw e;
  }
}

/** Whether `v` holds NaN or an infinity, or a `toJSON` that could produce one. */
function mayHideNonFinite(v) {
  if (typeof v === "number") return !Number.isFinite(v);
  if (v === null || typeof v !== "object") return false;
  if (typeof v.toJSON === "function") return true;
  if (Array.isArray(v)) {
    for (const x of v) if (mayHideNonFinite(x)) return true;
    return false;
  }
  for (const k in v) if (Object.hasOwn(v, k) && mayHideNonFinite(v[k])) return true;
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/**
 * Text for the core: a string without lone surrogates (which UTF-8 cannot
 * carry: the encoder would replace them silently), or UTF-8 bytes.
 */
function textOf(text, what = "text") {
  if (typeof text === "string") {
    wellFormed(text, what);
    return text;
  }
  if (text instanceof Uint8Array || text instanceof ArrayBuffer) {
    try {
      return utf8.decode(text);
    } catch {
      throw new InputError(`${what}: bytes are not UTF-8 text`);
    }
  }
  throw new TypeError(`${what} must be a string or UTF-8 bytes (Uint8Array), not ${typeof text}`);
}

/** `InputError` when the string `text` holds a lone surrogate. */
function wellFormed(text, what) {
  if (!text.isWellFormed()) {
    throw new InputError(`${what} holds a lone surrogate (UTF-16 that is not Unicode text)`);
  }
}

// isValidAt's flags (crates/wasm/src/validate.rs).
const VALID = 1;
const HOLDS_REPLACEMENT = 2;
const NOT_ANSWERED = 4;

/**
 * `raw.isValid(text)` with the string written straight into the module's
 * memory (`writeText`) and no well-formedness walk unless its bytes hold
 * U+FFFD, or its units a lone surrogate (Note [Text written in place] in
 * crates/wasm/src/bindings.rs). The same answers and errors as
 * `isValid(textOf(text))`.
 */
function isValidString(validator, text) {
  const flags = call((b) => {
    const raw = validator._raw;
    const written = writeText(b, text);
    // A lone surrogate, found as the module made the units UTF-8.
    return written < 0 ? HOLDS_REPLACEMENT | NOT_ANSWERED : raw.isValidAt(written);
  });
  if (flags & HOLDS_REPLACEMENT) wellFormed(text, "instance");
  if (flags & NOT_ANSWERED) return call(() => validator._raw.isValid(text));
  return (flags & VALID) !== 0;
}

/** Strings longer than this (UTF-16 units) cross as `&str`, not in place. */
const IN_PLACE_UNITS = 1 << 20;

let lastView = null;

/**
 * A view of `room` bytes at `ptr` in the module's memory: the last one
 * again when it still fits (a typed array per call was measurable). It may
 * reach past `room`, but `encodeInto` writes at most three bytes per unit
 * of the text, which `room` is, and the buffer holds that much.
 */
function viewAt(b, ptr, room) {
  const buffer = memoryOf(b).buffer;
  const v = lastView;
  if (v !== null && v.buffer === buffer && v.byteOffset === ptr && v.length >= room) return v;
  return (lastView = new Uint8Array(buffer, ptr, room));
}

// The numbers an in-place export answers besides an answer's length
// (crates/wasm/src/bindings.rs, Note [Answers read in place]).
// -1: the text held U+FFFD; -2 - n: an error, its n bytes in the out buffer.
const NOT_ANSWERED_IN_PLACE = -1;

/** Decodes answers that are not ASCII (or all of them outside Node). */
const answerDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
const utf16Decoder = new TextDecoder("utf-16le", { ignoreBOM: true });

// An answer's encodings.
const UTF8 = 0;
const ASCII = 1;
const UTF16 = 2;
// Asked for only where `Buffer` is (`extract`'s result): ASCII and the
// characters U+00A0 to U+00FF, one byte each.
const LATIN1 = 3;

/**
 * Node's (and Bun's) `Buffer`, whose `latin1` slice makes a one-byte
 * string of ASCII bytes several times faster than `TextDecoder` (Note
 * [Answers read in place]); `null` elsewhere.
 */
const NodeBuffer = typeof globalThis.Buffer === "function" && typeof globalThis.Buffer.from === "function"
  ? globalThis.Buffer
  : null;

let memoryAsBuffer = null;

/** The answer an in-place export wrote into the module's out buffer. */
function answerText(b, code) {
  // The code: the answer's bytes times four, plus its encoding
  // (crates/wasm/src/bindings.rs, Note [Answers read in place]).
  const encoding = code % 4;
  const len = (code - encoding) / 4;
  const ptr = b.outBuffer();
  if (encoding !== UTF8 && NodeBuffer !== null) {
    const memory = bufferOf(b);
    if (encoding === ASCII || encoding === LATIN1) return latin1Slice !== null ? latin1Slice.call(memory, ptr, ptr + len) : memory.toString("latin1", ptr, ptr + len);
    return ucs2Slice !== null ? ucs2Slice.call(memory, ptr, ptr + len) : memory.toString("utf16le", ptr, ptr + len);
  }
  return (encoding === UTF16 ? utf16Decoder : answerDecoder).decode(new Uint8Array(memoryOf(b).buffer, ptr, len));
}

/**
 * Node's own `Buffer` method `name` (the reader or writer of one encoding
 * that `toString(encoding, start, end)` and `write(s, at, encoding)` call
 * after checking their arguments); `null` where `Buffer` has no such
 * method.
 */
function bufferMethod(name) {
  return typeof NodeBuffer?.prototype[name] === "function" ? NodeBuffer.prototype[name] : null;
}

const latin1Slice = bufferMethod("latin1Slice");
const ucs2Slice = bufferMethod("ucs2Slice");

/**
 * The answer code of a two-byte ASCII answer (Note [Answers read in
 * place]): from `validateAt`, whose answers are JSON arrays, only `[]`.
 */
const EMPTY_LIST = 2 * 4 + ASCII;
/** What `inPlace` answers for `validateAt`'s `[]` when asked to: no copy out, no parse. */
const NO_VIOLATIONS = "[]";

/**
 * `at(b, len)` on the string `text` encoded straight into the module's
 * memory, for `extract`, `repair` and `validateJson` (Note [Text written
 * in place] in crates/wasm/src/bindings.rs), its answer read out of the
 * module's memory (Note [Answers read in place] there). When the bytes
 * hold U+FFFD the string is checked (a lone surrogate is an `InputError`)
 * and `plain(b, text)` answers, as it does for long strings and for bytes
 * (`textOf`). `rest`: keep where `extract`'s result has its fields
 * (`lastRest`); `empty`: what to answer, unread, for an answer of
 * `EMPTY_LIST` (`validateAt`'s `[]`), where `null` reads it out as any other.
 */
function inPlace(text, at, plain, rest = false, empty = null) {
  if (typeof text === "string" && text.length <= IN_PLACE_UNITS) {
    const out = call((b) => {
      const written = writeText(b, text);
      if (written < 0) return null;
      const code = at(b, written);
      if (code === EMPTY_LIST && empty !== null) return empty;
      if (code >= 0) {
        if (rest) lastRest = b.restInfo();
        return answerText(b, code);
      }
      if (code === NOT_ANSWERED_IN_PLACE) return null;
      return { failure: answerDecoder.decode(new Uint8Array(memoryOf(b).buffer, b.outBuffer(), -code - 2)) };
    });
    if (typeof out === "string") return out;
    if (out !== null) {
      const nl = out.failure.indexOf("\n");
      throw errorNamed(out.failure.slice(0, nl), out.failure.slice(nl + 1));
    }
  }
  const t = textOf(text);
  return call((b) => plain(b, t));
}

/**
 * `text` written into the module's text buffer as UTF-8: its length in
 * bytes, or -1 when it holds a lone surrogate (found so where `Buffer` is;
 * elsewhere `encodeInto` makes it U+FFFD, which the export reading the
 * text then declines: Note [Text written in place]). Where
 * `Buffer` is, the string's UTF-16 units are copied into the module's
 * memory and the module makes them UTF-8 (Note [Text written as UTF-16]
 * in crates/wasm/src/bindings.rs): `encodeInto` took six times as long.
 */
function writeText(b, text) {
  if (NodeBuffer !== null) {
    const at = b.unitsBuffer(text.length);
    const memory = bufferOf(b);
    if (ucs2Write !== null) ucs2Write.call(memory, text, at);
    else memory.write(text, at, "utf16le");
    return b.textFromUnits(text.length);
  }
  const room = text.length * 3;
  return encoder.encodeInto(text, viewAt(b, b.textBuffer(room), room)).written;
}

/** The writer of UTF-16 units: half the time of `write(s, at, "utf16le")` for a short reply. */
const ucs2Write = bufferMethod("ucs2Write");

/** The instance `memoryAsBuffer` is over. */
let bufferFor = null;

/**
 * A `Buffer` over the module's whole memory, made again for another
 * instance or when the memory grew (its old `ArrayBuffer` is then
 * detached, and a view of it has length 0): no lookup of the memory per
 * call.
 */
function bufferOf(b) {
  if (bufferFor !== b || memoryAsBuffer.length === 0) {
    memoryAsBuffer = NodeBuffer.from(memoryOf(b).buffer);
    bufferFor = b;
  }
  return memoryAsBuffer;
}

/**
 * Where the fields after the value start in the result `inPlace` just
 * read for `extract`, and which common fields they are: their length
 * times 1024 plus their number, 0 when there is none to use
 * (crates/wasm/src/extract.rs, Note [The fields apart]).
 */
let lastRest = 0;

/** Parsed fields of common results, by the module's number for them. */
let restById = [];
/** The module instance those numbers are from (`generation()`). */
let restGeneration = -1;

/** The fields of a result from their text (`,"method":...}`); `null` when the text is not fields. */
function restFields(text) {
  return text.startsWith(',"method":"') ? JSON.parse("{" + text.slice(1)) : null;
}

/** The `Extraction` of a result's JSON text (Note [The fields apart]). */
function extractionOf(text) {
  const info = lastRest;
  lastRest = 0;
  if (info > 0) {
    const id = info % 1024;
    // `{"value":` is 9 bytes; the value runs to the fields.
    const split = text.length - (info - id) / 1024;
    if (restGeneration !== generation()) {
      restById = [];
      restGeneration = generation();
    }
    let fields = id > 0 ? restById[id] : undefined;
    if (fields === undefined) {
      fields = restFields(text.slice(split));
      // Numbered fields are a common result's (no coercion, error,
      // warning or run): kept, and shared by every result that has them.
      if (id > 0 && fields !== null) {
        fields.shared = true;
        restById[id] = fields;
      }
    }
    if (fields !== null) return new Extraction(fields, JSON.parse(text.slice(9, split)));
  }
  const o = JSON.parse(text);
  return new Extraction(o, o.value);
}

/** Options as JSON text, `undefined` members dropped. */
function optionsText(options, allowed, what) {
  const out = {};
  for (const [k, v] of Object.entries(options ?? {})) {
    if (v === undefined) continue;
    if (!allowed.includes(k)) {
      throw new UsageError(`${what}: unknown option \`${k}\` (known: ${allowed.join(", ")})`);
    }
    out[k] = v;
  }
  return toJSONText(out, what);
}

// ---- schemas ---------------------------------------------------------------

/** The JSON Schema text of a schema given as an object, a boolean, JSON text or a Zod schema. */
function schemaText(schema) {
  if (typeof schema === "string") {
    if (!schema.trimStart().startsWith("{")) {
      throw new SchemaError("a schema string must be JSON text (there are no schema paths in JavaScript: read the file yourself)");
    }
    return textOf(schema, "schema");
  }
  if (isZod(schema)) return toJSONText(zodToJSONSchema(schema), "schema");
  if (typeof schema === "boolean" || (schema !== null && typeof schema === "object" && !Array.isArray(schema))) {
    return toJSONText(schema, "schema");
  }
  throw new SchemaError("a schema is an object, a boolean, JSON text, a Zod 4 schema or a Validator");
}

const VALIDATOR_OPTIONS = ["draft", "assertFormats", "remotes", "codegen"];

/**
 * A JSON Schema compiled once, validated against many times: draft-07,
 * 2019-09 and 2020-12 (from `$schema`, default 2020-12, or `draft`), with
 * the schema's `x-invariants` (CEL rules) checked after the schema passes.
 */
export class Validator {
  #schema;
  #options;
  #raw;
  #gen;
  #check;

  /**
   * @param schema an object, JSON text, a Zod 4 schema, or a Validator
   * @param options `{draft, assertFormats, remotes, codegen}`: `remotes` maps
   *   URIs to the documents behind `$ref`s to them (nothing is ever
   *   fetched); `codegen: false` keeps objects on the core's path (Note
   *   [Validators compiled to JavaScript] in compile.js)
   */
  constructor(schema, options = {}) {
    if (schema instanceof Validator) {
      this.#schema = schema.#schema;
    } else {
      this.#schema = schemaText(schema);
    }
    const { codegen = true, ...rest } = options ?? {};
    if (typeof codegen !== "boolean") throw new UsageError("Validator options: `codegen` is true or false");
    this.#options = optionsText(rest, VALIDATOR_OPTIONS, "Validator options");
    this.#compile();
    // Only after the core compiled it: a schema the core refuses is a
    // SchemaError whatever JavaScript would make of it.
    this.#check = codegen ? compileCheck(JSON.parse(this.#schema), rest) : null;
  }

  /**
   * Where `isValid` and `validate` judge objects: `"javascript"` when the
   * schema was compiled to a JavaScript check, `"webassembly"` when objects
   * go to the core as JSON text.
   */
  get compiledTo() {
    return this.#check === null ? "webassembly" : "javascript";
  }

  #compile() {
    this.#raw = call((b) => new b.RawValidator(this.#schema, this.#options));
    this.#gen = generation();
  }

  /** The compiled handle in the current instance (recompiled after a reset). */
  get _raw() {
    if (this.#gen !== generation()) this.#compile();
    return this.#raw;
  }

  /** Every violation of `instance` (schema errors, then failed invariants), sorted; `[]` when valid. */
  validate(instance) {
    // The compiled check answers the yes; the errors always come from the core.
    if (this.#check !== null && this.#check(instance) === true) return [];
    return ofValue("instance", () => this.validateJson(toJSONText(instance, "instance")));
  }

  /** `true` when `validate(instance)` would be empty; cheaper. */
  isValid(instance) {
    if (this.#check !== null) {
      const yes = this.#check(instance);
      if (yes !== null) return yes;
    }
    return ofValue("instance", () => isValidString(this, toJSONText(instance, "instance")));
  }

  /** `validate` on JSON text as it came (a line of JSONL): no object is built on either side. */
  validateJson(text) {
    // A string is written into the module and answered in place (Note
    // [Text written in place] in crates/wasm/src/bindings.rs), as for
    // `isValidJson`.
    if (typeof text === "string") {
      const raw = this._raw;
      const out = inPlace(text, (_, len) => raw.validateAt(len, NodeBuffer !== null), (_, t) => raw.validate(t), false, NO_VIOLATIONS);
      return out === NO_VIOLATIONS ? [] : JSON.parse(out);
    }
    const t = textOf(text, "instance");
    return JSON.parse(call(() => this._raw.validate(t)));
  }

  /** `isValid` on JSON text; `InputError` when it is not JSON. */
  isValidJson(text) {
    if (typeof text === "string") return isValidString(this, text);
    const t = textOf(text, "instance");
    return call(() => this._raw.isValid(t));
  }

  /**
   * Schema-aligned coercions (`"90%"` → 90, `"Critical"` → `"critical"`,
   * `x` → `[x]`): `{value, coercions}`.
   */
  coerce(instance) {
    const t = toJSONText(instance, "instance");
    const [value, coercions] = JSON.parse(ofValue("instance", () => call(() => this._raw.coerce(t))));
    return { value, coercions };
  }

  /** The schema as given (a fresh copy). */
  get schema() {
    return JSON.parse(this.#schema);
  }
}

/** `validate(schema, instance)`: compile and validate once (keep a `Validator` for many). */
export function validate(schema, instance) {
  return cachedValidator(schema).validate(instance);
}

// A schema object used again is compiled once: keyed by the object, checked
// against its JSON text (a mutated object is compiled again).
const compiled = new WeakMap();

function cachedValidator(schema) {
  if (schema instanceof Validator) return schema;
  if (schema === null || typeof schema !== "object") return new Validator(schema);
  const text = isZod(schema) ? null : schemaText(schema);
  const hit = compiled.get(schema);
  if (hit && (text === null || hit.text === text)) return hit.validator;
  const validator = new Validator(text ?? schema);
  compiled.set(schema, { text, validator });
  return validator;
}

// ---- extraction --------------------------------------------------------------

/** The run summary of a transcript: every field of `agentshape parse --json`. */
export class RunSummary {
  constructor(summary, failed) {
    Object.assign(this, summary);
    Object.defineProperty(this, "failed", { value: failed, enumerable: false });
  }
}

/**
 * The outcome of extracting one reply (or run): `value` (`null` when
 * nothing was found: `method` is then `"none"`), `method` (`structured`,
 * `fenced`, `bare`, `repaired`, `markers`, `none`), `valid`, `errors`,
 * `repairs`, `coercions`, `warnings`, and `run` for a transcript.
 */
export class Extraction {
  #exitCode;
  #agentError;
  constructor(o, value = o.value) {
    // Read member by member: an object rest (`...fields`) copied the
    // result into a new object each call (1% of `extract`'s profile).
    // Fields from the cache (`o.shared`, Note [The fields apart] in
    // crates/wasm/src/extract.rs) are shared: their arrays are copied.
    const exitCode = o.exit_code;
    this.value = value ?? null;
    this.method = o.method;
    this.valid = o.valid;
    if (o.shared === true) {
      this.repairs = o.repairs.slice();
      this.coercions = [];
      this.errors = [];
      this.warnings = [];
    } else {
      this.repairs = o.repairs;
      this.coercions = o.coercions;
      this.errors = o.errors;
      this.warnings = o.warnings ?? [];
    }
    if (o.run !== undefined) this.run = new RunSummary(o.run, exitCode === 3);
    this.#exitCode = exitCode;
    this.#agentError = o.agent_error;
  }

  /** The CLI's exit code: 0 valid, 1 found but invalid, 2 nothing found, 3 the agent reported an error. */
  get exitCode() {
    return this.#exitCode;
  }

  /** Throw the outcome's error (`AgentError`, `NoOutputError`, `InvalidOutputError`), or return `this`. */
  raiseForOutcome() {
    switch (this.#exitCode) {
      case 3:
        throw new AgentError(this.#agentError);
      case 2:
        throw new NoOutputError("no structured output found");
      case 1: {
        const first = this.errors[0] ? `: ${this.errors[0].instance_path} ${this.errors[0].message}` : "";
        throw new InvalidOutputError(`${this.method} output is invalid (${this.errors.length} errors)${first}`);
      }
      default:
        return this;
    }
  }

  /** Every field as `agentshape extract --json` prints it. */
  toJSON() {
    const out = {
      value: this.value, method: this.method, repairs: this.repairs,
      coercions: this.coercions, valid: this.valid, errors: this.errors,
    };
    if (this.warnings.length) out.warnings = this.warnings;
    if (this.run !== undefined) out.run = { ...this.run };
    return out;
  }
}

const EXTRACT_OPTIONS = ["profile", "coerce", "format"];

/** Compiled extraction settings (schema, profile, coercion, transcript format), reused over many texts. */
export class Extractor {
  #validator;
  #options;
  #raw;
  #gen;

  /** @param options `{schema, profile, coerce, format}` */
  constructor(options = {}) {
    const { schema, ...rest } = options ?? {};
    this.#validator = schema === undefined ? null : cachedValidator(schema);
    this.#options = optionsText(rest, EXTRACT_OPTIONS, "extract options");
    this.#compile();
  }

  #compile() {
    const v = this.#validator;
    this.#raw = call((b) => (v ? v._raw.extractor(this.#options) : new b.RawExtractor(this.#options)));
    this.#gen = generation();
  }

  /** Extract from one reply (or transcript, with `format`). */
  extract(text) {
    if (this.#gen !== generation()) this.#compile();
    const raw = this.#raw;
    return extractionOf(inPlace(text, (_, len) => raw.extractAt(len, NodeBuffer !== null), (_, t) => raw.extract(t), true));
  }
}

/**
 * The structured value out of one LLM reply: native structured output,
 * fenced JSON (last first), bare JSON in prose, repaired JSON, the
 * profile's markers, in that order; with a schema the first candidate that
 * validates wins.
 *
 * @param text the reply (a string or UTF-8 bytes)
 * @param options `{schema, profile, coerce, format}`
 */
export function extract(text, options) {
  const plain = options === undefined || options === null ||
    Object.entries(options).every(([k, v]) => (v === undefined || v === false) && (k === "schema" || EXTRACT_OPTIONS.includes(k)));
  if (plain) {
    return extractionOf(inPlace(text, (b, len) => b.extractPlainAt(len, NodeBuffer !== null), (b, t) => b.extractPlain(t), true));
  }
  return new Extractor(options).extract(text);
}

/**
 * The repaired JSON text of the value in `text` (compact, keys in the
 * text's order): a drop-in for `jsonrepair(text)`, which also throws when
 * there is nothing to repair (here `NoOutputError`).
 */
export function repair(text) {
  return inPlace(text, (b, len) => b.repairAt(len, NodeBuffer !== null), (b, t) => b.repair(t));
}

/**
 * For the AI SDK: `experimental_repairText: agentshapeRepair()` in
 * `generateObject`/`streamObject`. The model's text is extracted and
 * repaired (with `schema`, the candidate that validates wins, coerced when
 * `coerce`); returns the JSON text, or `null` (the SDK then throws its own
 * error) when there is nothing to use.
 */
export function agentshapeRepair(options = {}) {
  const given = Object.values(options ?? {}).some((v) => v !== undefined && v !== false);
  const extractor = given ? new Extractor(options) : null;
  return async ({ text }) => {
    try {
      if (extractor === null) return repair(text);
      const e = extractor.extract(text);
      return e.method === "none" ? null : JSON.stringify(e.value);
    } catch (e) {
      if (e instanceof AgentshapeError) return null;
      throw e;
    }
  };
}

/**
 * For the AI SDK's `generateText`/`streamText`: `output:
 * agentshapeOutput({ schema })`, an `Output` (the interface of the SDK's
 * `Output.object`, ai 6 and 7) whose reply is extracted and repaired here.
 *
 * Note [An Output, not only a hook]: ai 7 deprecates `generateObject`
 * and `streamObject`, the only calls with a `repairText` hook, for
 * `generateText` with an `output` setting, which has none: the SDK's
 * `Output.object` parses the reply with `JSON.parse` and throws on a
 * fence or a trailing comma. This `Output` asks the provider for JSON
 * with the schema, as `Output.object` does, then takes the reply through
 * `extract` (with the schema: the first candidate that validates wins,
 * coerced when `coerce`). A Zod schema then parses the value, as
 * `Output.object` parses it, so its defaults, transforms and refinements
 * (which its JSON Schema cannot say) apply. A reply
 * with nothing to use throws `NoOutputError`, one that does not validate
 * `InvalidOutputError` (from Zod too, its error as `cause`), each with
 * the `text`, the `extraction` (errors to send back in a retry) and the
 * SDK's `response`, `usage` and `finishReason`. A partial reply (while
 * streaming) is the value of what has come so far, cut containers
 * closed, unvalidated, as the SDK's own partials are.
 */
export function agentshapeOutput(options = {}) {
  const { schema, name, description, ...rest } = options ?? {};
  const extractor = new Extractor({ schema, ...rest });
  const zod = isZod(schema) ? schema : null;
  // What the provider is asked for: a Zod schema as the SDK sends it
  // (draft-07, every object closed), any other as it is.
  let jsonSchema;
  if (zod !== null) jsonSchema = closedObjects(zodToJSONSchema(zod, "draft-7"));
  else if (schema instanceof Validator) jsonSchema = schema.schema;
  else if (schema !== undefined) jsonSchema = JSON.parse(schemaText(schema));
  const format = { type: "json" };
  if (jsonSchema !== undefined) format.schema = jsonSchema;
  if (name != null) format.name = name;
  if (description != null) format.description = description;
  return {
    name: "object",
    responseFormat: Promise.resolve(format),
    async parseCompleteOutput({ text }, context) {
      const e = extractor.extract(text);
      let failure = null;
      try {
        e.raiseForOutcome();
      } catch (err) {
        failure = err;
      }
      let value = e.value;
      if (failure === null && zod !== null) {
        const parsed = await zod.safeParseAsync(value);
        if (parsed.success) value = parsed.data;
        else failure = new InvalidOutputError(`the value does not parse with the Zod schema: ${parsed.error.message}`, { cause: parsed.error });
      }
      if (failure !== null) {
        Object.assign(failure, { text, extraction: e, response: context?.response, usage: context?.usage, finishReason: context?.finishReason });
        throw failure;
      }
      return value;
    },
    async parsePartialOutput({ text }) {
      try {
        const e = extract(text);
        return e.method === "none" ? undefined : { partial: e.value };
      } catch (err) {
        if (err instanceof AgentshapeError) return undefined;
        throw err;
      }
    },
    createElementStreamTransform() {
      return undefined;
    },
  };
}

// ---- transcripts ------------------------------------------------------------

function summaryOf(json) {
  const { failed, summary } = JSON.parse(json);
  return new RunSummary(summary, failed);
}

function decodeArgs(options) {
  const { format = "auto", maxLineBytes = 0, ...rest } = options ?? {};
  if (Object.keys(rest).length) throw new UsageError(`unknown option \`${Object.keys(rest)[0]}\` (known: format, maxLineBytes)`);
  if (typeof format !== "string") throw new UsageError("format is a string");
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 0 || maxLineBytes > 0xffffffff) {
    throw new UsageError("maxLineBytes is a whole number of bytes");
  }
  return [format, maxLineBytes];
}

/**
 * Decode an agent transcript (Claude Code stream-json, Codex JSONL, the
 * agents' own session files, a provider response body, plain text) into
 * its run summary. Lines that are not JSON (or not UTF-8, from bytes) are
 * skipped and counted: a transcript is data, never an error.
 */
export function parse(transcript, options) {
  const [format, max] = decodeArgs(options);
  if (typeof transcript === "string") {
    const t = textOf(transcript, "transcript");
    return summaryOf(call((b) => b.parse(t, format, max)));
  }
  if (transcript instanceof Uint8Array || transcript instanceof ArrayBuffer) {
    const bytes = transcript instanceof Uint8Array ? transcript : new Uint8Array(transcript);
    return summaryOf(call((b) => b.parseBytes(bytes, format, max)));
  }
  throw new TypeError("transcript must be a string or bytes (Uint8Array)");
}

/** An incremental decoder: `feed` chunks of any size, `finish()` for the run summary. */
export class Decoder {
  #raw;
  #gen;
  constructor(options) {
    const [format, max] = decodeArgs(options);
    this.#raw = call((b) => new b.RawDecoder(format, max));
    this.#gen = generation();
  }

  #handle() {
    if (this.#gen !== generation()) {
      throw new InternalError("the WebAssembly instance was reset after a trap: this decoder's state is lost");
    }
    return this.#raw;
  }

  /** Decode `chunk` (a string or bytes); the events of the lines it completed. */
  feed(chunk) {
    const d = this.#handle();
    if (typeof chunk === "string") {
      const t = textOf(chunk, "chunk");
      return JSON.parse(call(() => d.feed(t)));
    }
    if (chunk instanceof Uint8Array) return JSON.parse(call(() => d.feedBytes(chunk)));
    throw new TypeError("chunk must be a string or bytes (Uint8Array)");
  }

  /** Flush the last line; the run summary. The decoder cannot be fed after this. */
  finish() {
    const d = this.#handle();
    return summaryOf(call(() => d.finish()));
  }
}

function feedLine(decoder, line) {
  decoder.feed(line);
  const last = typeof line === "string" ? line.charCodeAt(line.length - 1) : line[line.length - 1];
  if (last !== 10) decoder.feed("\n");
}

/**
 * The run summary of a stream of lines (strings or bytes, with or without
 * their newline): an iterable gives the summary, an async iterable (a
 * Node `readline` interface, a web stream of lines) a promise of it.
 */
export function decodeLines(lines, options) {
  const decoder = new Decoder(options);
  if (lines != null && typeof lines[Symbol.asyncIterator] === "function") {
    return (async () => {
      for await (const line of lines) feedLine(decoder, line);
      return decoder.finish();
    })();
  }
  if (lines == null || typeof lines[Symbol.iterator] !== "function") {
    throw new TypeError("lines must be an iterable or async iterable of strings or bytes");
  }
  for (const line of lines) feedLine(decoder, line);
  return decoder.finish();
}

// ---- check, lint, fix -----------------------------------------------------------

const CHECK_OPTIONS = ["profile", "contradictions", "items", "key", "compare", "nearLines"];

function reportOf(json) {
  const { contradiction_report: contradictionReport, ...rest } = JSON.parse(json);
  return { ...rest, contradictionReport };
}

/**
 * `check(schema, instance)`: the schema's violations and failed
 * `x-invariants` of one output: `{ok, errors}`.
 */
export function check(schema, instance) {
  const v = cachedValidator(schema);
  const values = `[${toJSONText(instance, "instance")}]`;
  const r = reportOf(call(() => v._raw.check(values, '{"contradictions":false}')));
  return { ok: r.ok, errors: r.errors["0"] };
}

/**
 * The Python package's `check(values, ...)`: sibling outputs (an array, named
 * "0", "1", ..., or `{name: output}`), each validated with its invariants,
 * then items at `items` with the same `key` and different `compare` fields
 * reported as contradictions. `{ok, sources, errors, contradictions, contradictionReport}`.
 */
export function checkAll(values, options = {}) {
  const { schema, ...rest } = options ?? {};
  const valueOf = (x) => (x instanceof Extraction ? x.value : x);
  let list = values;
  if (Array.isArray(values)) {
    list = values.map(valueOf);
  } else if (values !== null && typeof values === "object") {
    list = Object.fromEntries(Object.entries(values).map(([k, x]) => [k, valueOf(x)]));
  }
  const text = toJSONText(list, "values");
  const opts = optionsText(rest, CHECK_OPTIONS, "check options");
  if (schema === undefined) return reportOf(call((b) => b.checkValues(text, opts)));
  const v = cachedValidator(schema);
  return reportOf(call(() => v._raw.check(text, opts)));
}

/** What `provider`'s structured-output feature rejects or ignores in `schema`: `{provider, accepted, findings}`. */
export function lint(schema, provider) {
  const s = schemaText(schema);
  return JSON.parse(call((b) => b.lint(s, String(provider))));
}

/**
 * A schema `provider` accepts: `{provider, schema, wrapped, changes,
 * findings_before, findings}`, and `mapBack(answer)`, which turns an answer
 * to the fixed schema back into the original's shape (validate it against
 * the original).
 */
export function fix(schema, provider) {
  const s = schemaText(schema);
  const p = String(provider);
  const out = JSON.parse(call((b) => b.fix(s, p)));
  Object.defineProperty(out, "mapBack", {
    enumerable: false,
    value: (answer) => {
      const a = toJSONText(answer, "answer");
      return JSON.parse(call((b) => b.mapBack(s, p, a)));
    },
  });
  return out;
}

