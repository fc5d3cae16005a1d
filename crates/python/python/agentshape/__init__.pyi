"""Type stubs of agentshape (the native module agentshape._agentshape)."""

import os
from typing import Any, Callable, Iterable, Literal, Mapping, Optional, Sequence, TypeVar, Union

__version__: str
MAX_DEPTH: int

JSON = Any
"""A JSON value: dict, list, str, int, float, bool or None."""

SchemaLike = Union[Mapping[str, Any], bool, str, "os.PathLike[str]", "Validator", type]
"""A dict, JSON text, a path, a Pydantic v2 model class, or a compiled Validator."""

ProfileLike = Union[str, "os.PathLike[str]"]
Format = Literal[
    "auto", "claude", "codex", "anthropic", "openai_chat", "openai_responses",
    "ollama", "gemini", "text",
]
Method = Literal["structured", "fenced", "bare", "repaired", "markers", "none"]
T = TypeVar("T")

class AgentshapeError(Exception):
    """Base of every agentshape exception."""
    exit_code: Optional[int]

class UsageError(AgentshapeError, ValueError):
    """A caller mistake (exit 64)."""

class SchemaError(UsageError):
    """The schema does not compile, is not JSON, or is not a schema (exit 64)."""

class ProfileError(UsageError):
    """Unknown profile or bad profile file (exit 64)."""

class NotJSONError(UsageError):
    """A Python value JSON cannot hold: NaN, a non-str key, a cycle, a set... (exit 64)."""

class InputError(AgentshapeError):
    """A file is missing or unreadable, or bytes are not UTF-8 (exit 66)."""

class InvalidOutputError(AgentshapeError):
    """Found but invalid (exit 1)."""

class NoOutputError(AgentshapeError):
    """No structured output found (exit 2)."""

class AgentError(AgentshapeError):
    """The agent or provider reported an error (exit 3)."""

class Violation:
    """One reason an instance is invalid: the CLI's error shape."""
    @property
    def instance_path(self) -> str: ...
    @property
    def schema_path(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def kind(self) -> Optional[Literal["invariant", "number", "text"]]: ...
    @property
    def rule(self) -> Optional[str]: ...
    def to_dict(self) -> dict[str, str]: ...

Error = Violation

class RunSummary:
    """What one agent run said and how it ended (``agentshape parse --json``)."""
    file: Optional[str]
    format: str
    session_id: Optional[str]
    model: Optional[str]
    output: str
    structured_output: JSON
    result: Optional[dict[str, Any]]
    saw_result: bool
    api_key_source: Optional[str]
    error: Optional[str]
    error_category: Optional[str]
    warnings: list[str]
    skipped_lines: int
    tool_uses: int
    @property
    def failed(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...

class Extraction:
    """The outcome of extracting one reply or run (``agentshape extract --json``)."""
    @property
    def value(self) -> JSON: ...
    @property
    def method(self) -> Method: ...
    @property
    def valid(self) -> bool: ...
    @property
    def errors(self) -> list[Violation]: ...
    @property
    def repairs(self) -> list[str]: ...
    @property
    def coercions(self) -> list[dict[str, Any]]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def run(self) -> Optional[RunSummary]: ...
    @property
    def exit_code(self) -> Literal[0, 1, 2, 3]: ...
    def raise_for_outcome(self) -> "Extraction": ...
    def parse_as(self, model: type[T]) -> T: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __bool__(self) -> bool: ...

class Extractor:
    """Extraction settings compiled once, reused over many texts."""
    def __init__(
        self,
        *,
        schema: Optional[SchemaLike] = None,
        profile: Optional[ProfileLike] = None,
        coerce: bool = False,
        format: Optional[Format] = None,
    ) -> None: ...
    def extract(self, text: Union[str, bytes]) -> Extraction: ...
    def extract_many(
        self, texts: Iterable[Union[str, bytes]], *, threads: Optional[int] = None
    ) -> list[Extraction]: ...

class Validator:
    """A JSON Schema compiled once; thread-safe."""
    def __init__(
        self,
        schema: SchemaLike,
        *,
        draft: Optional[str] = None,
        assert_formats: Optional[bool] = None,
        retriever: Optional[Callable[[str], JSON]] = None,
    ) -> None: ...
    def validate(self, instance: JSON) -> list[Violation]: ...
    def is_valid(self, instance: JSON) -> bool: ...
    def validate_json(self, text: Union[str, bytes]) -> list[Violation]: ...
    def validate_many(
        self, instances: Iterable[JSON], *, threads: Optional[int] = None
    ) -> list[list[Violation]]: ...
    def coerce(self, instance: JSON) -> tuple[JSON, list[dict[str, Any]]]: ...
    @property
    def schema(self) -> JSON: ...

class Decoder:
    """Incremental transcript decoder: feed chunks, get events, finish for the summary."""
    def __init__(self, format: Format = "auto", *, max_line_bytes: Optional[int] = None) -> None: ...
    def feed(self, chunk: Union[bytes, str]) -> list[dict[str, Any]]: ...
    def finish(self) -> RunSummary: ...

class CheckReport:
    """Violations per source and contradictions across sources."""
    @property
    def ok(self) -> bool: ...
    @property
    def sources(self) -> list[str]: ...
    @property
    def errors(self) -> dict[str, list[Violation]]: ...
    @property
    def contradictions(self) -> list[dict[str, Any]]: ...
    def contradiction_report(self) -> Optional[dict[str, Any]]: ...
    def __bool__(self) -> bool: ...

def extract(
    text: Union[str, bytes],
    *,
    schema: Optional[SchemaLike] = None,
    profile: Optional[ProfileLike] = None,
    coerce: bool = False,
    format: Optional[Format] = None,
) -> Extraction: ...
def extract_many(
    texts: Iterable[Union[str, bytes]],
    *,
    schema: Optional[SchemaLike] = None,
    profile: Optional[ProfileLike] = None,
    coerce: bool = False,
    format: Optional[Format] = None,
    threads: Optional[int] = None,
) -> list[Extraction]: ...
def validate_many(
    instances: Iterable[JSON], *, schema: SchemaLike, threads: Optional[int] = None
) -> list[list[Violation]]: ...
def parse(
    transcript: Union[str, bytes, "os.PathLike[str]"],
    *,
    format: Format = "auto",
    max_line_bytes: Optional[int] = None,
) -> RunSummary: ...
def check(
    values: Union[Sequence[Union[JSON, Extraction]], Mapping[str, Union[JSON, Extraction]]],
    *,
    schema: Optional[SchemaLike] = None,
    profile: Optional[ProfileLike] = None,
    contradictions: bool = True,
    items: Optional[str] = None,
    key: Optional[Sequence[str]] = None,
    compare: Optional[Sequence[str]] = None,
    near_lines: Optional[int] = None,
) -> CheckReport: ...
