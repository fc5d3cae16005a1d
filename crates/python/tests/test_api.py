"""The package's surface: results mirror the CLI's JSON, errors are the CLI's categories."""

import json
import pathlib

import pytest

import agentshape
from conftest import REPO

SCHEMA = {
    "type": "object",
    "required": ["action", "confidence"],
    "properties": {
        "action": {"enum": ["complete", "continue"]},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
}
CLAUDE_FIXTURES = REPO / "crates/core/tests/fixtures/decode"


def test_extract_mirrors_the_cli_result():
    e = agentshape.extract("Sure:\n```json\n{\"action\": \"complete\", \"confidence\": 90,}\n```")
    assert (e.value, e.method, e.repairs, e.coercions, e.valid, e.errors) == (
        {"action": "complete", "confidence": 90}, "repaired", ["trailing_comma"], [], True, [])
    assert e.to_dict() == {"value": e.value, "method": "repaired", "repairs": ["trailing_comma"],
                           "coercions": [], "valid": True, "errors": []}
    assert e.exit_code == 0 and bool(e) and e.run is None


@pytest.mark.parametrize("schema", [
    SCHEMA,
    json.dumps(SCHEMA),
    "PATH",
    pathlib.Path("PATH"),
    agentshape.Validator(SCHEMA),
])
def test_schema_forms(schema, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA))
    if isinstance(schema, str) and schema == "PATH":
        schema = str(path)
    elif isinstance(schema, pathlib.Path):
        schema = path
    ok = agentshape.extract('{"action": "complete", "confidence": 90}', schema=schema)
    assert ok.valid
    bad = agentshape.extract('{"action": "stop", "confidence": 900}', schema=schema)
    assert not bad.valid and bad.exit_code == 1
    assert [(x.instance_path, x.schema_path) for x in bad.errors] == [
        ("/action", "/properties/action/enum"), ("/confidence", "/properties/confidence/maximum")]


def test_schema_picks_the_valid_candidate_and_coerces():
    text = '```json\n{"action": "complete", "confidence": "90%"}\n```\n```json\n{"nope": 1}\n```'
    e = agentshape.extract(text, schema=SCHEMA, coerce=True)
    assert e.valid and e.value == {"action": "complete", "confidence": 90}
    assert e.coercions == [{"kind": "percent_to_number", "instance_path": "/confidence",
                            "from": "90%", "to": 90}]


def test_several_values_warnings():
    ndjson = '{"a": 1}\n{"a": 2}\n'
    e = agentshape.extract(ndjson)
    assert e.value == {"a": 1}
    assert e.warnings == ["2 top-level values; took the first"]
    assert e.to_dict()["warnings"] == e.warnings
    e = agentshape.extract(ndjson, schema={"type": "array"})
    assert e.value == [{"a": 1}, {"a": 2}] and e.repairs == ["collected_values"]
    assert e.warnings == [] and "warnings" not in e.to_dict()


def test_errors_are_the_cli_categories():
    assert issubclass(agentshape.SchemaError, agentshape.UsageError)
    assert issubclass(agentshape.UsageError, agentshape.AgentshapeError)
    assert issubclass(agentshape.UsageError, ValueError)
    codes = {name: getattr(agentshape, name).exit_code for name in (
        "UsageError", "SchemaError", "ProfileError", "NotJSONError", "InputError",
        "InvalidOutputError", "NoOutputError", "AgentError")}
    assert codes == {"UsageError": 64, "SchemaError": 64, "ProfileError": 64, "NotJSONError": 64,
                     "InputError": 66, "InvalidOutputError": 1, "NoOutputError": 2, "AgentError": 3}
    with pytest.raises(agentshape.SchemaError, match="invalid schema: at `/type`"):
        agentshape.Validator({"type": 12})
    with pytest.raises(agentshape.SchemaError, match="not valid JSON"):
        agentshape.Validator('{"type": ')
    with pytest.raises(agentshape.SchemaError, match="unresolvable"):
        agentshape.Validator({"$ref": "#/$defs/missing"})
    with pytest.raises(agentshape.SchemaError):
        agentshape.Validator(42)
    with pytest.raises(agentshape.InputError, match="cannot read schema"):
        agentshape.Validator("/nonexistent/schema.json")
    with pytest.raises(agentshape.ProfileError, match="unknown profile `nope`"):
        agentshape.extract("x", profile="nope")
    with pytest.raises(agentshape.InputError):
        agentshape.parse(pathlib.Path("/nonexistent/t.ndjson"))
    with pytest.raises(agentshape.UsageError, match="nothing to check"):
        agentshape.check([{}], contradictions=False)
    with pytest.raises(ValueError, match="unknown format"):
        agentshape.parse("x", format="nope")


def test_the_agents_own_session_files_are_formats_too():
    line = json.dumps({"type": "assistant", "uuid": "u1", "sessionId": "s-py", "isSidechain": False,
                       "timestamp": "2026-11-26T10:00:00Z", "cwd": "/p", "version": "2.1.30",
                       "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                                   "content": [{"type": "text", "text": '{"a": 1}'}],
                                   "usage": {"input_tokens": 3, "output_tokens": 2}}})
    for name in ("claude_session", "claude-session", "auto"):
        s = agentshape.parse(line + "\n", format=name)
        assert s.format == "claude-session", name
        assert s.to_dict()["session"]["tokens"]["output"] == 2
    assert agentshape.extract(line + "\n", format="claude-session").value == {"a": 1}
    for name in ("codex_rollout", "codex-rollout", "gemini_chat", "gemini-chat"):
        agentshape.parse("", format=name)


def test_raise_for_outcome():
    assert agentshape.extract('{"a": 1}').raise_for_outcome().value == {"a": 1}
    with pytest.raises(agentshape.NoOutputError):
        agentshape.extract("no json here").raise_for_outcome()
    with pytest.raises(agentshape.InvalidOutputError, match="/action"):
        agentshape.extract('{"action": "x", "confidence": 1}', schema=SCHEMA).raise_for_outcome()


def test_validator_validate_is_valid_and_json_text():
    v = agentshape.Validator(SCHEMA)
    assert v.is_valid({"action": "complete", "confidence": 5})
    errs = v.validate({"action": "complete"})
    assert [e.to_dict() for e in errs] == [{"instance_path": "", "schema_path": "/required",
                                            "message": '"confidence" is a required property'}]
    assert agentshape.Error is agentshape.Violation
    assert v.validate_json('{"action": "complete", "confidence": 5}') == []
    assert v.validate_json(b'{"action": "complete"}') == errs
    with pytest.raises(agentshape.InputError, match="not JSON"):
        v.validate_json("{nope")
    # A number JSON text holds but no 64-bit type does: reported, never valid.
    big = v.validate_json('{"action": "complete", "confidence": 123456789012345678901234567890}')
    assert any(e.kind == "number" for e in big)
    many = v.validate_many([{"action": "complete", "confidence": i} for i in range(-1, 200)], threads=2)
    assert [not e for e in many] == [0 <= i <= 100 for i in range(-1, 200)]
    assert agentshape.validate_many([{}, {"action": "complete", "confidence": 1}], schema=SCHEMA)[1] == []


def test_invariants_are_violations_with_their_rule():
    schema = json.loads((REPO / "schemas/code-review.json").read_text())
    v = agentshape.Validator(schema)
    doc = {"findings": [{"severity": "blocker", "file": "a.rs", "line": 1, "description": "x",
                         "raisedBy": "security"}],
           "counts": {"blocker": 2, "major": 0, "minor": 0, "nit": 0}}
    errs = v.validate(doc)
    assert errs and all(e.kind == "invariant" and e.rule for e in errs)
    assert not v.is_valid(doc)
    doc["counts"]["blocker"] = 1
    assert v.validate(doc) == [] and v.is_valid(doc)


def test_profiles_by_name_and_path(tmp_path):
    text = "Checked jellyfin.\n[EVENT:critical:jellyfin] HTTP 502\n[MEMORY:timing:jellyfin] slow"
    e = agentshape.extract(text, profile="claude-ops")
    assert e.method == "markers" and e.value["events"][0]["service"] == "jellyfin"
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "mine.toml").write_text('schema = "s.json"\n')
    assert agentshape.extract('{"action": "complete", "confidence": 1}',
                              profile=tmp_path / "mine.toml").valid
    assert not agentshape.extract('{"action": "x"}', profile=str(tmp_path / "mine.toml")).valid


def test_parse_and_decoder_agree_on_every_fixture():
    fixtures = sorted(p for p in CLAUDE_FIXTURES.rglob("*") if p.is_file())
    assert fixtures
    for path in fixtures:
        data = path.read_bytes()
        whole = agentshape.parse(path)
        assert whole.file == str(path)
        d = agentshape.Decoder()
        events = []
        for i in range(0, len(data), 7):
            events += d.feed(data[i:i + 7])
        chunked = d.finish()
        a, b = whole.to_dict(), chunked.to_dict()
        a["file"] = b["file"] = None
        assert a == b, path
        assert {**agentshape.parse(data).to_dict(), "file": None} == {**b, "file": None}
        assert all("type" in e for e in events)
        with pytest.raises(RuntimeError):
            d.finish()


def test_parse_a_claude_transcript():
    lines = [
        {"type": "system", "subtype": "init", "session_id": "abc", "model": "claude-x"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}},
        {"type": "result", "subtype": "success", "is_error": True, "result": "Rate limit reached (429)",
         "num_turns": 2},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\nnot json\n"
    s = agentshape.parse(text)
    assert (s.format, s.session_id, s.model, s.output, s.saw_result, s.error_category, s.skipped_lines) == (
        "claude", "abc", "claude-x", "done", True, "rate_limit", 1)
    assert s.failed and s.result["num_turns"] == 2
    e = agentshape.extract(text, format="auto")
    assert e.exit_code == 3 and e.run.error_category == "rate_limit"
    with pytest.raises(agentshape.AgentError, match="Rate limit"):
        e.raise_for_outcome()
    with pytest.raises(AttributeError):
        s.no_such_field


def test_check_invariants_and_contradictions():
    schema = json.loads((REPO / "schemas/code-review.json").read_text())

    def review(sev, blockers):
        return {"findings": [{"severity": sev, "file": "src/a.rs", "line": 10,
                              "description": "path traversal in join", "raisedBy": "security"}],
                "counts": {"blocker": blockers, "major": int(sev == "major"), "minor": 0, "nit": 0}}

    r = agentshape.check({"sec": review("blocker", 1), "conv": review("major", 1)}, schema=schema)
    assert r.sources == ["sec", "conv"] and not r.ok
    assert r.errors["sec"] == [] and [e.kind for e in r.errors["conv"]] == ["invariant"]
    (c,) = r.contradictions
    assert c["kind"] == "contradiction" and c["key"] == {"file": "src/a.rs", "line": 10}
    assert [v["value"] for v in c["values"]] == ["blocker", "major"]
    assert r.contradiction_report()["items_seen"] == 2
    clean = agentshape.check([review("major", 0), review("major", 0)], profile="code-review")
    assert clean.ok and clean.contradictions == []
    ex = agentshape.extract_many([json.dumps(review("nit", 0)), json.dumps(review("minor", 0))])
    assert len(agentshape.check(ex, contradictions=True).contradictions) == 1


def test_extract_many_keeps_order_and_matches_extract():
    texts = [f"reply {i}: {{'n': {i},}}" if i % 3 else f"nothing {i}" for i in range(500)]
    one = [agentshape.extract(t).to_dict() for t in texts]
    for threads in (1, 2, 8, None):
        assert [e.to_dict() for e in agentshape.extract_many(texts, threads=threads)] == one
    ex = agentshape.Extractor(schema={"type": "object", "required": ["n"]})
    assert [e.valid for e in ex.extract_many(texts)] == [bool(i % 3) for i in range(500)]
    assert agentshape.extract_many([]) == []


def test_stubs_and_marker_ship_with_the_package():
    pkg = pathlib.Path(agentshape.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "__init__.pyi").exists()
    stub = (pkg / "__init__.pyi").read_text()
    for name in agentshape.__all__:
        assert name in stub, name
    assert agentshape.extract.__doc__ and ">>>" in agentshape.Validator.__doc__
