"""Validating Python objects in place (Note [Validating Python objects in place]
in crates/python/src/instance.rs) agrees with the conversion path it skips.

Exact dicts, lists and scalars are walked in place; a subclass of dict or
list takes the conversion to a JSON value, the reference. Both must give the
same violations for every instance."""

import json
import threading

import pytest

import agentshape
from conftest import shared_dir


class D(dict):
    """A dict subclass: the walk declines it, the conversion takes it."""


class L(list):
    """A list subclass, likewise."""


def converted(x):
    """The same instance, made of subclasses (the conversion path)."""
    if isinstance(x, dict):
        return D((k, converted(v)) for k, v in x.items())
    if isinstance(x, list):
        return L(converted(v) for v in x)
    return x


def shape(errors):
    return [(e.instance_path, e.schema_path, e.message, e.kind, e.rule) for e in errors]


def both_paths_agree(v, data):
    in_place, reference = v.validate(data), v.validate(converted(data))
    assert shape(in_place) == shape(reference), data
    assert v.is_valid(data) == v.is_valid(converted(data)) == (not reference), data
    return reference


REVIEW = {
    "type": "object",
    "required": ["findings", "counts"],
    "properties": {
        "findings": {"type": "array", "items": {
            "type": "object", "required": ["severity", "line"],
            "properties": {"severity": {"enum": ["blocker", "major", "minor"]},
                           "line": {"type": "integer", "minimum": 1}}}},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "x-invariants": [{"rule": "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()",
                      "message": "counts.blocker counts the blocker findings"}],
}


@pytest.mark.parametrize("data", [
    {"findings": [{"severity": "blocker", "line": 3}], "counts": {"blocker": 1}},
    {"findings": [{"severity": "blocker", "line": 3}], "counts": {"blocker": 2}},
    {"findings": [{"severity": "nope", "line": 0}], "counts": {"blocker": "x"}},
    {"findings": ({"severity": "minor", "line": 1},), "counts": {"blocker": 0}},
    {"findings": [], "counts": {}, "extra": [None, True, 1.5, -(2 ** 63), 2 ** 64 - 1, "é→"]},
    [],
    "text",
    None,
])
def test_in_place_and_converted_agree_with_invariants(data):
    v = agentshape.Validator(REVIEW)
    plain = dict(REVIEW)
    plain.pop("x-invariants")
    both_paths_agree(v, data)
    both_paths_agree(agentshape.Validator(plain), data)


def test_in_place_agrees_on_the_json_schema_test_suite():
    shared = shared_dir()
    suite = shared / "corpus/json-schema-test-suite/tests/draft2020-12" if shared else None
    if suite is None or not suite.is_dir():
        pytest.skip("../shared/corpus/json-schema-test-suite not found")
    checked = 0
    for path in sorted(suite.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            try:
                v = agentshape.Validator(group["schema"], draft="2020-12")
            except agentshape.SchemaError:
                continue  # remote refs: test_conformance serves them
            for test in group["tests"]:
                try:
                    # Verdicts against the suite: test_conformance (with remotes).
                    both_paths_agree(v, test["data"])
                except agentshape.NotJSONError:
                    continue
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize("value", [
    {"a": float("nan")},
    {"a": [1, float("inf")]},
    {"a": 2 ** 64},
    {1: "x"},
    {"a": {"b": {1, 2}}},
    {"a": b"bytes"},
])
def test_what_json_cannot_hold_is_still_refused(value):
    v = agentshape.Validator({})
    with pytest.raises(agentshape.NotJSONError):
        v.validate(value)
    with pytest.raises(agentshape.NotJSONError):
        v.is_valid(value)


def test_lone_surrogates_still_raise():
    v = agentshape.Validator({"type": "object"})
    with pytest.raises(UnicodeEncodeError):
        v.validate({"a": "\ud800"})
    with pytest.raises(UnicodeEncodeError):
        v.is_valid({"\udfff": 1})


def test_nesting_past_the_walk_takes_the_conversion():
    # Deeper than the walk's 100 levels, within the conversion's 256.
    deep = 1
    for _ in range(150):
        deep = [deep]
    v = agentshape.Validator({"type": "array", "maxItems": 1})
    assert v.is_valid(deep)
    assert v.validate([deep, deep])[0].instance_path == ""


def test_non_ascii_text_is_read_exactly():
    v = agentshape.Validator({"properties": {"s": {"maxLength": 3}}})
    assert v.is_valid({"s": "é→😀"})
    assert not v.is_valid({"s": "é→😀x"})
    assert v.validate({"s": "é→😀x"})[0].instance_path == "/s"


def big(n, severity="minor"):
    return {"findings": [{"severity": severity, "line": i + 1} for i in range(n)], "counts": {"blocker": 0}}


def test_large_instances_release_the_interpreter_and_agree():
    # Over 4,096 nodes: validated with the interpreter released.
    v = agentshape.Validator(REVIEW)
    assert v.is_valid(big(3000))
    assert [e.instance_path for e in v.validate(big(3000, "nope"))][:2] == ["/findings/0/severity",
                                                                          "/findings/1/severity"]
    both_paths_agree(v, big(2000, "blocker"))


def test_mutating_an_instance_from_another_thread_while_it_is_validated():
    """The walk holds every string it reads: another thread replacing them
    mid-validation (possible while the interpreter is released) never makes
    it read freed text; each verdict is one of the two states'."""
    v = agentshape.Validator({"type": "object", "additionalProperties": {
        "type": "array", "items": {"type": "string", "minLength": 20}}})
    data = {f"k{i}": ["x" * 30 + str(j) for j in range(50)] for i in range(100)}
    stop = threading.Event()

    def mutate():
        n = 0
        while not stop.is_set():
            for key in data:
                data[key] = ["y" * 40 + str(n) for _ in range(50)]
            n += 1

    th = threading.Thread(target=mutate)
    th.start()
    try:
        for _ in range(100):
            assert v.is_valid(data)
            assert v.validate(data) == []
    finally:
        stop.set()
        th.join(timeout=60)


def test_validate_many_mixes_both_paths_in_order():
    v = agentshape.Validator(REVIEW)
    items = [big(2), converted(big(2)), big(2, "nope"), {"a": 1}, converted({"findings": "x", "counts": {}})]
    got = v.validate_many(items, threads=2)
    assert [shape(g) for g in got] == [shape(v.validate(x)) for x in items]
    assert [not g for g in got] == [True, True, False, False, False]
