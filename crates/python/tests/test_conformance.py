"""The same conformance cases as the Rust tests, read from the same files."""

import json
from pathlib import Path

import pytest

import agentshape
from conftest import REPO, shared_dir

CASES = REPO / "crates/core/tests/data/extract/cases.jsonl"


def extract_cases():
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [pytest.param(r, id=f'{r["table"]}-{i}') for i, r in enumerate(rows)]


def test_the_shared_table_has_every_row():
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sum(r["table"] == "repair" for r in rows) == 79
    assert sum(r["table"] == "order" for r in rows) == 32
    assert sum(r["table"] == "replaced" for r in rows) == 9


def same_json(a, b):
    """JSON equality: 1 and 1.0 differ, as in Rust's `Value` comparison."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("row", extract_cases())
def test_extract_table(row):
    got = agentshape.extract(row["input"])
    want = None if row["method"] == "none" and row["value"] is None else row["value"]
    assert same_json(got.value, want), (row["input"], got.value)
    assert got.method == row["method"]
    assert got.repairs == row["repairs"]
    # A found JSON `null` is a value too: `method` tells it from nothing found;
    # a row says `valid` when text was replaced (core's Note [Replaced text]).
    assert got.valid == row.get("valid", got.method != "none")
    if not got.valid and got.method != "none":
        assert got.errors and all(e.kind == "text" for e in got.errors), got.errors
    # The bytes form reads the same reply.
    assert same_json(agentshape.extract(row["input"].encode()).value, want)


def suite_cases():
    shared = shared_dir()
    suite = shared / "corpus/json-schema-test-suite" if shared else None
    if suite is None or not suite.is_dir():
        return [pytest.param(None, id="absent", marks=pytest.mark.skip(
            reason="../shared/corpus/json-schema-test-suite not found"))]
    out = []
    for directory, draft in (("draft7", "draft-07"), ("draft2020-12", "2020-12")):
        for path in sorted((suite / "tests" / directory).glob("*.json")):
            out.append(pytest.param((suite, path, draft), id=f"{directory}/{path.name}"))
    return out


@pytest.mark.parametrize("case", suite_cases())
def test_json_schema_test_suite(case):
    """One test per suite file (required tests only), every case in it: the
    draft forced per directory, remotes served from the suite's `remotes/`
    as upstream prescribes; `is_valid` and `validate` must both agree."""
    suite, path, draft = case
    remotes = suite / "remotes"

    def retrieve(uri):
        prefix = "http://localhost:1234/"
        if not uri.startswith(prefix):
            raise LookupError(f"no such remote {uri}")
        return json.loads((remotes / uri[len(prefix):]).read_text(encoding="utf-8"))

    failures = []
    for group in json.loads(path.read_text(encoding="utf-8")):
        try:
            v = agentshape.Validator(group["schema"], draft=draft, retriever=retrieve)
        except agentshape.SchemaError as e:
            failures.append(f'{group["description"]}: schema did not compile: {e}')
            continue
        for test in group["tests"]:
            data = test["data"]
            try:
                fast, errors = v.is_valid(data), v.validate(data)
            except agentshape.NotJSONError:
                # Python's json reads some numbers as values JSON cannot hold here.
                failures.append(f'{group["description"]} / {test["description"]}: not JSON')
                continue
            if fast != test["valid"] or (not errors) != test["valid"]:
                failures.append(f'{group["description"]} / {test["description"]}: '
                                f'expected {test["valid"]}, is_valid={fast}, errors={errors}')
    assert not failures, "\n".join(failures)
