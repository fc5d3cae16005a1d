"""Pydantic v2: a model class as the schema, `parse_as` for the instance."""

from typing import List, Literal, Optional

import pytest

pydantic = pytest.importorskip("pydantic", minversion="2")

import agentshape  # noqa: E402


class Finding(pydantic.BaseModel):
    file: str
    line: int
    severity: Literal["blocker", "major", "minor", "nit"]


class Review(pydantic.BaseModel):
    summary: str
    findings: List[Finding]
    reviewer: Optional[str] = None


REPLY = """Here is my review:
```json
{"summary": "one issue", "findings": [{"file": "a.rs", "line": 3, "severity": "major",}],}
```"""


def test_model_class_as_schema_and_parse_as():
    e = agentshape.extract(REPLY, schema=Review)
    assert e.valid and e.method == "repaired"
    review = e.parse_as(Review)
    assert isinstance(review, Review)
    assert review.findings[0] == Finding(file="a.rs", line=3, severity="major")


def test_schema_errors_from_the_model_schema():
    e = agentshape.extract('{"summary": 1, "findings": [{"file": "a", "line": "x", "severity": "huge"}]}',
                           schema=Review)
    assert not e.valid
    paths = sorted(x.instance_path for x in e.errors)
    assert paths == ["/findings/0/line", "/findings/0/severity", "/summary"]
    with pytest.raises(pydantic.ValidationError):
        e.parse_as(Review)


def test_validator_from_model_and_model_instances_as_values():
    v = agentshape.Validator(Review)
    good = Review(summary="s", findings=[Finding(file="f", line=1, severity="nit")])
    assert v.is_valid(good) and v.validate(good) == []
    assert v.is_valid(good.model_dump())


def test_parse_as_on_nothing_raises_no_output():
    with pytest.raises(agentshape.NoOutputError):
        agentshape.extract("no json at all").parse_as(Review)


def test_parse_as_plain_classes():
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: int
        y: int

    assert agentshape.extract("{'x': 1, 'y': 2}").parse_as(Point) == Point(1, 2)
    assert agentshape.extract("[1, 2]").parse_as(tuple) == (1, 2)
