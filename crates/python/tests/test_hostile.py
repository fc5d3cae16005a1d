"""Hostile inputs: nothing crashes the interpreter; a clear exception or a clear result."""

import json
import math
import subprocess
import sys

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


# Files that are not regular files (issue 27, item 2). Each case runs in a
# child interpreter with a timeout: opening a FIFO used to wait forever for
# a writer, and a test that hangs must fail, not stall the suite.

SPECIAL_FILES = r"""
import os, sys, pathlib, agentshape
d = pathlib.Path(sys.argv[1])
os.mkfifo(d / "fifo.json")
os.mkfifo(d / "fifo.toml")
os.mkdir(d / "dir.json")
(d / "p.toml").write_text('schema = "fifo.json"\n')
def outcome(f):
    try:
        f()
        return "ok"
    except agentshape.AgentshapeError as e:
        return f"{type(e).__name__}: {e}"
cases = {
    "validator_fifo": lambda: agentshape.Validator(str(d / "fifo.json")),
    "validator_pathlike_fifo": lambda: agentshape.Validator(d / "fifo.json"),
    "validator_dir": lambda: agentshape.Validator(d / "dir.json"),
    "validator_dev_zero": lambda: agentshape.Validator(pathlib.Path("/dev/zero")),
    "validator_missing": lambda: agentshape.Validator(d / "gone.json"),
    "profile_fifo": lambda: agentshape.extract("{}", profile=d / "fifo.toml"),
    "profile_schema_fifo": lambda: agentshape.extract("{}", profile=d / "p.toml"),
    "parse_dev_zero": lambda: agentshape.parse(pathlib.Path("/dev/zero")),
    "parse_dir": lambda: agentshape.parse(d),
}
for name, f in cases.items():
    print(name, "=>", outcome(f), flush=True)
# A FIFO transcript is streamed; one that no writer holds open reads as empty.
s = agentshape.parse(d / "fifo.json")
print("parse_fifo =>", "empty" if not s.output and not s.saw_result else repr(s.output), flush=True)
"""


def test_special_files_are_refused_not_waited_on(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", SPECIAL_FILES, str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    got = dict(line.split(" => ", 1) for line in done.stdout.splitlines())
    fifo = str(tmp_path / "fifo.json")
    for case, want in [
        ("validator_fifo", f"SchemaError: cannot read schema `{fifo}`: is a FIFO, not a regular file"),
        ("validator_pathlike_fifo", "is a FIFO, not a regular file"),
        ("validator_dir", "SchemaError: cannot read schema"),
        ("validator_dev_zero", "SchemaError: cannot read schema `/dev/zero`: is a character device, not a regular file"),
        ("validator_missing", "InputError: cannot read schema"),
        ("profile_fifo", "ProfileError: cannot read profile"),
        ("profile_schema_fifo", "is a FIFO, not a regular file"),
        ("parse_dev_zero", "InputError: cannot read `/dev/zero`: is a character device, not a regular file"),
        ("parse_dir", "InputError: cannot read"),
        ("parse_fifo", "empty"),
    ]:
        assert want in got[case], (case, got[case])
    assert "is a directory" in got["validator_dir"]
    assert "is a directory" in got["parse_dir"]
    assert got["profile_schema_fifo"].startswith("ProfileError")


def test_an_oversized_schema_file_is_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_text('{"description": "' + "x" * (16 << 20) + '"}')
    with pytest.raises(agentshape.SchemaError, match="larger than the 16 MiB limit"):
        agentshape.Validator(big)


# Issue 27, item 1: `x-invariants` rules too deep for a stack, and rules that build gigabytes.

HOSTILE_RULES = [
    "+".join(["1"] * 3000),
    "self" + ".a" * 5000,
    "(" * 3000 + "1" + ")" * 3000,
    "(" * 100_000 + "1" + ")" * 100_000,
    "size(" * 20_000 + "self" + ")" * 20_000,
    "+".join(["self.n"] * 1000),
]

CHILD = r'''
import json, sys, threading, agentshape
rules = json.load(sys.stdin)
def run():
    for rule in rules:
        schema = {"type": "object", "x-invariants": [{"rule": rule}]}
        for compile in (agentshape.Validator, lambda s: agentshape.extract("{}", schema=s)):
            try:
                compile(schema)
                print("compiled")
            except agentshape.SchemaError as e:
                print("SchemaError", str(e).splitlines()[0][:200])
threading.stack_size(int(sys.argv[1]))
t = threading.Thread(target=run)
t.start()
t.join()
'''


@pytest.mark.parametrize("stack", [8 << 20, 2 << 20])
def test_rules_too_deep_for_a_stack_raise_schema_error_not_a_crash(stack):
    # In a child, so a crash is a failed test rather than a dead test run.
    out = subprocess.run([sys.executable, "-c", CHILD, str(stack)], input=json.dumps(HOSTILE_RULES),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    lines = out.stdout.splitlines()
    assert len(lines) == 2 * len(HOSTILE_RULES), out.stdout
    for line in lines:
        assert line.startswith("SchemaError "), line
        assert "at `/x-invariants/0` is too" in line and "at most" in line, line


def test_rules_too_deep_name_the_limit():
    # 20 levels: few enough for the parser on this thread, too many for the limit (16).
    with pytest.raises(agentshape.SchemaError, match=r"too deep: 20 nested brackets \(at most 16"):
        agentshape.Validator({"x-invariants": [{"rule": "(" * 20 + "true" + ")" * 20}]})
    assert agentshape.Validator({"x-invariants": [{"rule": "(" * 16 + "true" + ")" * 16}]}).is_valid({})


@pytest.mark.parametrize("rule, instance", [
    ("self.a.map(x, self.a.map(y, self.a)).size() > 0", {"a": list(range(2000))}),
    ("self.a.map(x, self.s + self.s + self.s + self.s).size() > 0",
     {"a": list(range(2000)), "s": "x" * (1 << 20)}),
])
def test_rules_that_build_gigabytes_give_the_cost_limit_finding(rule, instance):
    v = agentshape.Validator({"type": "object", "x-invariants": [{"rule": rule, "message": "m"}]})
    errors = v.validate(instance)
    assert [(e.kind, e.rule) for e in errors] == [("invariant", rule)]
    assert "exceeded the cost limit" in errors[0].message
