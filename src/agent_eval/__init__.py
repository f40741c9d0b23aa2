"""agent-eval: check what an AI agent did against rules in YAML, deterministically.

The public names are imported lazily, so ``agent-eval --version`` starts fast; ``dir()``
lists them, so ``help(agent_eval)`` shows them (docs/library.md).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agent_eval._version import __version__

if TYPE_CHECKING:
    from agent_eval.api import evaluate, load_suite, load_traces
    from agent_eval.errors import ConfigError, InputError
    from agent_eval.findings import ConfigRef, Finding, TraceRef
    from agent_eval.model import LlmCall, Location, ToolCall, Trace
    from agent_eval.results import Results
    from agent_eval.suite import Suite

_EXPORTS = {
    "evaluate": "agent_eval.api",
    "load_suite": "agent_eval.api",
    "load_traces": "agent_eval.api",
    "ConfigError": "agent_eval.errors",
    "InputError": "agent_eval.errors",
    "ConfigRef": "agent_eval.findings",
    "Finding": "agent_eval.findings",
    "TraceRef": "agent_eval.findings",
    "LlmCall": "agent_eval.model",
    "Location": "agent_eval.model",
    "ToolCall": "agent_eval.model",
    "Trace": "agent_eval.model",
    "Results": "agent_eval.results",
    "Suite": "agent_eval.suite",
}

__all__ = [
    "ConfigError",
    "ConfigRef",
    "Finding",
    "InputError",
    "LlmCall",
    "Location",
    "Results",
    "Suite",
    "ToolCall",
    "Trace",
    "TraceRef",
    "__version__",
    "evaluate",
    "load_suite",
    "load_traces",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_eval' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    """The module's names and the lazy public ones (what ``help()`` and completion show)."""
    return sorted({*globals(), *__all__})
