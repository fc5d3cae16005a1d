// Types of the `agentshape` package (hand-written; index.js is the source).

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Anything `toJSONSchema()` converts: a Zod 4 schema (zod is an optional peer dependency). */
export interface ZodLike {
  readonly _zod: object;
  toJSONSchema(): object;
}

/** A schema: a JSON Schema object or boolean, its JSON text, a Zod 4 schema, or a compiled `Validator`. */
export type Schema = object | boolean | string | ZodLike | Validator;

/** A built-in profile (`claude-ops`, `claude-loop`, `code-review`) or a profile file's text and the schemas it names. */
export type Profile = string | { toml: string; name?: string; schemas?: Record<string, object> };

/** Transcript formats (`_` or `-` alike). */
export type Format =
  | "auto" | "claude" | "codex" | "anthropic" | "openai_chat" | "openai-chat"
  | "openai_responses" | "openai-responses" | "ollama" | "gemini" | "text"
  | "claude_session" | "claude-session" | "codex_rollout" | "codex-rollout"
  | "gemini_chat" | "gemini-chat";

/** One reason an instance is invalid (the CLI's shape). */
export interface Violation {
  /** JSON Pointer to the offending part of the instance (`""` is the root). */
  instance_path: string;
  /** JSON Pointer to the failing keyword in the schema. */
  schema_path: string;
  /** One line for people. */
  message: string;
  /** Absent for a JSON Schema keyword; `invariant`, `number` or `text` otherwise. */
  kind?: "invariant" | "number" | "text";
  /** The CEL source of a failed `x-invariants` rule. */
  rule?: string;
}

/** One schema-aligned coercion. */
export interface Coercion {
  kind: string;
  instance_path: string;
  from: Json;
  to: Json;
}

/** Which step produced the value. */
export type Method = "structured" | "fenced" | "bare" | "repaired" | "markers" | "none";

/** The run summary of a transcript: every field of `agentshape parse --json`. */
export declare class RunSummary {
  readonly format: string;
  readonly session_id?: string;
  readonly model?: string;
  readonly output: string;
  readonly structured_output?: Json;
  readonly result?: Json;
  readonly saw_result: boolean;
  readonly error?: string;
  readonly error_category?: string;
  readonly warnings: string[];
  readonly skipped_lines: number;
  /** `true` when the agent reported an error (not a heuristic warning). */
  readonly failed: boolean;
  readonly [field: string]: unknown;
}

/** The outcome of extracting one reply (or run). */
export declare class Extraction<T = Json> {
  /** The value; `null` when nothing was found (`method` is then `"none"`). */
  readonly value: T | null;
  readonly method: Method;
  /** A value was found and (given a schema) it validates. */
  readonly valid: boolean;
  /** Every repair applied (`trailing_comma`, `truncated`, ...), in order of first use. */
  readonly repairs: string[];
  readonly coercions: Coercion[];
  readonly errors: Violation[];
  /** Several top-level values and which was taken; empty mostly. */
  readonly warnings: string[];
  /** The run summary, when the input was a transcript (`format`). */
  readonly run?: RunSummary;
  /** The CLI's exit code: 0 valid, 1 found but invalid, 2 nothing found, 3 the agent reported an error. */
  readonly exitCode: 0 | 1 | 2 | 3;
  /** Throws `AgentError`, `NoOutputError` or `InvalidOutputError`, or returns `this` when valid. */
  raiseForOutcome(): this;
  /** Every field as `agentshape extract --json` prints it. */
  toJSON(): object;
}

export interface ExtractOptions {
  schema?: Schema;
  profile?: Profile;
  coerce?: boolean;
  /** Decode `text` as a transcript of this format first. */
  format?: Format;
}

export interface ValidatorOptions {
  /** Force a draft: `draft-04`, `draft-06`, `draft-07`, `2019-09`, `2020-12`. */
  draft?: string;
  /** `format` as an assertion (`true`) or an annotation (`false`). */
  assertFormats?: boolean;
  /** The documents behind `$ref`s to other URIs, by URI (nothing is fetched). */
  remotes?: Record<string, object | boolean>;
  /**
   * `false`: never compile the schema to JavaScript; objects go to the core
   * as JSON text, every value read (NaN, BigInt, cycles refused wherever
   * they are). Default `true`: objects are judged by JavaScript written
   * from the schema where it can be (see `compiledTo`), reading only what
   * the schema reads, as ajv does.
   */
  codegen?: boolean;
}

/** A JSON Schema compiled once (with its `x-invariants`), validated against many times. */
export declare class Validator {
  constructor(schema: Schema, options?: ValidatorOptions);
  /** Every violation (schema errors, then failed invariants), sorted; `[]` when valid. */
  validate(instance: unknown): Violation[];
  isValid(instance: unknown): boolean;
  /** `validate` on JSON text as it came (`InputError` when it is not JSON). */
  validateJson(text: string | Uint8Array): Violation[];
  isValidJson(text: string | Uint8Array): boolean;
  coerce(instance: unknown): { value: Json; coercions: Coercion[] };
  readonly schema: object | boolean;
  /**
   * Where `isValid`/`validate` judge objects: `"javascript"` (the schema
   * compiled to a JavaScript check; errors still come from the core) or
   * `"webassembly"` (the schema uses what the JavaScript check does not
   * restate, `codegen: false`, or the page forbids `eval`).
   */
  readonly compiledTo: "javascript" | "webassembly";
}

/** Compiled extraction settings, reused over many texts. */
export declare class Extractor {
  constructor(options?: ExtractOptions);
  extract<T = Json>(text: string | Uint8Array): Extraction<T>;
}

export declare function extract<T = Json>(text: string | Uint8Array, options?: ExtractOptions): Extraction<T>;
export declare function validate(schema: Schema, instance: unknown): Violation[];
/** A drop-in for `jsonrepair(text)`: the repaired JSON text; throws `NoOutputError` when there is none. */
export declare function repair(text: string | Uint8Array): string;

export interface DecodeOptions {
  format?: Format;
  /** Lines longer than this are skipped (0: the core's default). */
  maxLineBytes?: number;
}
export declare function parse(transcript: string | Uint8Array | ArrayBuffer, options?: DecodeOptions): RunSummary;
/** An incremental transcript decoder. */
export declare class Decoder {
  constructor(options?: DecodeOptions);
  /** The events (`{type: "init" | "text" | "tool_use" | "result" | "skipped" | ...}`) of the lines `chunk` completed. */
  feed(chunk: string | Uint8Array): Array<{ type: string; [field: string]: unknown }>;
  finish(): RunSummary;
}
export declare function decodeLines(lines: Iterable<string | Uint8Array>, options?: DecodeOptions): RunSummary;
export declare function decodeLines(lines: AsyncIterable<string | Uint8Array>, options?: DecodeOptions): Promise<RunSummary>;

/** `check(schema, instance)`: schema errors and failed `x-invariants` of one output. */
export declare function check(schema: Schema, instance: unknown): { ok: boolean; errors: Violation[] };

export interface CheckOptions {
  schema?: Schema;
  profile?: Profile;
  contradictions?: boolean;
  items?: string;
  key?: string[];
  compare?: string[];
  nearLines?: number;
}
export interface CheckReport {
  ok: boolean;
  sources: string[];
  errors: Record<string, Violation[]>;
  contradictions: Array<Record<string, unknown>>;
  contradictionReport: Record<string, unknown> | null;
}
/** The Python package's `check(values, ...)`: invariants per output, contradictions across them. */
export declare function checkAll(values: unknown[] | Record<string, unknown>, options?: CheckOptions): CheckReport;

export type Provider =
  | "anthropic" | "claude-code" | "openai" | "openai-chat" | "openai-responses" | "gemini" | "ollama" | "local";
export interface Finding {
  pointer: string;
  severity: "error" | "ignored";
  rule: string;
  message: string;
  fixable: boolean;
}
export declare function lint(schema: Schema, provider: Provider): { provider: string; accepted: boolean; findings: Finding[] };
export declare function fix(schema: Schema, provider: Provider): {
  provider: string;
  schema: object;
  wrapped: boolean;
  changes: string[];
  findings_before: Finding[];
  findings: Finding[];
  /** An answer to the fixed schema in the original schema's shape. */
  mapBack(answer: unknown): Json;
};

/**
 * For the AI SDK's `generateObject`/`streamObject`: `repairText:
 * agentshapeRepair()` (ai 7), `experimental_repairText` (ai 6).
 */
export declare function agentshapeRepair(options?: ExtractOptions): (options: { text: string; error: unknown }) => Promise<string | null>;

/** The options of `agentshapeOutput`: `extract`'s, and the name and description sent with the schema. */
export interface OutputOptions extends ExtractOptions {
  name?: string;
  description?: string;
}

/**
 * An AI SDK `Output` (the interface of its `Output.object`, ai 6 and 7),
 * for `generateText`/`streamText`'s `output` setting.
 */
export interface AgentshapeOutput<T = Json> {
  readonly name: "object";
  // `any`: the SDK's JSONSchema7, which this package does not import.
  // deno-lint-ignore no-explicit-any
  readonly responseFormat: PromiseLike<{ type: "json"; schema?: any; name?: string; description?: string }>;
  /**
   * The reply extracted (with the schema: validated, coerced when asked,
   * parsed by a Zod schema). Throws `NoOutputError` or
   * `InvalidOutputError`, with the fields of `OutputFailure`.
   */
  parseCompleteOutput(options: { text: string }, context: { response: unknown; usage: unknown; finishReason: unknown }): Promise<T>;
  /** The value of a reply still streaming, unvalidated; `undefined` while there is none. */
  parsePartialOutput(options: { text: string }): Promise<{ partial: Json } | undefined>;
  createElementStreamTransform(): undefined;
}

/** What the errors `AgentshapeOutput.parseCompleteOutput` throws carry. */
export interface OutputFailure {
  /** The model's reply. */
  text: string;
  /** What `extract` made of it: its `errors` are what to send back in a retry. */
  extraction: Extraction;
  response: unknown;
  usage: unknown;
  finishReason: unknown;
}

/**
 * For the AI SDK's `generateText`/`streamText` (ai 7 deprecates
 * `generateObject`): `output: agentshapeOutput({ schema })` asks for JSON
 * with the schema as `Output.object` does, and reads the reply with
 * `extract`.
 */
export declare function agentshapeOutput<T = Json>(options?: OutputOptions): AgentshapeOutput<T>;

/** A JavaScript value as JSON text; `NotJSONError` for what JSON cannot hold. */
export declare function toJSONText(value: unknown, what?: string): string;

export declare const version: string;

/** Milliseconds spent compiling and instantiating the `.wasm` at import. */
export declare const loadTimes: { readonly compileMs: number; readonly instantiateMs: number };

/**
 * Resolves when the module is usable and a spare instance is loaded (after
 * a trap, `InternalError`, the next call runs on the spare).
 */
export declare function ready(): Promise<void>;

export declare class AgentshapeError extends Error {
  static readonly exitCode: number | null;
  readonly exitCode: number | null;
}
export declare class UsageError extends AgentshapeError {}
export declare class SchemaError extends UsageError {}
export declare class ProfileError extends UsageError {}
export declare class NotJSONError extends UsageError {}
export declare class InputError extends AgentshapeError {}
export declare class InvalidOutputError extends AgentshapeError {}
export declare class NoOutputError extends AgentshapeError {}
export declare class AgentError extends AgentshapeError {}
/** The WebAssembly module trapped; the next call runs on a fresh instance. */
export declare class InternalError extends AgentshapeError {}
