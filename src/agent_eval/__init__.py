"""agent-eval: check what an AI agent did against rules in YAML, deterministically."""

from agent_eval._version import __version__
from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.errors import ConfigError, InputError
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.results import Results

__all__ = [
    "ConfigError",
    "InputError",
    "LlmCall",
    "Location",
    "Results",
    "ToolCall",
    "Trace",
    "__version__",
    "evaluate",
    "load_suite",
    "load_traces",
]
