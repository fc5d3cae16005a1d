"""Hostile inputs: nothing crashes the interpreter; a clear exception or a clear result."""

import math

import pytest

import agentshape

V = agentshape.Validator({"type": "array"})


@pytest.mark.parametrize("text", [
    "[" * 100_000,
    "{" * 100_000,
    '{"a":' * 100_000,
    "]" * 100_000 + "[" * 100_000,
    '"' * 100_000,
    "```json\n" * 20_000,
    "\x00\x01\x02 {\"a\": \"\x00\"}",
    "\ud7ff\ue000\U0010ffff {\"k\": \"\U0001f600\"}",
])
def test_hostile_replies_extract_without_crashing(text):
    e = agentshape.extract(text)
    assert e.method in {"structured", "fenced", "bare", "repaired", "markers", "none"}
    agentshape.extract(text, schema={"type": "object"}, coerce=True)
    V.validate_json(text) if text.startswith("[") and False else None


def test_deep_nesting_from_python_is_refused():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(agentshape.NotJSONError, match="nesting deeper than"):
        V.validate(deep)
    ok = []
    for _ in range(agentshape.MAX_DEPTH - 1):
        ok = [ok]
    assert V.is_valid(ok)


def test_deep_nesting_as_json_text_is_an_error_not_a_crash():
    with pytest.raises(agentshape.InputError):
        V.validate_json("[" * 100_000 + "]" * 100_000)


def test_recursive_containers_are_refused():
    d = {}
    d["self"] = d
    with pytest.raises(agentshape.NotJSONError, match="contains itself"):
        V.validate(d)
    lst = []
    lst.append(lst)
    with pytest.raises(agentshape.NotJSONError):
        agentshape.validate_many([lst], schema={})


@pytest.mark.parametrize("value, match", [
    (math.nan, "not a JSON number"),
    ({"x": [1, math.inf]}, "`/x/1`"),
    ({1: "a"}, "not a str"),
    ({None: "a"}, "not a str"),
    ({"a": {1, 2}}, "`set`"),
    ({"a": b"bytes"}, "`bytes`"),
    (2 ** 64, "beyond 64 bits"),
    (-(2 ** 63) - 1, "beyond 64 bits"),
    (object(), "`object`"),
])
def test_values_json_cannot_hold(value, match):
    with pytest.raises(agentshape.NotJSONError, match=match):
        V.validate(value)
    with pytest.raises(agentshape.NotJSONError):
        agentshape.check([value], schema={})


def test_limits_that_fit_are_exact():
    v = agentshape.Validator({"type": "integer"})
    assert v.is_valid(2 ** 64 - 1) and v.is_valid(-(2 ** 63)) and not v.is_valid(1.5)
    assert agentshape.Validator({}).coerce({"a": 1})[0] == {"a": 1}


def test_invalid_utf8_bytes():
    with pytest.raises(agentshape.InputError, match="not UTF-8"):
        agentshape.extract(b'{"a": "\xff\xfe"}')
    with pytest.raises(agentshape.InputError):
        V.validate_json(b"[\xc3\x28]")
    # A transcript is data: the bad line is skipped and counted.
    s = agentshape.parse(b'{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}}\n'
                         b'{"type":"assistant","message":\xff}\n')
    assert s.output == "ok" and s.skipped_lines == 1
    d = agentshape.Decoder()
    d.feed(b"\xff\xfe\xfd\n")
    assert d.finish().skipped_lines >= 0


def test_lone_surrogates_in_str_raise_a_python_error():
    with pytest.raises(UnicodeEncodeError):
        agentshape.extract('{"a": "\ud800"}')


def test_a_lone_surrogate_escape_is_reported_not_silently_valid():
    # Issue 27 (core's Note [Replaced text]): the escape became U+FFFD, `valid`.
    e = agentshape.extract(r'{"a": "\udc00x"}')
    assert e.value == {"a": "\ufffdx"} and e.method == "repaired"
    assert e.repairs == ["replaced_invalid_text"] and not e.valid
    assert [(x.instance_path, x.kind) for x in e.errors] == [("/a", "text")]
    with pytest.raises(agentshape.InvalidOutputError):
        e.raise_for_outcome()
    ex = agentshape.Extractor(schema={"type": "object"})
    assert [x.valid for x in ex.extract_many([r'{"a": "\ud800"}', '{"a": "ok"}'])] == [False, True]
    # In a transcript's result, at the line's level: the text used to vanish.
    line = r'{"type":"result","subtype":"success","is_error":false,"result":"{\"a\": \"\udc00x\"}"}'
    e = agentshape.extract('{"type":"system","subtype":"init"}\n' + line, format="claude")
    assert e.value == {"a": "\ufffdx"} and e.repairs == ["replaced_invalid_text"] and not e.valid


def test_huge_strings():
    big = "x" * (20 << 20)
    e = agentshape.extract('{"a": "' + big + '"}')
    assert e.method == "bare" and len(e.value["a"]) == len(big)
    e = agentshape.extract('{"a": "' + big)
    assert e.method == "repaired" and e.repairs == ["truncated"]
    errs = agentshape.Validator({"properties": {"a": {"type": "integer"}}}).validate({"a": big})
    assert len(errs) == 1 and len(errs[0].message) < 1000
    s = agentshape.parse(big)
    assert s.format == "text"


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError):
        agentshape.extract(42)
    with pytest.raises(TypeError):
        agentshape.parse(42)
    with pytest.raises(TypeError):
        agentshape.Decoder().feed(42)
    with pytest.raises(TypeError):
        agentshape.extract_many([1, 2])
