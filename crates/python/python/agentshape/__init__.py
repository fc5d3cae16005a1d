"""agentshape: turn what LLM agents print into validated data.

Everything is implemented in Rust (agentshape-core); this file only
re-exports the native module. See ``help(agentshape.extract)``.

>>> import agentshape
>>> agentshape.extract("Sure! ```json\\n{\\"ok\\": true}\\n```").value
{'ok': True}
"""

from ._agentshape import *  # noqa: F401,F403
from ._agentshape import __version__  # noqa: F401

__all__ = [
    "AgentError",
    "AgentshapeError",
    "CheckReport",
    "Decoder",
    "Error",
    "Extraction",
    "Extractor",
    "InputError",
    "InvalidOutputError",
    "NoOutputError",
    "NotJSONError",
    "ProfileError",
    "RunSummary",
    "SchemaError",
    "UsageError",
    "Validator",
    "Violation",
    "check",
    "extract",
    "extract_many",
    "parse",
    "validate_many",
]
