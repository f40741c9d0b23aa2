"""``--judge record`` and ``--judge refresh`` (docs/judge.md "Recording"): evaluate,
ask the model for the judgements the store lacks, write them, and evaluate again, until
nothing more is asked. Several rounds, because a check that runs only when the ones
before it passed (AgentCI: safety after the rubric, hallucination after safety) is asked
only once their verdicts are known: the model is never asked for a judgement the gate
does not need.

Every call counts against the run's budget, checked before each call (with
``concurrency`` calls in flight, a limit can be passed by at most that many calls). A
judgement that cannot be made (the budget, the API, an invalid verdict after the retries)
is reported as ``judge/error``, never as a pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agent_eval.judge.compile import JudgeRun
from agent_eval.judge.config import JudgeConfig
from agent_eval.judge.evaluate import Request
from agent_eval.judge.providers import Answer, CallError, Provider, make_provider
from agent_eval.judge.store import MAX_REASONING, Judgement
from agent_eval.safetext import one_line

T = TypeVar("T")

MAX_ROUNDS = 6  # recorded, rubric/quality, safety, hallucination, pairwise, and a last look


@dataclass
class Spend:
    """What this run's calls cost (results.json ``judge``: calls, recorded,
    cost_usd_this_run)."""

    calls: int = 0
    recorded: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "recorded": self.recorded,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd}


def cost_of(config: JudgeConfig, input_tokens: int | None, output_tokens: int | None
            ) -> float | None:
    """USD by ``judge.price`` (per million tokens); None without a price or usage."""
    if config.price is None or input_tokens is None or output_tokens is None:
        return None
    return (input_tokens * config.price.input + output_tokens * config.price.output) / 1e6


def _over_budget(config: JudgeConfig, spend: Spend) -> str | None:
    b = config.budget
    if b is None:
        return None
    if b.max_calls is not None and spend.calls >= b.max_calls:
        return f"the run's budget is spent (budget.max_calls: {b.max_calls})"
    if b.max_tokens is not None and spend.input_tokens + spend.output_tokens >= b.max_tokens:
        return f"the run's budget is spent (budget.max_tokens: {b.max_tokens})"
    if b.max_cost_usd is not None and spend.cost_usd >= b.max_cost_usd:
        return f"the run's budget is spent (budget.max_cost_usd: {b.max_cost_usd})"
    return None


def judge_one(request: Request, provider: Provider, config: JudgeConfig,
              spend: Spend) -> Judgement | str:
    """Ask for one judgement (with the retries): the judgement, or why it failed."""
    last = "not asked"
    for _ in range(config.max_retries + 1):
        with spend.lock:
            why = _over_budget(config, spend)
            if why is not None:
                return why
            spend.calls += 1
        try:
            answer: Answer = provider.ask(request.prompt)
        except CallError as exc:
            last = str(exc)
            continue
        cost = cost_of(config, answer.input_tokens, answer.output_tokens)
        with spend.lock:
            spend.input_tokens += answer.input_tokens or 0
            spend.output_tokens += answer.output_tokens or 0
            spend.cost_usd += cost or 0.0
            spend.recorded += 1
        v = answer.verdict
        score = v.get("score")
        if isinstance(score, float) and score.is_integer():
            score = int(score)  # JSON Schema's integer takes 4.0; the store holds 4
        return Judgement(
            key=request.key, kind=request.kind, provider=provider.name,
            model=config.model or "", template=request.prompt.template,
            reasoning=str(v.get("reasoning", ""))[:MAX_REASONING],
            score=score if request.kind != "pairwise" else None,
            winner=v.get("winner") if request.kind == "pairwise" else None,
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
            cost_usd=None if cost is None else round(cost, 8),
            response_model=answer.response_model, check=request.check, trace=request.trace)
    return f"{last} (after {config.max_retries + 1} attempt(s))"


def judge_all(requests: list[Request], provider: Provider, config: JudgeConfig,
              spend: Spend) -> tuple[list[Judgement], dict[str, str]]:
    """Judge ``requests`` with ``concurrency`` calls in flight: the judgements made and,
    by key, why the others could not be."""
    made: list[Judgement] = []
    failed: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        for request, got in zip(requests, pool.map(
                lambda r: judge_one(r, provider, config, spend), requests), strict=True):
            if isinstance(got, str):
                failed[request.key] = got
            else:
                made.append(got)
    return made, failed


def record(run: JudgeRun, evaluate: Callable[[], T], *,
           log: Callable[[str], None], provider: Provider | None = None) -> T:
    """Evaluate with ``evaluate`` (which reads ``run``), recording what the store lacks
    (``run.context.mode``: record, or refresh: everything this run needs, again), and
    return the last evaluation's results."""
    ctx = run.context
    assert ctx.mode in ("record", "refresh") and run.config is not None
    config = run.config
    ctx.collect = True
    spend = Spend()
    if provider is None:
        provider = make_provider(config)
    results: T | None = None
    path = Path(run.store_path)
    for _ in range(MAX_ROUNDS):
        results = evaluate()
        todo = [r for k, r in sorted(run.pending.items()) if k not in ctx.failures
                and (ctx.mode == "record" or k not in ctx.fresh)]
        if not todo:
            break
        made, failed = judge_all(todo, provider, config, spend)
        for j in made:
            run.store.put(j)
        ctx.fresh = ctx.fresh | {j.key for j in made}
        ctx.failures.update(failed)
        ctx.made = spend.as_dict()
        if made:
            run.store.save(path)
        # why a judgement was not made is the endpoint's text (an error body, a refusal)
        # and the store's name the suite's: one line, its control characters escaped, as
        # every log line of such text (a refusal's "\n::error::…" was a workflow command,
        # its ESC codes the terminal's)
        log(one_line(f"judge: {len(made)} judgement(s) recorded into {run.store_file}"
                     + (f", {len(failed)} could not be made (first: "
                        f"{next(iter(failed.values()))})" if failed else "")))
    ctx.made = spend.as_dict()
    log(f"judge: {spend.calls} call(s), {spend.input_tokens + spend.output_tokens} token(s)"
        + (f", {spend.cost_usd:.6f} USD" if config.price is not None else
           " (set judge.price to see the cost)"))
    assert results is not None  # MAX_ROUNDS > 0
    return results
