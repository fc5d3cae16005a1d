// Hostile inputs: a thrown AgentshapeError or a clear result, never a crash
// of the process, and the module still works after (the Python package's
// test_hostile.py, and what only JavaScript can hand over: lone surrogates,
// NaN, BigInt, cycles). A trap in the module replaces the instance (Note
// [A trap replaces the instance] in load.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AgentshapeError, Decoder, Extraction, Extractor, InputError, InternalError, NoOutputError, NotJSONError,
  Validator, check, checkAll, extract, fix, parse, repair, validate,
} from "../index.js";
import { call, memoryOf, raw, ready } from "../load.js";

const METHODS = new Set(["structured", "fenced", "bare", "repaired", "markers", "none"]);
const ARRAY = new Validator({ type: "array" });

function stillWorks() {
  assert.deepEqual(extract("{'a': 1,}").value, { a: 1 });
  assert.equal(ARRAY.isValid([1]), true);
}

/** Either a result or an AgentshapeError: never another throw. */
function resultOrError(f) {
  try {
    return f();
  } catch (e) {
    assert.ok(e instanceof AgentshapeError, `${e?.constructor?.name}: ${e?.message}`);
    return e;
  }
}

for (const [name, text] of [
  ["10k-deep arrays", "[".repeat(10_000)],
  ["100k-deep arrays", "[".repeat(100_000)],
  ["100k-deep objects", "{".repeat(100_000)],
  ["100k-deep members", '{"a":'.repeat(100_000)],
  ["closers then openers", "]".repeat(100_000) + "[".repeat(100_000)],
  ["100k quotes", '"'.repeat(100_000)],
  ["20k fences", "```json\n".repeat(20_000)],
  ["control characters", '\x00\x01\x02 {"a": "\x00"}'],
  ["astral text", '\ud7ff\ue000\u{10ffff} {"k": "\u{1f600}"}'],
]) {
  test(`hostile reply: ${name}`, () => {
    const e = resultOrError(() => extract(text));
    if (!(e instanceof Error)) assert.ok(METHODS.has(e.method));
    resultOrError(() => extract(text, { schema: { type: "object" }, coerce: true }));
    resultOrError(() => repair(text));
    resultOrError(() => parse(text));
    resultOrError(() => ARRAY.validateJson(text));
    stillWorks();
  });
}

test("10k-deep nesting as an instance and as a schema", () => {
  let deep = [];
  for (let i = 0; i < 10_000; i++) deep = [deep];
  const r = resultOrError(() => ARRAY.validate(deep));
  assert.ok(r instanceof AgentshapeError || Array.isArray(r));
  let schema = { type: "array" };
  for (let i = 0; i < 10_000; i++) schema = { items: schema };
  resultOrError(() => validate(schema, [[1]]));
  // Deeper than the engine's own stack: JSON.stringify gives up, cleanly.
  let deeper = [];
  for (let i = 0; i < 1_000_000; i++) deeper = [deeper];
  assert.throws(() => new Validator({ type: "array" }, { codegen: false }).validate(deeper), NotJSONError);
  // The compiled check reads the outer array only (its items are not
  // constrained); a schema that follows the nesting gives up to the core.
  assert.deepEqual(ARRAY.validate(deeper), []);
  const nested = new Validator({ $defs: { a: { type: "array", items: { $ref: "#/$defs/a" } } }, $ref: "#/$defs/a" });
  assert.equal(nested.compiledTo, "javascript");
  assert.throws(() => nested.validate(deeper), NotJSONError);
  stillWorks();
});

// A value JSON.stringify writes but the core does not read (deeper than its
// 128 levels) is the value's fault in every path and every runtime: Node
// 26's JSON.stringify writes even the million levels above, Node 20's runs
// out of stack before 10,000 (a NotJSONError too, from toJSONText).
test("an object deeper than the core reads is a NotJSONError, not an InputError", () => {
  let deep = [];
  for (let i = 0; i < 1_000; i++) deep = [deep];
  const follows = new Validator({ $defs: { a: { type: "array", items: { $ref: "#/$defs/a" } } }, $ref: "#/$defs/a" }, { codegen: false });
  const calls = {
    validate: () => follows.validate(deep),
    isValid: () => follows.isValid(deep),
    coerce: () => follows.coerce(deep),
    check: () => check({ type: "array" }, deep),
    checkAll: () => checkAll([deep]),
    mapBack: () => fix({ type: "object", properties: { a: { type: "array" } } }, "openai").mapBack({ a: deep }),
  };
  for (const [name, f] of Object.entries(calls)) {
    assert.throws(f, (e) => e instanceof NotJSONError && /nesting too deep|recursion limit/.test(e.message), name);
  }
  // JSON text stays the text's fault.
  assert.throws(() => follows.validateJson(JSON.stringify(deep)), InputError);
  stillWorks();
});

test("deep JSON text is an InputError, not a crash", () => {
  assert.throws(() => ARRAY.validateJson("[".repeat(100_000) + "]".repeat(100_000)), InputError);
  stillWorks();
});

test("a 100 MB string", () => {
  const big = "x".repeat(100 << 20);
  let e = extract('{"a": "' + big + '"}');
  assert.equal(e.method, "bare");
  assert.equal(e.value.a.length, big.length);
  e = extract('{"a": "' + big);
  assert.equal(e.method, "repaired");
  assert.deepEqual(e.repairs, ["truncated"]);
  e = null;
  const errs = new Validator({ properties: { a: { type: "integer" } } }).validate({ a: big });
  assert.equal(errs.length, 1);
  assert.ok(errs[0].message.length < 1000);
  assert.equal(parse(big).format, "text");
  stillWorks();
});

test("lone surrogates are an InputError, never silently replaced", () => {
  for (const text of ['{"a": "\ud800"}', "\udc00", 'ok \ud83d']) {
    assert.throws(() => extract(text), InputError);
    assert.throws(() => repair(text), InputError);
    assert.throws(() => parse(text), InputError);
    assert.throws(() => ARRAY.validateJson(text), InputError);
    assert.throws(() => ARRAY.isValidJson(text), /lone surrogate/);
    assert.throws(() => new Decoder().feed(text), InputError);
  }
  // Inside a value, JSON.stringify escapes it (`"\ud800"`): the core reads
  // the escape and says so, as for any reply (core's Note [Replaced text]).
  resultOrError(() => ARRAY.validate(["\ud800"]));
  const e = extract(String.raw`{"a": "\udc00x"}`);
  assert.deepEqual(e.value, { a: "\ufffdx" });
  assert.deepEqual(e.repairs, ["replaced_invalid_text"]);
  assert.equal(e.valid, false);
  assert.deepEqual(e.errors.map((x) => [x.instance_path, x.kind]), [["/a", "text"]]);
  stillWorks();
});

test("isValidJson's text written in place answers as isValid(text) did", () => {
  // Note [Text written in place] in crates/wasm/src/bindings.rs.
  const v = new Validator({ type: "object", properties: { a: { type: "string" } } });
  assert.equal(v.isValidJson('{"a": "\ufffd, a real replacement character"}'), true);
  assert.equal(v.isValidJson('{"a": "é ü 漢字 😀"}'), true);
  assert.equal(v.isValidJson('{"a": 1}'), false);
  assert.throws(() => v.isValidJson("{nope"), (e) => e instanceof InputError && /not JSON/.test(e.message));
  assert.throws(() => v.isValidJson('{"a": "\ud800"}'), (e) => e instanceof InputError && /lone surrogate/.test(e.message));
  assert.throws(() => v.isValidJson("{nope \udfff"), /lone surrogate/);
  // Over 16 MiB (the buffer is freed after), then a small one again.
  assert.equal(v.isValidJson(`{"a": "${"x".repeat(20 << 20)}"}`), true);
  assert.equal(v.isValidJson('{"a": "small"}'), true);
  assert.equal(v.isValidJson(new TextEncoder().encode('{"a": "b"}')), true);
  for (const t of ['{"a": "x"}', '{"a": 2}', "[]", '{"a": "\ufffd"}', "1e999999"]) {
    assert.equal(v.isValidJson(t), v.validateJson(t).length === 0, t);
  }
  stillWorks();
});

test("validateJson's text written in place answers as the &str export does", () => {
  // Note [Text written in place] in crates/wasm/src/bindings.rs: `validateAt`.
  const v = new Validator({
    type: "object", required: ["a"],
    properties: { a: { type: "string", maxLength: 3 }, n: { type: "integer", minimum: 0 } },
  });
  const texts = [
    '{"a": "ok"}', '{"a": 1}', '{"n": -1}', '{"a": "\ufffd, a real one", "n": 1.5}', '{"a": "é ü 漢字 😀"}',
    '{"a": "ÿÿÿÿ"}', '{"a": "\u0100\u0100\u0100\u0100"}', `{"a": "${"x".repeat(20 << 20)}"}`, "[]", "1e999999",
  ];
  const r = v._raw;
  for (const t of texts) {
    const want = JSON.parse(r.validate(t));
    assert.deepEqual(v.validateJson(t), want, t.slice(0, 40));
    assert.deepEqual(v.validateJson(new TextEncoder().encode(t)), want, t.slice(0, 40));
    assert.equal(v.isValidJson(t), want.length === 0, t.slice(0, 40));
  }
  // Messages quote the instance: its characters outside ASCII cross escaped or as Latin-1, and read back as they were.
  assert.match(v.validateJson('{"a": "漢字 é 😀 ÿ"}')[0].message, /^"漢字 é 😀 ÿ" is longer than 3 characters$/);
  assert.throws(() => v.validateJson("{nope"), (e) => e instanceof InputError && /not JSON/.test(e.message));
  assert.throws(() => v.validateJson('{"a": "\ud800"}'), (e) => e instanceof InputError && /lone surrogate/.test(e.message));
  stillWorks();
});

test("extract and repair of text written in place answer as the &str exports do", () => {
  // Note [Text written in place] in crates/wasm/src/bindings.rs: a string
  // of up to 1 Mi units is encoded into the module's buffer; one holding
  // U+FFFD, or longer, or bytes, takes the \`&str\` export.
  const texts = [
    'Sure:\n```json\n{"a": 1,}\n```', "no json here", '{"a": "\ufffd, a real one"}',
    'prose {"k": "é ü 漢字 😀"} more', `{"big": "${"y".repeat((1 << 20) + 10)}"}`,
    `{"over16": "${"x".repeat(17 << 20)}"}`, "{b: 1, 'a': [1,2,],}", "[1, 2]\n[3]",
  ];
  const b = raw();
  for (const t of texts) {
    assert.deepEqual(JSON.parse(JSON.stringify(extract(t))), JSON.parse(JSON.stringify(new Extraction(JSON.parse(b.extractPlain(t))))), t.slice(0, 40));
    let want;
    try { want = b.repair(t); } catch (e) { want = e.name; }
    let got;
    try { got = repair(t); } catch (e) { got = e instanceof NoOutputError ? "NoOutputError" : e.name; }
    assert.equal(got, want, t.slice(0, 40));
    const bytes = new TextEncoder().encode(t);
    assert.deepEqual(extract(bytes).value, extract(t).value);
  }
  // `repair` answers the text's characters as they are; `extract`'s
  // result crosses with them escaped, and its value holds them again; an
  // error is made once, with core's message (Note [Answers read in place]
  // in crates/wasm/src/bindings.rs).
  assert.equal(repair('x {"k": "é ü 漢字 😀", "n": 1,}'), '{"k":"é ü 漢字 😀","n":1}');
  // `text` written at the text buffer, `at(len)` called (an in-place
  // export): its answer's code and bytes.
  const answered = (text, at) => {
    const room = text.length * 3;
    const ptr = b.textBuffer(room);
    const { written } = new TextEncoder().encodeInto(text, new Uint8Array(memoryOf(b).buffer, ptr, room));
    const code = at(written);
    const len = (code - (code % 4)) / 4;
    return { code, bytes: new Uint8Array(memoryOf(b).buffer, b.outBuffer(), len) };
  };
  // In UTF-16 (Node's `Buffer`) and in UTF-8 (`TextDecoder`, as in a browser) alike.
  for (const utf16 of [true, false]) {
    const text = "y {'s': '\u00e9\u2014\ud83d\ude00 and more text past eight bytes', n: [1, 2,]}";
    const { code, bytes } = answered(text, (len) => b.repairAt(len, utf16));
    const answer = new TextDecoder(utf16 ? "utf-16le" : "utf-8").decode(bytes);
    assert.equal(answer, '{"s":"\u00e9\u2014\ud83d\ude00 and more text past eight bytes","n":[1,2]}');
    assert.equal(code % 4, utf16 ? 2 : 0);
    assert.equal(repair(text), '{"s":"\u00e9\u2014\ud83d\ude00 and more text past eight bytes","n":[1,2]}');
  }
  assert.deepEqual(extract("x {'k': '\u2014 😀 \u00ff'} y").value, { k: "\u2014 😀 \u00ff" });
  // `extract`'s result, which only `JSON.parse` reads, crosses in ASCII
  // (`\u` escapes), or where `Buffer` reads it in Latin-1: U+00A0 to
  // U+00FF as one byte each, the rest (U+0080 to U+009F too) escaped.
  for (const latin1 of [true, false]) {
    const text = 'x {"k": "caf\u00e9 \u0085\u00a0\u00ff\u0100\u2014\ud83d\ude00"} y';
    const { code, bytes } = answered(text, (len) => b.extractPlainAt(len, latin1));
    assert.equal(code % 4, latin1 ? 3 : 1);
    assert.ok(bytes.every((x) => x < 0x80 || (latin1 && x >= 0xa0)));
    const answer = new TextDecoder("latin1").decode(bytes);
    assert.deepEqual(JSON.parse(answer).value, { k: "caf\u00e9 \u0085\u00a0\u00ff\u0100\u2014\ud83d\ude00" });
    assert.equal(answer.includes("caf\u00e9"), latin1);
  }
  assert.throws(() => repair("just words"), (e) => e instanceof NoOutputError && e.message === "no JSON value found in the text");
  const ex = new Extractor({ schema: { type: "object", required: ["a"] } });
  assert.deepEqual(ex.extract('x {"a": "é 😀"} y').value, { a: "é 😀" });
  assert.equal(ex.extract('x {"a": "\ufffd"} y').valid, true);
  assert.equal(ex.extract('x {"b": 1} y').valid, false);
  assert.throws(() => ex.extract('{"a": "\ud800"}'), (e) => e instanceof InputError && /lone surrogate/.test(e.message));
  stillWorks();
});

test("text written as UTF-16 reads every character at every place of a block", () => {
  // Note [Text written as UTF-16] in crates/wasm/src/bindings.rs: in Node
  // the string's units are copied into the module and made UTF-8 there, 16
  // at a time while they are ASCII; a lone surrogate is found in that pass.
  const b = raw();
  for (const c of ["\u007f", "\u0080", "\u009f", "\u00a0", "\u00e9", "\u00ff", "\u0100", "\u07ff", "\u0800", "\u2192", "\ufffd", "\uffff", "\ud800\udc00", "\ud83d\ude00", "\udbff\udfff"]) {
    for (let at = 0; at < 40; at++) {
      const pad = "x".repeat(at);
      const text = `${pad} {"k": "${c}", 'v': [1,],} ${pad}`;
      assert.equal(repair(text), b.repair(text), `${JSON.stringify(c)} at ${at}`);
      assert.deepEqual(extract(text).value, { k: c, v: [1] });
      // Validation from text takes the same road.
      assert.equal(ARRAY.isValidJson(`[${JSON.stringify(pad)}, "${c}"]`), true);
      assert.equal(ARRAY.isValidJson(`{${JSON.stringify(pad)}: "${c}"}`), false);
    }
  }
  for (const bad of ["\ud800", "\udc00", "\ud83d\ud83d\ude00", "\ude00\ud83d"]) {
    for (const at of [0, 1, 15, 16, 17, 31, 32]) {
      const text = `${"a".repeat(at)}${bad}{"a": 1}`;
      assert.throws(() => repair(text), (e) => e instanceof InputError && /lone surrogate/.test(e.message), `${at}`);
      assert.throws(() => extract(text), InputError);
      assert.throws(() => ARRAY.isValidJson(`["${"a".repeat(at)}${bad}"]`), (e) => e instanceof InputError && /lone surrogate/.test(e.message));
    }
  }
  // The module's memory grows under a text of a million units; the next
  // small one is written into the new memory.
  assert.equal(repair(`{"a": "${"\u2192".repeat((1 << 20) - 20)}"}`).length, (1 << 20) - 20 + 8);
  assert.equal(repair("x {'a': 1} y"), '{"a":1}');
  stillWorks();
});

test("invalid UTF-8 bytes", () => {
  assert.throws(() => extract(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), InputError);
  assert.throws(() => ARRAY.validateJson(new Uint8Array([0x5b, 0xc3, 0x28, 0x5d])), InputError);
  // A transcript is data: the bad line is skipped and counted.
  const good = new TextEncoder().encode('{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}}\n');
  const s = parse(new Uint8Array([...good, ...new TextEncoder().encode('{"type":"assistant","message":'), 0xff, 0x7d, 0x0a]));
  assert.equal(s.output, "ok");
  assert.equal(s.skipped_lines, 1);
  const d = new Decoder();
  d.feed(new Uint8Array([0xff, 0xfe, 0xfd, 0x0a]));
  assert.ok(d.finish().skipped_lines >= 0);
});

test("a trap replaces the instance; the next call works, compiled objects too", async () => {
  const v = new Validator({ type: "object", required: ["a"] });
  const d = new Decoder();
  assert.equal(v.isValid({ a: 1 }), true);
  // The spare instance is made in the background at startup.
  await ready();
  const before = raw();
  assert.throws(() => call((b) => b.__trapForTests()), (e) => e instanceof InternalError && e.cause instanceof WebAssembly.RuntimeError);
  assert.notEqual(raw(), before);
  stillWorks();
  assert.equal(v.isValid({ a: 1 }), true);
  assert.equal(v.isValid({}), false);
  assert.throws(() => d.feed("x\n"), InternalError);
  assert.equal(new Decoder().finish().skipped_lines, 0);
  // Again: the next spare was made after the first trap.
  await ready();
  assert.throws(() => call((b) => b.__trapForTests()), InternalError);
  stillWorks();
});
