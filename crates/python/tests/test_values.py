"""`Extraction.value`, built through the C API (Note [Building values through
the C API] in crates/python/src/build.rs), held to `json.loads` of serde's
compact JSON of the same value (`Extraction._value_json()`): same types, same
key order, same strings, on the extract table and on generated values."""

import gc
import json
import random

import pytest

import agentshape
from test_conformance import CASES, same_json


def held(text):
    """The extraction of `text`, its value checked against the reference."""
    e = agentshape.extract(text)
    ref = e._value_json()
    if ref is None:
        assert e.value is None
    else:
        assert same_json(e.value, json.loads(ref)), (text[:200], ref[:200])
    return e


def test_every_row_of_the_extract_table_builds_the_reference_value():
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = sum(held(r["input"]).value is not None for r in rows)
    assert found > 100


PIECES = ["plain words ", '"', "\\", "/", "\n", "\t", "\r", "\b", "\f", "\u0000", "\u0007",
          "\u001f", "\u007f", "é", "ß", "ÿ", "Ā", "Ω", "Привет", "日本語", "\uffff", "\ufffd",
          "🚀", "👩\u200d💻", "\U0010ffff", "{", "}", "[", "]", ",", ":", "'"]


def random_string(rng, n):
    return "".join(rng.choice(PIECES) for _ in range(n))


@pytest.mark.parametrize("ascii_only", [False, True])
def test_generated_strings_are_the_strings_json_loads_gives(ascii_only):
    rng = random.Random(32)
    for n in list(range(0, 40)) + [200, 1000, 5000]:
        s = random_string(rng, n)
        doc = {"s": s, "list": [s, s[: n // 2]], "k" + s[:8]: n}
        text = json.dumps(doc, ensure_ascii=ascii_only)
        e = held(text)
        # Beyond the reference: the very strings that were written.
        assert e.value == doc
        assert list(e.value) == list(doc)


def test_long_strings_of_each_width():
    for ch in ["a", "é", "Ω", "日", "🚀"]:
        for n in (1, 31, 32, 33, 1 << 16):
            s = ch * n + "x" + ch
            assert held(json.dumps({"v": s}, ensure_ascii=False)).value == {"v": s}
            assert held(json.dumps([s])).value == [s]


def test_lone_surrogates_become_the_replacement_character():
    # JSON can escape half of a pair; a Rust `str` cannot hold it, so core
    # writes U+FFFD, and the value built says the same as serde's JSON.
    for text, want in [('{"a": "x\\ud800y"}', "x\ufffdy"), ('["\\udc00"]', "\ufffd"),
                       ('{"a": "\\ud83d\\ude80 \\ud83d"}', "🚀 \ufffd")]:
        v = held(text).value
        got = v["a"] if isinstance(v, dict) else v[0]
        assert got == want, text


def test_numbers_keep_their_type_and_value():
    nums = [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 0.5, -0.0, 1e308, 5e-324, 1.0, 123456789.125]
    text = json.dumps({"n": nums, "t": True, "f": False, "z": None})
    v = held(text).value
    assert v["n"] == nums and [type(x) for x in v["n"]] == [type(x) for x in nums]
    assert v["t"] is True and v["f"] is False and v["z"] is None


def test_deep_nesting():
    for depth in (1, 10, 100):
        text = '{"a": ' * depth + '[1, "x", {}]' + "}" * depth
        v = held(text).value
        for _ in range(depth):
            v = v["a"]
        assert v == [1, "x", {}]
    held("[" * 100 + "]" * 100)


def test_keys_many_and_long_and_repeated():
    rng = random.Random(7)
    # More distinct keys than the cache has slots, keys around its length
    # limit, an empty key, non-ASCII keys; every one repeated.
    keys = ["", "é", "日本", "🚀"] + ["k" * n for n in (31, 32, 33, 64)]
    keys += [f"key{i}" for i in range(2000)] + [random_string(rng, 3) for _ in range(50)]
    keys = list(dict.fromkeys(keys))
    doc = [{k: i for i, k in enumerate(keys)}, {k: k for k in reversed(keys)}]
    v = held(json.dumps(doc)).value
    assert v == doc and [list(d) for d in v] == [list(d) for d in doc]
    # The same short key is one `str` within a value and across values.
    a = held('[{"name": 1}, {"name": 2}]').value
    b = held('{"name": 3}').value
    assert a[0].keys() == a[1].keys() == b.keys()
    assert next(iter(a[1])) is next(iter(a[0])) is next(iter(b))


def test_short_keys_are_shared_and_long_ones_and_values_are_not():
    long = "k" * 40
    a = held('[{"%s": "healthy"}, "x"]' % long).value
    b = held('{"%s": "healthy"}' % long).value
    assert a[0] == b and next(iter(a[0])) is not next(iter(b))
    assert a[0][long] is not b[long]
    # Many more distinct keys than the cache has slots, each one asked for
    # twice: every one comes back right.
    keys = [f"k{i}-é" for i in range(10_000)]
    for _ in range(2):
        assert list(held(json.dumps(dict.fromkeys(keys, 1))).value) == keys


def test_values_stay_right_when_a_finaliser_converts_during_a_conversion():
    # The garbage collector runs finalisers while a value is being built;
    # one that builds another value finds the key cache in use and goes
    # without it.
    seen = []

    class Converts:
        def __init__(self):
            self.me = self  # a cycle: freed by the collector only

        def __del__(self):
            seen.append(agentshape.extract('{"inner": [1, "é"]}').value)

    text = json.dumps([{"key": i, "s": "é" * (i % 50)} for i in range(1000)])
    old = gc.get_threshold()
    gc.set_threshold(5)
    try:
        for _ in range(5):
            for _ in range(20):
                Converts()
            e = held(text)
            assert e.value == [{"key": i, "s": "é" * (i % 50)} for i in range(1000)]
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert seen and all(x == {"inner": [1, "é"]} for x in seen)
