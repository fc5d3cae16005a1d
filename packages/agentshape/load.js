// Loading the one `.wasm` without a bundler plugin: it sits next to this
// file (`new URL(..., import.meta.url)`), read with `node:fs` when that URL
// is a `file:` one (Node, Deno, Bun: Note [Reading the .wasm]) and fetched
// otherwise (browsers), compiled once, instantiated through wasm-bindgen's
// `--target web` glue (`initSync` with the compiled module).
//
// Note [Reading the .wasm]: the scheme of the module's own URL decides, not
// a guess at the runtime (a `process` global, which Deno 2 and Bun define
// too, or a user agent). Node's `fetch` refuses `file:` URLs, while every
// runtime that loads modules from files has `node:fs` (Deno and Bun
// implement it); from `http(s):` only `fetch` works. Deno asks for read
// permission for the `.wasm` and for the glue's dynamic imports below, so
// `deno run --allow-read=node_modules/agentshape` is all it needs
// (test/runtimes.test.mjs runs the package in Deno and Bun).
//
// Note [A trap replaces the instance]: a WebAssembly trap (out of memory,
// or a bug reaching `unreachable`) throws a `WebAssembly.RuntimeError` in
// the caller, but leaves the instance as the trap found it: its stack
// pointer unwound nowhere, a `RefCell` borrowed forever, the allocator
// perhaps mid-update. Using it again could misbehave, so the package drops
// it: the call throws `InternalError` and the next call runs on a fresh
// instance of the same compiled module, made ahead in the background once
// the first is loaded (so it costs nothing at startup). Its glue is a
// second copy of the glue module (imported with a query string: the glue
// keeps its instance in a module variable, so one copy serves one instance). Objects compiled on the old instance
// (`Validator`, `Extractor`) compile again on first use; a `Decoder`'s state
// is lost and it says so.

import { InternalError, fromRaw } from "./errors.js";

const WASM = new URL("./dist/agentshape_wasm_bg.wasm", import.meta.url);
const GLUE = "./dist/agentshape_wasm.js";

async function compile() {
  if (WASM.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return WebAssembly.compile(await readFile(WASM));
  }
  const response = await fetch(WASM);
  if (typeof WebAssembly.compileStreaming === "function" &&
      response.headers.get("content-type")?.startsWith("application/wasm")) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

const started = performance.now();
const module = await compile();
const compiledAt = performance.now();

let copies = 0;
/** Each instance's memory, by its glue module. */
const memories = new WeakMap();
async function instantiate() {
  const n = copies++;
  const glue = await import(n === 0 ? GLUE : `${GLUE}?instance=${n}`);
  const exports = glue.initSync({ module });
  memories.set(glue, exports.memory);
  return glue;
}

/**
 * The memory of the instance whose glue is `b` (for text written in place:
 * Note [Text written in place] in crates/wasm/src/bindings.rs).
 */
export function memoryOf(b) {
  return memories.get(b);
}

let active = await instantiate();
let gen = 0;
/** The next instance, made ahead in the background. */
let spare = null;
let spareReady = null;

/** Load timings in milliseconds: compiling the module, instantiating it. */
export const loadTimes = Object.freeze({
  compileMs: compiledAt - started,
  instantiateMs: performance.now() - compiledAt,
});

/** The current instance's exports (the glue module). */
export function raw() {
  return active;
}

/** Bumped at every replacement: handles made before it are stale. */
export function generation() {
  return gen;
}

function prepareSpare() {
  spareReady = instantiate().then(
    (g) => { spare = g; },
    () => { spareReady = null; },
  );
  return spareReady;
}
prepareSpare();

/**
 * Run `f(exports)` on the current instance: a Rust error becomes its
 * `AgentshapeError`; a trap replaces the instance (Note [A trap replaces
 * the instance]) and becomes `InternalError`.
 */
export function call(f) {
  try {
    return f(active);
  } catch (e) {
    if (!(e instanceof WebAssembly.RuntimeError) && !(e instanceof RangeError && /stack/i.test(e.message))) {
      throw fromRaw(e);
    }
    gen++;
    if (spare !== null) {
      active = spare;
      spare = null;
      prepareSpare();
      throw new InternalError(`the WebAssembly module trapped (${e.message}); it was replaced, the next call runs on a fresh instance`, { cause: e });
    }
    // A trap before the spare has loaded (right after startup): no instance
    // is usable until it has (`ready()` resolves then).
    active = unavailable;
    prepareSpare().then(() => {
      if (spare !== null) {
        active = spare;
        spare = null;
        prepareSpare();
      }
    });
    throw new InternalError(`the WebAssembly module trapped (${e.message}); a fresh instance is loading (await ready())`, { cause: e });
  }
}

/** Stands in for the instance while a replacement loads. */
const unavailable = new Proxy({}, {
  get() {
    throw new InternalError("the WebAssembly module is being replaced after a trap: await ready() first");
  },
});

/**
 * Resolves when an instance is usable and its replacement is loaded (at
 * once, unless a trap's replacement is still loading, or right after
 * startup).
 */
export async function ready() {
  while (active === unavailable || spare === null) {
    await (spareReady ?? prepareSpare());
  }
}
