"""The bounds on everything agent-eval reads (docs/security.md "Limits").

In a pull request every input may be written by a stranger, so every read has a bound:
a file read whole, an archive (its bytes and its members), the nesting of a JSON or YAML
value, what YAML aliases expand to, the input errors kept per file, and the length of a
name shown in an output. A suite sets them under ``limits:``
(:class:`agent_eval.config.models.LimitsConfig`); hitting one is an input error for that
file (or a config error for a config file), never a crash or a hang.

The suite file and its policies are read before the suite's own ``limits:`` are known:
they are read with :data:`CONFIG` (the defaults).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of what agent-eval reads into memory (docs/security.md)."""

    # the largest file (or archive member, or JSON line) read into memory whole
    max_file_bytes: int = 64 * MiB
    # the decompressed bytes read from one archive (.eval zip), all members together
    max_archive_bytes: int = 512 * MiB
    # the members one archive may hold (its central directory is read whole)
    max_archive_members: int = 100_000
    # objects and arrays in one JSON document or line ({ and [ counted in its bytes)
    max_containers: int = 1_000_000
    # how deeply JSON / YAML values may nest
    max_depth: int = 100
    # values that YAML aliases (*name) may add to a document
    max_alias_nodes: int = 10_000
    # a tool name, trace id or scenario name longer than this is cut, with a marker
    max_name_chars: int = 256
    # a finding's value whose JSON text is longer than this is shown cut, with a marker
    max_value_chars: int = 2000
    # the input errors of one file kept, each with its line; beyond them they are counted
    # (one more input error says how many, of which rules, on which lines)
    max_input_errors: int = 1000


DEFAULT = Limits()
# what the suite file, its policies and other config files are read with
CONFIG = Limits(max_alias_nodes=100_000)
# what a results file (report, diff, merge, a baseline) is read with: it lists every trace,
# so it may be larger than a trace file, and is as deep as one
RESULTS = Limits(max_file_bytes=16 * DEFAULT.max_file_bytes,
                 max_containers=20 * DEFAULT.max_containers)
# the highest max_depth a suite may set: orjson writes at most 254 levels, and an output
# wraps a value in a few levels of its own
DEPTH_CEILING = 200
# the Python frames evaluating one trace may need: a policy schema's generated test takes
# about ten frames per level of nesting of the value it checks (a $ref, its twin, the
# keyword's test), so a value nested DEPTH_CEILING deep needs about 2,000 more than the
# caller's, beyond Python's default limit of 1,000 (docs/security.md "Limits")
RECURSION_FRAMES = 16 * DEPTH_CEILING + 1_000


def deep_enough() -> None:
    """Raise the interpreter's recursion limit to :data:`RECURSION_FRAMES` (never lower
    it): what checking a value as deep as the limits allow needs. Python 3.11 runs a call
    of a Python function without a C frame, so the C stack is not what bounds this."""
    if sys.getrecursionlimit() < RECURSION_FRAMES:
        sys.setrecursionlimit(RECURSION_FRAMES)


class LimitError(ValueError):
    """An input exceeded a limit; the message says which, and the key that raises it."""
