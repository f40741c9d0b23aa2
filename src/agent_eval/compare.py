"""Comparison of a run with a baseline run (docs/results.md "The baseline"): pure functions.

:func:`compare` gives the dict stored in ``results.baseline`` (docs/results.md
"baseline"): the base run's counts and metrics, base / head / Δ per suite metric and per
scenario, the scenarios that went pass → fail (regressions) and fail → pass (fixes), every
finding classified new / unchanged / absent by its fingerprint (the one SARIF uses), and
whether the configured rules changed between the two runs (``policy``), so unlike things
are not compared silently.

:func:`apply_gates` then evaluates ``pass_criteria.regression`` (the criteria entries of
kind ``regression`` the run wrote as ``skip``) and ``max_cost_multiplier`` of the
scenarios, and makes the verdict reflect them.

:func:`inventory` is what a run records about its configuration for the policy check:
one entry per configured rule key (``file#key.path`` -> digest of its value).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval.findings import Finding
from agent_eval.results import (
    Results,
    assign_fingerprints,
    finding_dict,
    finding_from,
    verdict_of,
)
from agent_eval.scenarios.metrics import at_most

if TYPE_CHECKING:
    from agent_eval.config.loader import Suite

_RANK = {"pass": 0, "warn": 1, "fail": 2, "error": 3}
GATE_SEVERITIES = ("error", "warning")  # what counts as a new violation
# results.counts keys compared, and whether a rise is bad
COUNT_KEYS = ("traces", "tool_calls", "violations", "input_errors", "traces_failing")
LOWER_IS_BETTER = {"violations", "input_errors", "traces_failing", "latency_p95_ms",
                   "token_efficiency"}


# ----------------------------------------------------------------------- inventory
def inventory(suite: Suite) -> dict[str, Any]:
    """The configured rules of ``suite``: ``{"digest": …, "rules": {key: digest}}``.

    A rule is one configured key: in the suite file every key below a test (by test id),
    a scenario (by scenario id) and ``pass_criteria``; in a policy file every key below
    ``tools`` (the whole document for other files such as JSON Schemas). Lists are one
    rule. Keys are ``file#dotted.path`` with repo-relative files, so moving lines changes
    nothing and renaming a test id is one rule removed and one added."""
    import yaml

    from agent_eval.yamlpos import YamlLimitError, safe_load

    rules: dict[str, str] = {}
    whole = hashlib.sha256()
    for path in sorted(suite.sources):
        text = suite.sources[path]
        rel = _relative(Path(path), suite.root)
        whole.update(f"{rel}\0{text}\0".encode())
        try:
            doc = safe_load(text)
        except (yaml.YAMLError, YamlLimitError):
            continue
        if Path(path) == suite.path:
            if isinstance(doc, dict):
                _suite_rules(rel, doc, rules)
        elif isinstance(doc, dict) and isinstance(doc.get("tools"), dict):
            _walk(f"{rel}#tools", doc["tools"], rules)
        else:
            _walk(f"{rel}#", doc, rules)
    return {"digest": whole.hexdigest()[:32], "rules": dict(sorted(rules.items()))}


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _suite_rules(rel: str, doc: dict[str, Any], rules: dict[str, str]) -> None:
    for section in ("tests", "scenarios", "probes"):
        items = doc.get(section)
        if not isinstance(items, list):
            continue
        for n, item in enumerate(items):
            ident = item.get("id", n) if isinstance(item, dict) else n
            _walk(f"{rel}#{section}.{ident}", item, rules)
    if doc.get("pass_criteria") is not None:
        _walk(f"{rel}#pass_criteria", doc["pass_criteria"], rules)
    for key in ("servers", "tool_lock"):  # live MCP (docs/mcp.md)
        if doc.get(key) is not None:
            _walk(f"{rel}#{key}", doc[key], rules)


def _walk(prefix: str, value: Any, rules: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        sep = "" if prefix.endswith("#") else "."
        for key, sub in value.items():
            _walk(f"{prefix}{sep}{key}", sub, rules)
        return
    text = json.dumps(value, sort_keys=True, default=str)
    rules[prefix] = hashlib.sha256(text.encode()).hexdigest()[:12]


def policy_change(base: dict[str, Any] | None, head: dict[str, Any] | None
                  ) -> dict[str, Any]:
    """Rules added, removed and changed between two inventories."""
    if not base or not head:
        return {"known": False, "changed": False, "added": [], "removed": [], "modified": [],
                "message": "the base run did not record its rules; a changed policy "
                "cannot be detected"}
    b: dict[str, str] = base.get("rules") or {}
    h: dict[str, str] = head.get("rules") or {}
    added = sorted(set(h) - set(b))
    removed = sorted(set(b) - set(h))
    modified = sorted(k for k in set(b) & set(h) if b[k] != h[k])
    changed = bool(added or removed or modified)
    message = "policy unchanged"
    if changed:
        message = (f"policy changed: {_n(len(added), 'rule')} added, {len(removed)} removed"
                   + (f", {len(modified)} changed" if modified else ""))
    return {"known": True, "changed": changed, "added": added, "removed": removed,
            "modified": modified, "message": message}


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------- comparison
def failing_traces(results: Results) -> int:
    return len({(v.trace.file, v.trace.trace_id) for v in results.violations
                if v.severity == "error" and v.trace is not None})


def _counts(results: Results) -> dict[str, int]:
    c = {k: int(v) for k, v in results.counts.items() if isinstance(v, int)}
    c["traces_failing"] = failing_traces(results)
    return c


def _delta(base: Any, head: Any) -> float | int | None:
    if isinstance(base, bool) or isinstance(head, bool):
        return None
    if isinstance(base, int | float) and isinstance(head, int | float):
        d = head - base
        return round(d, 6) if isinstance(d, float) else d
    return None


def _row(name: str, base: Any, head: Any) -> dict[str, Any]:
    return {"name": name, "base": base, "head": head, "delta": _delta(base, head)}


def _ok(status: Any) -> bool:
    return status in ("pass", "warn")


def compare(head: Results, base: Results, source: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """The ``baseline`` dict of ``head`` compared with ``base``."""
    base_counts, head_counts = _counts(base), _counts(head)
    counts = [_row(k, base_counts.get(k), head_counts.get(k)) for k in COUNT_KEYS]
    names = list(dict.fromkeys([*head.metrics, *base.metrics]))
    metrics = [_row(str(k), base.metrics.get(k), head.metrics.get(k)) for k in names]

    base_sc = {str(s.get("id")): s for s in base.scenarios}
    head_sc = {str(s.get("id")): s for s in head.scenarios}
    scenarios: list[dict[str, Any]] = []
    regressed: list[str] = []
    fixed: list[str] = []
    for sid in dict.fromkeys([*head_sc, *base_sc]):
        b, h = base_sc.get(sid), head_sc.get(sid)
        bs, hs = (b or {}).get("status"), (h or {}).get("status")
        if b is None:
            change = "added"
        elif h is None:
            change = "removed"
        elif _ok(bs) and not _ok(hs):
            change = "regression"
            regressed.append(sid)
        elif not _ok(bs) and _ok(hs):
            change = "fix"
            fixed.append(sid)
        else:
            change = "same" if bs == hs else "changed"
        bscore, hscore = (b or {}).get("score"), (h or {}).get("score")
        bcost = ((b or {}).get("metrics") or {}).get("cost_usd")
        hcost = ((h or {}).get("metrics") or {}).get("cost_usd")
        scenarios.append({"id": sid, "change": change, "base_status": bs, "head_status": hs,
                          "base_score": bscore, "head_score": hscore,
                          "score_delta": _delta(bscore, hscore),
                          "base_cost_usd": bcost, "head_cost_usd": hcost})

    base_found = base.findings
    base_fps = {v.fingerprint for v in base_found if v.fingerprint}
    head_found = head.findings
    head_fps = {v.fingerprint for v in head_found if v.fingerprint}
    new = [v for v in head_found if v.fingerprint not in base_fps]
    unchanged = [v for v in head_found if v.fingerprint in base_fps]
    absent = [v for v in base_found if v.fingerprint and v.fingerprint not in head_fps]
    gate_new = [v for v in new if v.severity in GATE_SEVERITIES]
    return {
        "source": source or {"kind": "results"},
        "suite": base.suite,
        "verdict": base.verdict,
        "tool_version": base.tool_version,
        "counts": base_counts,
        "metrics": dict(base.metrics),
        "deltas": {"counts": counts, "metrics": metrics},
        "scenarios": scenarios,
        "regressions": len(regressed),
        "fixes": len(fixed),
        "regressed": regressed,
        "fixed": fixed,
        "new_violations": len(gate_new),
        "unchanged_violations": sum(1 for v in unchanged if v.severity in GATE_SEVERITIES),
        "absent_violations": sum(1 for v in absent if v.severity in GATE_SEVERITIES),
        "findings": {"new": [v.fingerprint for v in new],
                     "unchanged": [v.fingerprint for v in unchanged],
                     "absent": [finding_dict(v) for v in absent]},
        "policy": policy_change(base.inventory, head.inventory),
    }


def baseline_state(results: Results, finding: Finding) -> str | None:
    """``new`` / ``unchanged`` for a finding of ``results`` (None without a baseline)."""
    b = results.baseline
    if not b or not isinstance(b.get("findings"), dict):
        return None
    unchanged = set(b["findings"].get("unchanged") or ())
    return "unchanged" if finding.fingerprint in unchanged else "new"


def absent_findings(results: Results) -> list[dict[str, Any]]:
    b = results.baseline
    if not b or not isinstance(b.get("findings"), dict):
        return []
    return list(b["findings"].get("absent") or [])


# --------------------------------------------------------------------------- gates
_COST = re.compile(r"max_cost_multiplier:\s*([0-9.eE+-]+)")


def apply_gates(results: Results) -> None:
    """Evaluate ``max_cost_multiplier`` and the ``regression`` criteria against
    ``results.baseline`` and make the verdict reflect them (in place)."""
    b = results.baseline
    if not b:
        return
    costs = {str(s["id"]): s.get("base_cost_usd") for s in b.get("scenarios") or []
             if isinstance(s, dict) and s.get("base_status") is not None}
    cost_multipliers(results, costs)
    _gates(results, b)


def _gates(results: Results, b: dict[str, Any]) -> None:
    for c in results.criteria:
        if c.get("kind") == "regression":
            _regression(c, results, b)
    results.verdict = verdict_of(results)


def cost_multipliers(results: Results, base_costs: dict[str, Any]) -> None:
    """Check each scenario's ``max_cost_multiplier`` against its cost in the base run
    (``base_costs``: scenario id -> cost; a scenario not in it is not in the base run)."""
    for s in results.scenarios:
        sid = str(s.get("id"))
        _cost_multiplier(s, sid in base_costs, base_costs.get(sid))


def _cost_multiplier(s: dict[str, Any], known: bool, base_cost: Any) -> None:
    """Replace the scenario's ``scenario/no_baseline`` notes for max_cost_multiplier by
    the check against the base cost; the scenario's status follows. A replaced finding
    gets the fingerprint of its new rule, so a baseline that held the note does not
    make it ``unchanged``."""
    findings = s.get("findings") or []
    out = []
    for f in findings:
        m = _COST.search(str(f.get("constraint") or "")) if f.get(
            "rule") == "scenario/no_baseline" else None
        if m is None:
            out.append(f)
            continue
        limit = float(m.group(1))
        head_cost = (s.get("metrics") or {}).get("cost_usd")
        if not isinstance(head_cost, int | float) or not isinstance(base_cost, int | float) \
                or base_cost <= 0:
            why = ("the base run did not record this scenario's cost" if known
                   else "the scenario is not in the base run")
            out.append({**f, "message": f"{f.get('constraint')} skipped: {why}"})
            continue
        ratio = head_cost / base_cost
        if at_most(ratio, limit):
            continue
        warn = "warn_thresholds" in str((f.get("config") or {}).get("key_path", ""))
        checked = {**f, "rule": "scenario/warn_threshold" if warn else "scenario/threshold",
                   "severity": "warning" if warn else "error",
                   "message": f"cost_multiplier = {ratio:.4g} exceeds {f.get('constraint')} "
                   f"(cost {head_cost:.6g} USD, base {base_cost:.6g} USD)",
                   "value": round(ratio, 6),
                   "details": {"figure": "cost_multiplier", "threshold": limit,
                               "base_cost_usd": base_cost}}
        finding = finding_from(checked)
        assign_fingerprints([finding])
        checked["fingerprint"] = finding.fingerprint
        out.append(checked)
        status = "warn" if warn else "fail"
        if _RANK.get(status, 0) > _RANK.get(str(s.get("status")), 0):
            s["status"] = status
    s["findings"] = out


def _regression(c: dict[str, Any], results: Results, b: dict[str, Any]) -> None:
    name = c.get("name")
    threshold = c.get("threshold")
    if name == "max_pass_rate_drop":
        base_rate = (b.get("metrics") or {}).get("pass_rate")
        head_rate = results.metrics.get("pass_rate")
        if not isinstance(base_rate, int | float) or not isinstance(head_rate, int | float):
            c.update(status="skip", value=None,
                     message="max_pass_rate_drop skipped: pass_rate is unknown in the "
                     "base or head run")
            return
        drop = round(base_rate - head_rate, 6)
        c["value"] = drop
        bad = isinstance(threshold, int | float) and drop > threshold + 1e-9
        c["status"] = "fail" if bad else "pass"
        c["message"] = (f"pass_rate {base_rate:.4g} → {head_rate:.4g} (drop {drop:.4g}, "
                        f"max {threshold})" + (" (regression criterion missed)" if bad else ""))
    elif name == "max_score_drop":
        drops = [(s["base_score"] - s["head_score"], s["id"]) for s in b.get("scenarios") or []
                 if isinstance(s.get("base_score"), int | float)
                 and isinstance(s.get("head_score"), int | float)]
        if not drops:
            c.update(status="skip", value=None,
                     message="max_score_drop skipped: no scenario has a score in both runs")
            return
        drop, sid = max(drops)
        c["value"] = round(drop, 4)
        bad = isinstance(threshold, int | float) and drop > threshold + 1e-9
        c["status"] = "fail" if bad else "pass"
        c["message"] = (f"largest score drop {drop:.4g} (scenario {sid}, max {threshold})"
                        + (" (regression criterion missed)" if bad else ""))
    elif name == "fail_on_new_violations":
        n = int(b.get("new_violations") or 0)
        c["value"] = n
        on = threshold is None or bool(threshold)
        bad = on and n > 0
        c["status"] = "fail" if bad else "pass"
        c["message"] = (f"{_n(n, 'new violation')} against the base branch"
                        + (" (regression criterion missed)" if bad else ""))


def attach(head: Results, base: Results, source: dict[str, Any] | None = None) -> None:
    """Compare ``head`` with ``base``, store it in ``head.baseline``, apply the gates.

    ``max_cost_multiplier`` is checked first, so that a scenario it fails is a
    regression and its finding is ``new`` in the comparison."""
    cost_multipliers(head, {str(s.get("id")): (s.get("metrics") or {}).get("cost_usd")
                            for s in base.scenarios})
    head.baseline = compare(head, base, source)
    _gates(head, head.baseline)


def no_baseline(reason: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a run without a comparison records when a baseline was asked for."""
    return {"source": source or {"kind": "none"}, "available": False, "reason": reason}
