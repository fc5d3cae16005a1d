// The error classes: the Python package's exceptions, one per category of
// the CLI's exit codes (the Python package's Note [Exceptions and exit
// codes]). Every class has a static and an instance `exitCode`, so code that
// shells out to `agentshape` and code that calls this package can share
// their handling. Data is not an error: an invalid instance is a list of
// violations, a malformed transcript line a skipped-line count.

/** Base of every agentshape error. */
export class AgentshapeError extends Error {
  static exitCode = null;
  /**
   * The class's name (a subclass's too), read from the class: an own
   * `name` written in the constructor cost a sixth of a `NoOutputError`'s
   * making (`repair` throws one for each text without JSON, as
   * `jsonrepair` throws). Assigning one gives the error its own.
   */
  get name() {
    return this.constructor.name;
  }
  set name(value) {
    Object.defineProperty(this, "name", { value, writable: true, configurable: true, enumerable: true });
  }
  /** The CLI's exit code for this failure. */
  get exitCode() {
    return this.constructor.exitCode;
  }
}
/** A caller mistake: bad schema, profile, option or value (exit 64). */
export class UsageError extends AgentshapeError {
  static exitCode = 64;
}
/** The JSON Schema does not compile or is not JSON (exit 64). */
export class SchemaError extends UsageError {}
/** The profile is unknown or bad (exit 64). */
export class ProfileError extends UsageError {}
/** A value JSON cannot hold: NaN, a BigInt, a cycle, nesting too deep (exit 64). */
export class NotJSONError extends UsageError {}
/** Input that cannot be read: text with lone surrogates, JSON text that is not JSON (exit 66). */
export class InputError extends AgentshapeError {
  static exitCode = 66;
}
/** Structured output was found but does not validate (exit 1). */
export class InvalidOutputError extends AgentshapeError {
  static exitCode = 1;
}
/** No structured output was found (exit 2). */
export class NoOutputError extends AgentshapeError {
  static exitCode = 2;
}
/** The agent or provider reported an error (exit 3). */
export class AgentError extends AgentshapeError {
  static exitCode = 3;
}
/**
 * The WebAssembly module trapped (it ran out of memory, or hit a bug); the
 * package has already replaced the instance, so the next call works.
 */
export class InternalError extends AgentshapeError {
  static exitCode = 70;
}

const KINDS = {
  UsageError, SchemaError, ProfileError, NotJSONError, InputError,
  InvalidOutputError, NoOutputError, AgentError,
};

/**
 * The `AgentshapeError` for an error thrown by the module: the Rust side
 * throws a plain `Error` named after its kind (crates/wasm's Note [Errors
 * across the boundary]); anything else is returned as it is.
 */
export function fromRaw(e) {
  return e instanceof Error && Object.hasOwn(KINDS, e.name) ? errorNamed(e.name, e.message) : e;
}

/**
 * The `AgentshapeError` the module answered in place (Note [Answers read
 * in place] in crates/wasm/src/bindings.rs): its kind's name and message;
 * an unknown name is an `InternalError`.
 */
export function errorNamed(name, message) {
  return Object.hasOwn(KINDS, name) ? new KINDS[name](message) : new InternalError(`${name}: ${message}`);
}
