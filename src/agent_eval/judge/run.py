"""How a command runs a suite that has judge checks (``run``: ``--judge``, the baseline
for pairwise checks)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from agent_eval.judge.compile import JudgeRun
from agent_eval.judge.providers import JudgeSetupError
from agent_eval.judge.record import record
from agent_eval.results import Results


def base_outputs(base: Results | None) -> dict[str, dict[str, str]] | None:
    """The base branch's outputs per scenario and trace (results.json
    ``scenarios[].outputs``), for pairwise checks; None without a baseline."""
    if base is None:
        return None
    out: dict[str, dict[str, str]] = {}
    for s in base.scenarios:
        if s.outputs:
            texts = {str(k): v for k, v in s.outputs.items() if isinstance(v, str)}
            if texts:
                out[s.id] = texts
    return out


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def judged_results(run: JudgeRun, mode: str, evaluate: Callable[[], Results], *,
                   base: Results | None, base_hint: str = "",
                   log: Callable[[str], None] = _stderr) -> Results | str:
    """Evaluate with the judge in ``mode`` (replay, record, refresh): the results, or an
    error message when the judge cannot be used (no SDK, no key; nothing was called)."""
    ctx = run.context
    ctx.mode = mode
    ctx.base_outputs = base_outputs(base)
    ctx.base_hint = base_hint
    if mode == "replay" or not run.store_needed:
        return evaluate()
    try:
        return record(run, evaluate, log=log)
    except JudgeSetupError as exc:
        return f"--judge {mode}: {exc}"
