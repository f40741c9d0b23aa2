"""CIAgent (AgentCI v2) specs (``agentci_spec.yaml``: ``queries`` with correctness / path /
cost layers, ``defaults`` deep-merged) as scenarios, with CIAgent's semantics: the
correctness layer fails, the path and cost layers only warn except ``forbidden_tools``;
``expected_tools`` gates recall at 1.0 unless ``min_tool_recall`` loosens it; ``max_loops``
defaults to 3; an empty ``expected_tools`` asserts no tool call. See docs/migrating.md
"CIAgent"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.importers.base import Builder, Translation
from agent_eval.yamlpos import Path, load_yaml

CORRECTNESS = {"expected_in_answer": "contains", "any_expected_in_answer": "contains_any",
               "not_in_answer": "not_contains", "exact_match": "equals",
               "regex_match": "regex", "json_schema": "json_schema"}
WARN_LIMITS = {  # path and cost keys -> warn_thresholds
    ("path", "max_tool_calls"): "max_tool_calls",
    ("path", "min_tool_precision"): "min_tool_precision",
    ("path", "max_loops"): "max_loops",
    ("cost", "max_cost_usd"): "max_cost_usd",
    ("cost", "max_llm_calls"): "max_llm_calls",
    ("cost", "max_total_tokens"): "max_total_tokens",
    ("cost", "max_latency_ms"): "max_latency_ms",
    ("cost", "max_cost_multiplier"): "max_cost_multiplier",
}
IGNORED = {"version", "agent", "baseline_dir", "runner", "conversation_runner",
           "judge_config", "persona_config", "defaults", "queries", "scenarios"}


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base.get(k), v) if k in base else v
        return out
    return over



def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}

class _CIAgent:
    def __init__(self, path: FsPath, read: Callable[[FsPath], str],
                 rel: Callable[[FsPath], str]) -> None:
        self.path = path
        file = rel(path)
        data, self.src = load_yaml(read(path), file)
        self.doc: dict[str, Any] = data if isinstance(data, dict) else {}
        self.b = Builder(file)
        self.out: dict[str, Any] = {"suite": str(self.doc.get("agent") or path.stem)}
        self.b.at(("suite",), self.src, ("agent",))
        self.t = Translation("ciagent", self.out, self.b.positions)

    def unsupported(self, path: Path, what: str) -> None:
        pos = self.src.get(path)
        self.t.unsupported.append((self.src.file_of(pos), pos.line, pos.col, what))

    def where(self, query: int, layer: str, key: str) -> Path:
        """The key in the query, else in defaults."""
        q = self.doc["queries"][query]
        if isinstance(q.get(layer), dict) and key in q[layer]:
            return ("queries", query, layer, key)
        return ("defaults", layer, key)

    def translate(self) -> Translation:
        queries = self.doc.get("queries")
        if not isinstance(queries, list) or not queries:
            raise ConfigError([f"{self.src.where(())}: this CIAgent spec has no queries "
                               "(multi-turn scenarios are not imported; see "
                               "docs/migrating.md)"])
        defaults = _dict(self.doc.get("defaults"))
        scenarios: list[dict[str, Any]] = []
        for i, q in enumerate(queries):
            if isinstance(q, dict) and isinstance(q.get("query"), str):
                scenarios.append(self.query(i, len(scenarios), _merge(defaults, q)))
        if self.doc.get("scenarios"):
            self.unsupported(("scenarios",), "multi-turn simulate scenarios are not imported")
        self.out["tool_match"] = "exact"  # CIAgent compares tool names as sets of strings
        self.b.at(("tool_match",), self.src, ())
        self.out["scenarios"] = scenarios
        return self.t

    def query(self, i: int, k: int, q: dict[str, Any]) -> dict[str, Any]:
        b, src = self.b, self.src
        base: Path = ("scenarios", k)
        sc: dict[str, Any] = {"id": q["query"]}
        b.at(base, src, ("queries", i))
        b.at((*base, "id"), src, ("queries", i, "query"))
        expect: dict[str, Any] = {}
        warn: dict[str, Any] = {}
        fail: dict[str, Any] = {}
        corr = _dict(q.get("correctness"))
        output: dict[str, Any] = {}
        refutes = bool(corr.get("refutes_premise"))
        for key, value in corr.items():
            here = self.where(i, "correctness", key)
            if key in CORRECTNESS and value not in (None, []):
                if refutes and key in ("expected_in_answer", "not_in_answer"):
                    continue  # CIAgent skips them for a refuted premise
                output[CORRECTNESS[key]] = b.tree((*base, "expect", "output", CORRECTNESS[key]),
                                                  value, src, here)
            elif (key in ("llm_judge", "safety_check", "hallucination_check") and value) or \
                    (key == "refutes_premise" and value):
                self.unsupported(here, f"correctness.{key} needs an LLM judge")
        if output:
            expect["output"] = output
        path = _dict(q.get("path"))
        tools = path.get("expected_tools")
        if tools is not None:
            here = self.where(i, "path", "expected_tools")
            if tools:
                expect["tools"] = b.tree((*base, "expect", "tools"), tools, src, here)
                recall = path.get("min_tool_recall")
                warn["min_tool_recall"] = 1.0 if recall is None else recall
                b.at((*base, "warn_thresholds", "min_tool_recall"), src,
                     here if recall is None else self.where(i, "path", "min_tool_recall"))
            else:  # an explicit empty list: no tool may be called
                warn["max_tool_calls"] = 0
                b.at((*base, "warn_thresholds", "max_tool_calls"), src, here)
        if path.get("forbidden_tools"):
            expect["forbidden_tools"] = b.tree((*base, "expect", "forbidden_tools"),
                                               path["forbidden_tools"], src,
                                               self.where(i, "path", "forbidden_tools"))
        seq = path.get("expected_tool_sequence")
        if seq is not None:
            expect["sequence"] = b.tree((*base, "expect", "sequence"), seq, src,
                                        self.where(i, "path", "expected_tool_sequence"))
            expect["sequence_mode"] = "exact"
            expect["sequence_severity"] = "warning"
        if path.get("expected_handoff"):
            expect["handoffs"] = b.tree((*base, "expect", "handoffs"),
                                        path["expected_handoff"], src,
                                        self.where(i, "path", "expected_handoff"))
        if path.get("max_handoff_count") is not None:
            expect["max_handoffs"] = b.tree((*base, "expect", "max_handoffs"),
                                            path["max_handoff_count"], src,
                                            self.where(i, "path", "max_handoff_count"))
        if "handoffs" in expect or "max_handoffs" in expect:
            expect["handoff_severity"] = "warning"
        for key in ("min_sequence_similarity", "match_mode", "expected_handoffs_available"):
            if path.get(key) is not None and key != "match_mode":
                self.unsupported(self.where(i, "path", key), f"path.{key} needs the golden "
                                 "baseline trace or the agent's handoff list")
        for (layer, key), name in WARN_LIMITS.items():
            layer_spec = _dict(q.get(layer))
            if layer_spec.get(key) is not None and name not in warn:
                warn[name] = layer_spec[key]
                b.at((*base, "warn_thresholds", name), src, self.where(i, layer, key))
        if "max_loops" not in warn:  # CIAgent always checks loops (default 3)
            warn["max_loops"] = 3
            b.at((*base, "warn_thresholds", "max_loops"), src, ("queries", i))
        if q.get("retrieval"):
            self.unsupported(("queries", i, "retrieval") if "retrieval" in
                             self.doc["queries"][i] else ("defaults", "retrieval"),
                             "the retrieval layer is not imported")
        if q.get("span_assertions"):
            self.unsupported(("queries", i, "span_assertions"), "span_assertions are not "
                             "imported")
        if expect:
            sc["expect"] = expect
            b.at((*base, "expect"), src, ("queries", i))
        if warn:
            sc["warn_thresholds"] = warn
            b.at((*base, "warn_thresholds"), src, ("queries", i))
        if fail:
            sc["thresholds"] = fail
        return sc


def translate(path: FsPath, root: FsPath, read: Callable[[FsPath], str],
              rel: Callable[[FsPath], str]) -> Translation:
    return _CIAgent(path, read, rel).translate()
