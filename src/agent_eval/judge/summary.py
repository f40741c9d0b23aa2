"""What the judge checks add to the results (docs/judge.md "In the results"): per
scenario, each check's counts by status and mean score; per suite, the mode, the store,
the judgements used and missing, and the cost of judging. Everything here merges across
``--jobs`` processes and shards independently of the order of the traces."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

from agent_eval.errors import InputError
from agent_eval.findings import Finding
from agent_eval.judge.compile import CompiledJudge, JudgeRun
from agent_eval.judge.evaluate import STATUS, Judged
from agent_eval.model import finite_mean, finite_sum
from agent_eval.rule_ids import (
    JUDGE_ERROR,
    JUDGE_HALLUCINATION,
    JUDGE_MISSING,
    JUDGE_NO_BASELINE,
    JUDGE_NOT_RECORDED,
    JUDGE_PAIRWISE,
    JUDGE_QUALITY,
    JUDGE_RECORDED,
    JUDGE_RUBRIC,
    JUDGE_SAFETY,
    JUDGE_SKIPPED,
    JUDGE_STORE,
)
from agent_eval.sections import JudgeCheckResult, JudgeSummary, ScenarioResult

MAX_OUTPUTS = 100  # outputs kept per scenario with a pairwise check (smallest trace ids)
RULES = tuple(r.id for r in (
    JUDGE_RUBRIC, JUDGE_QUALITY, JUDGE_SAFETY, JUDGE_HALLUCINATION, JUDGE_PAIRWISE,
    JUDGE_RECORDED, JUDGE_SKIPPED, JUDGE_MISSING, JUDGE_ERROR, JUDGE_NO_BASELINE,
    JUDGE_NOT_RECORDED, JUDGE_STORE))


@dataclass
class JudgeAcc:
    """One scenario's judge checks over its traces so far."""

    counts: list[list[int]]  # per check: traces by status (STATUS order)
    scores: list[array[float]]  # per check: the 0-1 scores known
    used: set[str] = field(default_factory=set)  # judgement keys found in the store
    missing: set[str] = field(default_factory=set)
    outputs: dict[str, str] = field(default_factory=dict)  # trace id -> output (pairwise)

    @classmethod
    def for_checks(cls, n: int) -> JudgeAcc:
        return cls([[0] * len(STATUS) for _ in range(n)], [array("d") for _ in range(n)])

    def add(self, judged: Judged) -> None:
        for i, (status, score) in enumerate(zip(judged.statuses, judged.scores,
                                                strict=True)):
            self.counts[i][status] += 1
            if not math.isnan(score):
                self.scores[i].append(score)
        self.used.update(judged.used)
        self.missing.update(judged.missing)

    def keep_output(self, trace_id: str, text: str, limit: int) -> None:
        """Keep a trace's output for the next run's pairwise checks (results.json
        ``scenarios[].outputs``): the :data:`MAX_OUTPUTS` smallest trace ids."""
        outputs = self.outputs
        if trace_id in outputs or len(outputs) < MAX_OUTPUTS:
            outputs[trace_id] = text[:limit]
            return
        top = max(outputs)
        if trace_id < top:
            del outputs[top]
            outputs[trace_id] = text[:limit]

    def merge(self, other: JudgeAcc) -> None:
        for mine, theirs in zip(self.counts, other.counts, strict=True):
            for k, n in enumerate(theirs):
                mine[k] += n
        for a, b in zip(self.scores, other.scores, strict=True):
            a.extend(b)
        self.used |= other.used
        self.missing |= other.missing
        for tid, text in other.outputs.items():
            self.keep_output(tid, text, len(text))

    def to_record(self) -> dict[str, Any]:
        """As a shard's record (sharding.py) holds it: plain JSON."""
        return {"counts": self.counts,
                "scores": [[None if math.isnan(x) else x for x in a] for a in self.scores],
                "used": sorted(self.used), "missing": sorted(self.missing),
                "outputs": dict(sorted(self.outputs.items()))}

    def load_record(self, rec: dict[str, Any]) -> None:
        """Set from :meth:`to_record`'s output. A record it cannot have written (a shard's
        part may come from anyone) raises ValueError: a key that is no text stopped the
        merge with a traceback when the store was looked up."""
        counts, scores = rec["counts"], rec["scores"]
        if not (type(counts) is list and len(counts) == len(self.counts)
                and all(type(c) is list and len(c) == len(STATUS)
                        and all(type(n) is int and n >= 0 for n in c) for c in counts)):
            raise ValueError("its judge counts are not counts by status of each check")
        if not (type(scores) is list and len(scores) == len(self.scores)
                and all(type(a) is list and all(
                    x is None or (type(x) in (int, float) and 0 <= x <= 1) for x in a)
                    for a in scores)):
            raise ValueError("its judge scores are not scores from 0 to 1 of each check")
        used, missing, outputs = rec["used"], rec["missing"], rec.get("outputs") or {}
        if not (type(used) is list and type(missing) is list
                and all(type(k) is str for k in (*used, *missing))):
            raise ValueError("its judgement keys are not text")
        if not (type(outputs) is dict and all(type(v) is str for v in outputs.values())):
            raise ValueError("its outputs are not text by trace id")
        self.counts = [list(c) for c in counts]
        self.scores = [array("d", (x for x in a if x is not None)) for a in scores]
        self.used = set(used)
        self.missing = set(missing)
        self.outputs = dict(outputs)

    def entries(self, checks: tuple[CompiledJudge, ...]) -> list[JudgeCheckResult]:
        """The scenario's ``judge`` entries of results.json, as the checks are written."""
        out = []
        for check in checks:
            counts = self.counts[check.index]
            known = sorted(self.scores[check.index])
            mean = finite_mean(known)
            out.append(JudgeCheckResult(
                kind=check.kind, name=check.label, threshold=check.threshold,
                pass_score=check.pass_score, in_score=check.in_score,
                severity=check.severity,
                counts={name: counts[k] for k, name in enumerate(STATUS)},
                mean_score=None if mean is None else round(mean, 6),
                config=check.ref))
        return out


def used_keys(accs: list[JudgeAcc | None]) -> frozenset[str]:
    """The keys of the judgements the scenarios used."""
    return frozenset().union(*(acc.used for acc in accs if acc is not None))


def summary(run: JudgeRun, accs: list[JudgeAcc | None], made: dict[str, Any] | None = None
            ) -> JudgeSummary:
    """The suite's ``judge`` entry of results.json. ``made``: what this run's calls to the
    model cost (record / refresh), else nothing was called."""
    used = used_keys(accs)
    missing: set[str] = set()
    counts = [0] * len(STATUS)
    for acc in accs:
        if acc is None:
            continue
        missing |= acc.missing
        for per in acc.counts:
            for k, n in enumerate(per):
                counts[k] += n
    store = run.store
    judgements = [store.entries[k] for k in sorted(used) if k in store.entries]
    tokens_in = [j.input_tokens for j in judgements]
    tokens_out = [j.output_tokens for j in judgements]
    costs = [j.cost_usd for j in judgements]

    def total(values: list[Any]) -> Any:
        if any(v is None for v in values):
            return None
        # a store's costs overflowing to infinity: unknown, as one not recorded
        if any(isinstance(v, float) for v in values):
            return finite_sum(values)
        count = sum(values)  # tokens: a total JSON's 64 bits cannot hold is unknown too
        return count if count < 1 << 63 else None

    cost = total(costs)
    made = made or {}
    return JudgeSummary(
        mode=run.context.mode,
        provider=run.provider or None,
        model=run.model or None,
        store=run.store_file,
        checks={name: counts[k] for k, name in enumerate(STATUS)},
        judgements_used=len(used),
        judgements_missing=len(missing),
        store_conflicts=len(store.conflicts),
        input_tokens=total(tokens_in),
        output_tokens=total(tokens_out),
        # what the judgements this run used cost when they were recorded (null: a price
        # was not configured then); replaying them costs nothing
        cost_usd=None if cost is None else round(cost, 6),
        calls=int(made.get("calls", 0)),
        recorded=int(made.get("recorded", 0)),
        cost_usd_this_run=round(float(made.get("cost_usd", 0.0)), 6),
        command=run.record_command() if missing else None,
    )


def input_errors(run: JudgeRun, scenarios: list[ScenarioResult]) -> list[InputError]:
    """The judge's part of ``input_errors``: a store line that is not a judgement, and one
    error per check with judgements missing (or that could not be made), with the command
    that records them. They make the verdict ``error``: the run could not check
    everything it was asked to."""
    out = [JUDGE_STORE.input_error(run.store_file, line, message)
           for line, message in run.store.problems]
    if run.store.conflicts:
        out.append(JUDGE_STORE.input_error(
            run.store_file, run.store.conflict_line,
            f"{len(run.store.conflicts)} judgement(s) are stored twice with different "
            f"verdicts (a merge kept both lines; the first is given again on this line); "
            f"the line of each that sorts first is used: rewrite the store with "
            f"`agent-eval judge tidy {run.store_file}` and review the diff"))
    for s in scenarios:
        per: dict[tuple[str, int], list[Finding]] = {}
        for f in s.findings:
            if f.rule in (JUDGE_MISSING.id, JUDGE_ERROR.id):
                per.setdefault((f.config.key_path, f.config.line), []).append(f)
        for (key_path, line), found in sorted(per.items(), key=lambda kv: kv[0][1]):
            f = found[0]
            n = len(found)
            if f.rule == JUDGE_MISSING.id:
                cmd = f.details.get("command") or run.record_command()
                text = (f"{n} judgement(s) of {key_path} are not in the store "
                        f"{run.store_file}: record them with `{cmd}` and commit the store")
            else:
                text = (f"{n} judgement(s) of {key_path} could not be made: "
                        f"{f.details.get('reason', f.message)}")
            out.append(InputError(f.rule, f.config.file, line, text))
    return out
