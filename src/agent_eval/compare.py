"""Comparison of a run with a baseline run (docs/results.md "The baseline"): pure functions.

:func:`compare` gives the :class:`~agent_eval.sections.Comparison` stored in
``results.baseline`` (docs/results.md "baseline"): the base run's counts and metrics,
base / head / Δ per suite metric and per scenario, the scenarios that went pass → fail
(regressions) and fail → pass (fixes), every finding classified new / unchanged / absent
by its fingerprint (the one SARIF uses), and whether the configured rules changed between
the two runs (``policy``), so unlike things are not compared silently.

:func:`attach` stores it and then evaluates ``max_cost_multiplier`` of the scenarios and
``pass_criteria.regression`` (the criteria entries of kind ``regression`` the run wrote as
``skip``), and makes the verdict reflect them. The findings of the regression gates are
findings of the run like any other: each is classified new / unchanged too, once it is
known, so that ``new_violations`` + ``unchanged_violations`` is every error and warning
finding of the run (the action's ``violations`` output), and a missed gate is never "0
new" beside a failing verdict (docs/results.md "The baseline"). ``fail_on_new_violations``
is judged last, on the new violations including those of the other gates.

The inventory a run records about its configuration for the policy check is
:func:`agent_eval.suite.inventory`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from agent_eval.findings import GATE_SEVERITIES, Finding, count_violations
from agent_eval.results import (
    Results,
    assign_fingerprints,
    criterion_finding,
    verdict_of,
    worse,
)
from agent_eval.rule_ids import (
    CRITERIA_REGRESSION,
    SCENARIO_NO_BASELINE,
    SCENARIO_NOT_RECORDED,
    SCENARIO_THRESHOLD,
    SCENARIO_WARN_THRESHOLD,
)
from agent_eval.scenarios.metrics import at_least, at_most, status_rates
from agent_eval.sections import (
    Comparison,
    CriterionResult,
    DeltaRow,
    Inventory,
    NoBaseline,
    PolicyChange,
    ScenarioChange,
    ScenarioResult,
    Source,
)

__all__ = ["attach", "compare", "cost_multipliers", "no_baseline", "policy_change"]

# results.counts keys compared
COUNT_KEYS = ("traces", "tool_calls", "violations", "input_errors", "traces_failing")


def policy_change(base: Inventory | None, head: Inventory | None) -> PolicyChange:
    """Rules added, removed and changed between two inventories."""
    if not base or not head:
        return PolicyChange(False, False, (), (), (), "the base run did not record its "
                            "rules; a changed policy cannot be detected")
    b, h = base.rules, head.rules
    added = tuple(sorted(set(h) - set(b)))
    removed = tuple(sorted(set(b) - set(h)))
    modified = tuple(sorted(k for k in set(b) & set(h) if b[k] != h[k]))
    changed = bool(added or removed or modified)
    message = "policy unchanged"
    if changed:
        message = (f"policy changed: {_n(len(added), 'rule')} added, {len(removed)} removed"
                   + (f", {len(modified)} changed" if modified else ""))
    return PolicyChange(True, changed, added, removed, modified, message)


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------- comparison
def _counts(results: Results) -> dict[str, int]:
    c = {k: int(v) for k, v in results.counts.items() if isinstance(v, int)}
    c["traces_failing"] = results.traces_failing
    return c


def _delta(base: Any, head: Any) -> float | int | None:
    if isinstance(base, bool) or isinstance(head, bool):
        return None
    if isinstance(base, int | float) and isinstance(head, int | float):
        d = head - base
        return round(d, 6) if isinstance(d, float) else d
    return None


def _row(name: str, base: Any, head: Any) -> DeltaRow:
    return DeltaRow(name, base, head, _delta(base, head))


def _ok(status: str | None) -> bool:
    return status in ("pass", "warn")


def _change(b: ScenarioResult | None, h: ScenarioResult | None) -> str:
    if b is None:
        return "added"
    if h is None:
        return "removed"
    if _ok(b.status) and not _ok(h.status):
        return "regression"
    if not _ok(b.status) and _ok(h.status):
        return "fix"
    return "same" if b.status == h.status else "changed"


def _scenario_changes(head: Results, base: Results) -> list[ScenarioChange]:
    base_sc = {s.id: s for s in base.scenarios}
    head_sc = {s.id: s for s in head.scenarios}
    out = []
    for sid in dict.fromkeys([*head_sc, *base_sc]):
        b, h = base_sc.get(sid), head_sc.get(sid)
        bscore = None if b is None else b.score
        hscore = None if h is None else h.score
        out.append(ScenarioChange(
            sid, _change(b, h), None if b is None else b.status,
            None if h is None else h.status, bscore, hscore, _delta(bscore, hscore),
            None if b is None else _raw_cost(b), None if h is None else _raw_cost(h)))
    return out


def _raw_cost(s: ScenarioResult) -> Any:
    """The scenario's cost as its results file holds it (compared as it is)."""
    return s.metrics.get("cost_usd")


def compare(head: Results, base: Results, source: Source | None = None) -> Comparison:
    """``head`` compared with ``base``: the ``baseline`` of ``head``'s results."""
    base_counts, head_counts = _counts(base), _counts(head)
    names = list(dict.fromkeys([*head.metrics, *base.metrics]))
    scenarios = _scenario_changes(head, base)
    base_found = base.findings
    base_fps = {v.fingerprint for v in base_found if v.fingerprint}
    # the head's findings walked once, only their fingerprints kept (they may be spilled)
    head_fps: set[str] = set()
    new: list[str] = []
    unchanged: list[str] = []
    gated = {"new": 0, "unchanged": 0}
    for v in head.findings:
        if v.rule == CRITERIA_REGRESSION.id:  # the gates' own: classified once judged
            continue
        if v.fingerprint:
            head_fps.add(v.fingerprint)
        kind = "unchanged" if v.fingerprint in base_fps else "new"
        (unchanged if kind == "unchanged" else new).append(v.fingerprint)
        if v.severity in GATE_SEVERITIES:
            gated[kind] += 1
    absent = [v for v in base_found if v.fingerprint and v.fingerprint not in head_fps]
    return Comparison(
        source=source or {"kind": "results"},
        suite=base.suite,
        verdict=base.verdict,
        tool_version=base.tool_version,
        counts=base_counts,
        metrics=dict(base.metrics),
        count_deltas=tuple(_row(k, base_counts.get(k), head_counts.get(k))
                           for k in COUNT_KEYS),
        metric_deltas=tuple(_row(k, base.metrics.get(k), head.metrics.get(k))
                            for k in names),
        scenarios=tuple(scenarios),
        regressed=tuple(s.id for s in scenarios if s.change == "regression"),
        fixed=tuple(s.id for s in scenarios if s.change == "fix"),
        new_violations=gated["new"],
        unchanged_violations=gated["unchanged"],
        absent_violations=count_violations(absent),
        new=tuple(new),
        unchanged=tuple(unchanged),
        absent=tuple(absent),
        policy=policy_change(base.inventory, head.inventory),
    )


# --------------------------------------------------------------------------- gates
_COST = re.compile(r"max_cost_multiplier:\s*([0-9.eE+-]+)")


def _gates(results: Results, b: Comparison, base_fps: set[str],
           base_scores: dict[str, float | None]) -> Comparison:
    """Judge the regression criteria (``fail_on_new_violations`` last: it counts the new
    findings of the others), adding the findings of each to the comparison's new or
    unchanged ones; the verdict follows. The comparison as it is in the end.
    ``base_scores``: the base run's scenario scores, to 6 decimals (:func:`_score`)."""
    for last in (False, True):
        judged = []
        criteria = []
        for c in results.criteria:
            if c.kind == "regression" and (c.name == "fail_on_new_violations") == last:
                c = _regression(c, results, b, base_fps, base_scores)
                judged.append(c)
            criteria.append(c)
        results.criteria = criteria
        b = _classified(b, [f for f in map(criterion_finding, judged) if f is not None],
                        base_fps)
    results.verdict = verdict_of(results)
    return b


def _classified(b: Comparison, findings: list[Finding], base_fps: set[str]) -> Comparison:
    """``b`` with ``findings`` (of the head run) classified new or unchanged as
    :func:`compare` classifies the others; a base finding they match is no longer
    absent."""
    if not findings:
        return b
    new, unchanged = list(b.new), list(b.unchanged)
    gated = {"new": b.new_violations, "unchanged": b.unchanged_violations}
    for v in findings:
        kind = "unchanged" if v.fingerprint in base_fps else "new"
        (unchanged if kind == "unchanged" else new).append(v.fingerprint)
        if v.severity in GATE_SEVERITIES:
            gated[kind] += 1
    fps = {v.fingerprint for v in findings if v.fingerprint}
    absent = tuple(v for v in b.absent if v.fingerprint not in fps)
    return replace(b, new=tuple(new), unchanged=tuple(unchanged),
                   new_violations=gated["new"], unchanged_violations=gated["unchanged"],
                   absent=absent, absent_violations=count_violations(absent))


def cost_multipliers(results: Results, base_costs: dict[str, float | None]) -> None:
    """Check each scenario's ``max_cost_multiplier`` against its cost in the base run
    (``base_costs``: scenario id -> cost; a scenario not in it is not in the base run)."""
    before = [s.status for s in results.scenarios]
    results.scenarios = [_cost_multiplier(s, s.id in base_costs, base_costs.get(s.id))
                         for s in results.scenarios]
    # a required scenario its cost fails fails the run: its criterion follows its status
    status = {s.id: s.status for s in results.scenarios}
    results.criteria = [_required(c, status) for c in results.criteria]
    if before != [s.status for s in results.scenarios]:
        _recount(results)


def _recount(results: Results) -> None:
    """The status metrics and the criteria on them once ``max_cost_multiplier`` changed a
    scenario's status: counted before it, a ``min_pass_rate: 0.6`` met at 1.0 tolerated
    the scenarios it failed, and the run only warned. A ``composite`` weighs metrics the
    results do not give the weights of: one that passed is not judged again, and says so
    (a warning: never a pass on figures that changed under it), and its figure is unknown."""
    if not results.scenarios:
        return
    exact = status_rates([(s.ok, s.weight, s.category) for s in results.scenarios])
    shown = {k: round(v, 6) if isinstance(v, float) else v for k, v in exact.items()}
    changed = {k for k, v in shown.items() if results.metrics.get(k) != v}
    if not changed:
        return
    results.metrics.update(shown)
    if results.metrics.get("composite") is not None and changed & set(_COMPOSITE_INPUTS):
        # nor is its figure counted again: unknown, not the evaluation's (it was the
        # action's score output, 1.0 for a composite of pass_rate that fell to 0.5)
        results.metrics["composite"] = None
    results.criteria = [_rejudged(c, exact, changed) for c in results.criteria]


def _rejudged(c: CriterionResult, exact: dict[str, Any],
              changed: set[str]) -> CriterionResult:
    if c.kind == "composite" and c.status == "pass" and changed & set(_COMPOSITE_INPUTS):
        return replace(c, status="warn", message=(
            f"{c.name}: {c.threshold} not judged again: max_cost_multiplier failed a "
            f"scenario after the composite was computed, and {', '.join(sorted(changed))} "
            "changed (run without the baseline to see it, or gate on min_pass_rate)"))
    if c.kind not in ("blocking", "warning", "by_category") or c.metric not in changed \
            or not isinstance(c.threshold, int | float):
        return c
    value = exact[c.metric]
    if value is None:
        return replace(c, value=None, status="warn", message=(
            f"{c.metric} is unknown, so {c.name}: {c.threshold} cannot be checked"))
    label = f"{c.metric} = {value:.4g}"
    if at_least(value, c.threshold):
        return replace(c, value=round(value, 6), status="pass",
                       message=f"{label} >= {c.threshold:.4g} (counted again after "
                       "max_cost_multiplier)")
    return replace(c, value=round(value, 6), status="warn" if c.kind == "warning" else "fail",
                   message=f"{label} < {c.threshold:.4g} ({c.kind} criterion {c.name} "
                   "missed, counted again after max_cost_multiplier)")


# the status metrics a composite may weigh (docs/scenarios.md "composite")
_COMPOSITE_INPUTS = ("pass_rate", "weighted_pass_rate", "safety_rate")


def _required(c: CriterionResult, status: dict[str, str]) -> CriterionResult:
    """A ``required:<id>`` criterion judged again on its scenario's status now."""
    if c.kind != "required":
        return c
    sid = c.name.split(":", 1)[1]
    now = status.get(sid)
    if now is None or now == c.value:
        return c
    if _ok(now):
        return replace(c, value=now, status="pass", message=f"required scenario {sid} passed")
    return replace(c, value=now, status="fail", message=f"required scenario {sid} did not "
                   f"pass (status {now})")


def _cost_multiplier(s: ScenarioResult, known: bool, base_cost: float | None
                     ) -> ScenarioResult:
    """The scenario with its ``scenario/no_baseline`` notes for max_cost_multiplier
    replaced by the check against the base cost; its status follows. A replaced finding
    gets the fingerprint of its new rule, so a baseline that held the note does not
    make it ``unchanged``."""
    out = []
    status = s.status
    for f in s.findings:
        m = _COST.search(f.constraint or "") if f.rule == SCENARIO_NO_BASELINE.id else None
        if m is None:
            out.append(f)
            continue
        limit = float(m.group(1))
        head_cost = s.cost_usd
        if not known or not isinstance(base_cost, int | float) or base_cost <= 0:
            if not known:
                why = "the scenario is not in the base run"
            elif base_cost is None:
                why = "the base run did not record this scenario's cost"
            else:
                why = "the scenario cost nothing in the base run"
            out.append(replace(f, message=f"{f.constraint} skipped: {why}"))
            continue
        unknown = s.not_recorded.get("cost_usd", 0)
        shown = ""
        if head_cost is not None and unknown and s.traces_total > unknown:
            # the mean is at least that of the recorded costs with the others taken as
            # 0: a multiple that this already exceeds is missed whatever they were
            floor = head_cost * (s.traces_total - unknown) / s.traces_total
            if not at_most(floor / base_cost, limit):
                head_cost, unknown = floor, 0
                shown = (f"at least {floor / base_cost:.4g} (cost not recorded by "
                         f"{s.not_recorded['cost_usd']} of {s.traces_total} trace(s), "
                         "taken as 0) ")
        if head_cost is None or unknown:
            # never a pass: the cost of a trace this run did not record may be any
            checked = replace(
                f, rule=SCENARIO_NOT_RECORDED.id, severity="warning",
                message=f"cost not recorded by {unknown or s.traces_total} of "
                f"{s.traces_total} trace(s): {f.constraint} cannot be checked",
                details={"figure": "cost_multiplier", "threshold": limit,
                         "base_cost_usd": base_cost})
            assign_fingerprints([checked])
            out.append(checked)
            status = worse(status, "warn")
            continue
        ratio = head_cost / base_cost
        if at_most(ratio, limit):
            continue
        warn = "warn_thresholds" in f.config.key_path
        checked = replace(
            f, rule=(SCENARIO_WARN_THRESHOLD if warn else SCENARIO_THRESHOLD).id,
            severity="warning" if warn else "error",
            message=f"cost_multiplier = {shown or f'{ratio:.4g} '}exceeds {f.constraint} "
            f"(cost {'at least ' if shown else ''}{head_cost:.6g} USD, base "
            f"{base_cost:.6g} USD)",
            value=round(ratio, 6),
            details={"figure": "cost_multiplier", "threshold": limit,
                     "base_cost_usd": base_cost})
        assign_fingerprints([checked])
        out.append(checked)
        status = worse(status, "warn" if warn else "fail")
    return replace(s, findings=tuple(out), status=status)


def _exact_rate(metrics: dict[str, Any]) -> float | None:
    """``pass_rate`` unrounded, from the counts of scenarios (None without them)."""
    passed, total = metrics.get("scenarios_passed"), metrics.get("scenarios")
    if (isinstance(passed, int) and isinstance(total, int) and not isinstance(passed, bool)
            and not isinstance(total, bool) and 0 <= passed <= total and total > 0):
        return passed / total
    return None


def _score(s: ScenarioResult) -> float | None:
    """The scenario's score to 6 decimals (its ``metrics.score``: ``score`` is rounded to
    2, and a drop of 100 - 66.666667 = 33.333333 read 33.33, which met max_score_drop:
    33.33), or ``score`` when the two do not agree."""
    exact = s.metrics.get("score")
    if (isinstance(exact, int | float) and not isinstance(exact, bool)
            and isinstance(s.score, int | float) and abs(exact - s.score) <= 0.005 + 1e-9):
        return float(exact)
    return s.score


def _known(exact: float | None, shown: float) -> float:
    return exact if exact is not None else shown


def _regression(c: CriterionResult, results: Results, b: Comparison, base_fps: set[str],
                base_scores: dict[str, float | None]) -> CriterionResult:
    name = c.name
    threshold = c.threshold
    if name == "max_pass_rate_drop":
        base_rate = b.metrics.get("pass_rate")
        head_rate = results.metrics.get("pass_rate")
        if not isinstance(base_rate, int | float) or not isinstance(head_rate, int | float):
            return replace(c, status="skip", value=None,
                           message="max_pass_rate_drop skipped: pass_rate is unknown in the "
                           "base or head run")
        # the rates as counted, not as results.json rounds them (1 - 0.666667 passed
        # max_pass_rate_drop: 0.3333333, which 1 - 2/3 misses; docs/scenarios.md)
        exact_base, exact_head = _exact_rate(b.metrics), _exact_rate(results.metrics)
        if exact_base is not None and exact_head is not None:
            base_rate, head_rate = exact_base, exact_head
        drop = round(base_rate - head_rate, 6)
        bad = (isinstance(threshold, int | float)
               and not at_most(base_rate - head_rate, threshold))
        shown = f"{drop:.4g}"
        if isinstance(threshold, int | float) and bad and float(shown) <= threshold:
            # apart beyond 4 digits ("drop 0.3333, max 0.3333333" for a missed gate)
            shown = repr(base_rate - head_rate)
        return replace(c, value=drop, status="fail" if bad else "pass", message=(
            f"pass_rate {base_rate:.4g} → {head_rate:.4g} (drop {shown}, "
            f"max {threshold})" + (" (regression criterion missed)" if bad else "")))
    if name == "max_score_drop":
        scored = [(s, s.base_score) for s in b.scenarios
                  if isinstance(s.base_score, int | float)]
        # the drops of the scores to 6 decimals, not as shown (docs/scenarios.md)
        head_scores = {h.id: _score(h) for h in results.scenarios}
        drops = [(_known(base_scores.get(s.id), base) - _known(head_scores.get(s.id),
                                                               s.head_score), s.id)
                 for s, base in scored if isinstance(s.head_score, int | float)]
        # scored in the base run, still in this one, and without a score now (no trace):
        # its drop cannot be measured, which is never a pass
        lost = [(s, base) for s, base in scored
                if s.head_score is None and s.change != "removed"]
        unmeasured = (f"{_n(len(lost), 'scenario')} scored in the base run "
                      f"{'has' if len(lost) == 1 else 'have'} no score now, so "
                      f"{'its' if len(lost) == 1 else 'their'} drop cannot be measured: "
                      + ", ".join(f"{s.id} (base {base:.4g}, {s.head_status})"
                                  for s, base in lost[:10])
                      + (f" and {len(lost) - 10} more" if len(lost) > 10 else ""))
        if not drops:
            if lost:
                return replace(c, status="warn", value=None,
                               message=f"max_score_drop not checked: {unmeasured}")
            return replace(c, status="skip", value=None,
                           message="max_score_drop skipped: no scenario has a score in both "
                           "runs")
        drop, sid = max(drops)
        bad = isinstance(threshold, int | float) and drop > threshold + 1e-9
        status = "fail" if bad else "warn" if lost else "pass"
        shown = f"{drop:.4g}"
        if isinstance(threshold, int | float) and bad and float(shown) <= threshold:
            # apart beyond 4 digits: shown so
            shown = repr(round(drop, 6))
        return replace(c, value=round(drop, 4), status=status, message=(
            f"largest score drop {shown} (scenario {sid}, max {threshold})"
            + (" (regression criterion missed)" if bad else "")
            + (f"; {unmeasured}" if lost else "")))
    if name == "fail_on_new_violations":
        n = b.new_violations
        bad = (threshold is None or bool(threshold)) and n > 0
        if not bad:
            return replace(c, value=n, status="pass",
                           message=f"{_n(n, 'new violation')} against the base branch")
        # missed, its own finding is one more new violation (unless the base run had it
        # too): its value is the run's new_violations, that finding included
        missed = replace(c, status="fail")
        own = criterion_finding(missed)
        total = n + (own is not None and own.fingerprint not in base_fps)
        return replace(missed, value=total, message=(
            f"{_n(total, 'new violation')} against the base branch, "
            f"{'this finding included' if total > n else 'besides this finding'} "
            "(regression criterion missed)"))
    return c


def attach(head: Results, base: Results, source: Source | None = None) -> None:
    """Compare ``head`` with ``base``, store it in ``head.baseline``, apply the gates.

    ``max_cost_multiplier`` is checked first, so that a scenario it fails is a
    regression and its finding is ``new`` in the comparison."""
    cost_multipliers(head, {s.id: s.cost_usd for s in base.scenarios})
    comparison = compare(head, base, source)
    base_fps = {v.fingerprint for v in base.findings if v.fingerprint}
    head.baseline = _gates(head, comparison, base_fps,
                           {s.id: _score(s) for s in base.scenarios})


def no_baseline(reason: str, source: Source | None = None) -> NoBaseline:
    """What a run without a comparison records when a baseline was asked for."""
    return NoBaseline(reason, source or {"kind": "none"})
