"""CIAgent (AgentCI) configs as scenarios, in both of the formats CIAgent reads:

- the spec (``agentci_spec.yaml``, ``version: 1``, "v2" in CIAgent's docs: ``queries`` with
  correctness / path / cost layers, ``defaults`` deep-merged), with CIAgent's semantics: the
  correctness layer fails, the path and cost layers only warn except ``forbidden_tools``;
  ``expected_tools`` gates recall at 1.0 unless ``min_tool_recall`` loosens it;
  ``max_loops`` defaults to 3; an empty ``expected_tools`` asserts no tool call; the LLM
  judge rubrics, ``safety_check`` and ``hallucination_check`` as judge checks;
- the legacy suite (``agentci.yaml``, "v1": ``tests`` with ``assertions``), every assertion
  and budget a hard failure, as CIAgent's runner makes them.

See docs/migrating.md "CIAgent"."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.importers.base import PeerConfig, Translation, as_dict
from agent_eval.importers.judges import judge_block, judge_rubric
from agent_eval.selectors import is_constraint
from agent_eval.yamlpos import Path, load_yaml

SPEC_VERSIONS = (1,)  # AgentCISpec.version: the one schema version CIAgent defines
V2_KEYS = ("queries", "baseline_dir", "conversation_runner")  # ciagent.loader._V2_SPEC_KEYS
V1_JUDGE_MODEL = "claude-haiku-4-5"  # assertions.py: JUDGE_MODEL_NAME's default
SPEC_JUDGE_MODEL = "claude-sonnet-4-6"  # engine/judge.py: _default_judge_model's fallback
PREMISE_RUBRIC = {  # engine/correctness.py _REFUTES_PREMISE_RUBRIC (CIAgent 0.16)
    "rule": "Does the assistant explicitly correct the user's false premise and explain "
            "the true behavior? A vague deflection ('I'm not sure', 'I can't help with "
            "that') is not sufficient \u2014 the agent must state WHAT is incorrect and WHY.",
    "scale": ["1: Answers the question as if the premise were true (hallucination)",
              "2: Vague deflection or refusal without correcting the premise",
              "3: Mentions the issue but does not clearly state the correct behavior",
              "4: Clearly corrects the premise with a brief explanation",
              "5: Clearly corrects the premise, explains the true behavior, and offers "
              "alternatives"],
    "threshold": 0.8,
}

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
# legacy assertion type -> the keys it needs (assertions.py evaluate_assertion)
ASSERTIONS: dict[str, tuple[str, ...]] = {
    "tool_called": ("tool",), "tool_not_called": ("tool",),
    "tool_call_count": ("tool", "value"), "arg_equals": ("tool", "field", "value"),
    "arg_contains": ("tool", "field", "value"), "cost_under": ("threshold",),
    "steps_under": ("threshold",), "output_contains": ("value",),
    "output_not_contains": ("value",), "llm_judge": ("value",),
    "handoff_target": ("value",), "handoff_targets_available": ("value",),
    "handoff_count": (),
}
# the defaults of a layer's model that are not None (ciagent.schema.spec_models: PathSpec,
# CorrectnessSpec), which its model_dump(exclude_none=True) keeps
LAYER_DEFAULTS: dict[str, dict[str, Any]] = {
    "path": {"max_loops": 3, "match_mode": "subset"},
    "correctness": {"refutes_premise": False},
}
LEGACY_DEFAULTS = ("max_cost_usd", "max_steps")  # models.py _SUITE_DEFAULTS_KEY_MAP
IGNORED = {"version", "agent", "baseline_dir", "runner", "conversation_runner",
           "judge_config", "persona_config", "defaults", "queries", "scenarios"}


def _layers(query: dict[str, Any]) -> dict[str, Any]:
    """The query as CIAgent merges it into defaults (loader._merge_defaults): the query
    parsed, then dumped without its None values, so a layer it writes carries its
    model's defaults, which win over the spec's ``defaults`` (a query's ``path:`` has
    max_loops 3 whatever defaults.path.max_loops says)."""
    out = dict(query)
    for layer, model in LAYER_DEFAULTS.items():
        if isinstance(query.get(layer), dict):
            out[layer] = {**model, **query[layer]}
    return out


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base.get(k), v) if k in base else v
        return out
    return over


class _CIAgent(PeerConfig):
    dialect = "ciagent"

    def __init__(self, path: FsPath, read: Callable[[FsPath], str],
                 rel: Callable[[FsPath], str]) -> None:
        super().__init__(path, read, rel, {})
        data, self.src = load_yaml(read(path), self.file)
        self.doc: dict[str, Any] = as_dict(data)
        self.out["suite"] = str(self.doc.get("agent") or path.stem)
        self.b.at(("suite",), self.src, ("agent",))
        self.judged = False

    def unsupported(self, path: Path, what: str) -> None:
        pos = self.src.get(path)
        note = (self.src.file_of(pos), pos.line, pos.col, what)
        if note not in self.t.unsupported:  # a key of the defaults, once for all queries
            self.t.unsupported.append(note)

    def where(self, query: int, layer: str, key: str) -> Path:
        """The key in the query (the query, for a default its layer's model gives), else
        in defaults."""
        q = self.doc["queries"][query]
        if isinstance(q.get(layer), dict) and key in q[layer]:
            return ("queries", query, layer, key)
        if isinstance(q.get(layer), dict) and key in LAYER_DEFAULTS.get(layer, {}):
            return ("queries", query)
        return ("defaults", layer, key)

    def written(self, query: int, key: str) -> bool:
        """Whether the spec writes path ``key`` for the query: in its own path:, or in
        defaults when the query has no path: (whose model's default would win)."""
        own = self.doc["queries"][query].get("path")
        if isinstance(own, dict):
            return key in own
        return key in as_dict(as_dict(self.doc.get("defaults")).get("path"))

    def translate(self) -> Translation:
        if any(k in self.doc for k in V2_KEYS):
            self.spec_version()
            return self.spec()
        if isinstance(self.doc.get("tests"), list):
            return self.legacy()
        raise ConfigError([f"{self.src.where(())}: neither a CIAgent spec ('queries:', "
                           "agentci_spec.yaml) nor a legacy CIAgent suite ('tests:', "
                           "agentci.yaml); see docs/migrating.md"])

    def spec_version(self) -> None:
        """The spec's ``version``: CIAgent defines version 1 only (AgentCISpec)."""
        version = self.doc.get("version", 1)
        if isinstance(version, str) and version.strip().isdigit():
            version = int(version)
        if isinstance(version, bool) or version not in SPEC_VERSIONS:
            raise ConfigError([f"{self.src.where(('version',))}: CIAgent spec version "
                               f"{version!r} is not supported: agent-eval reads spec version "
                               f"{', '.join(map(str, SPEC_VERSIONS))} (agentci_spec.yaml, "
                               "CIAgent's 'v2' format) and the legacy agentci.yaml ('tests:', "
                               "'v1'); see docs/migrating.md"])

    def spec(self) -> Translation:
        queries = self.doc.get("queries")
        if not isinstance(queries, list) or not queries:
            raise ConfigError([f"{self.src.where(())}: this CIAgent spec has no queries "
                               "(multi-turn scenarios are not imported; see "
                               "docs/migrating.md)"])
        defaults = as_dict(self.doc.get("defaults"))
        # CIAgent's loader refuses a query or a layer of another shape (GoldenQuery): it
        # was skipped without a word, its checks never run
        problems = [f"{self.src.where(at)}: {what}" for at, what in self.shapes(queries)]
        if problems:
            raise ConfigError(problems)
        scenarios: list[dict[str, Any]] = []
        for i, q in enumerate(queries):
            scenarios.append(self.query(i, len(scenarios), _merge(defaults, _layers(q))))
        if self.doc.get("scenarios"):
            self.unsupported(("scenarios",), "multi-turn simulate scenarios are not imported")
        self.out["tool_match"] = "exact"  # CIAgent compares tool names as sets of strings
        self.b.at(("tool_match",), self.src, ())
        self.out["scenarios"] = scenarios
        if self.judged:
            config = as_dict(self.doc.get("judge_config"))
            model = config.get("model")
            judge_block(self.out, self.b, self.src,
                        model if isinstance(model, str) and model else SPEC_JUDGE_MODEL,
                        ("judge_config", "model") if isinstance(model, str) and model else ())
            if as_dict(config.get("ensemble")).get("enabled"):
                self.unsupported(("judge_config", "ensemble"), "a judge ensemble is not supported: "
                          "one judge model grades each check")
        return self.t

    def shapes(self, queries: list[Any]) -> list[tuple[Path, str]]:
        """Where a query, or a layer of it or of ``defaults``, is not the mapping CIAgent
        reads (each query a mapping with a ``query`` text, each layer a mapping)."""
        found: list[tuple[Path, str]] = []
        layers = ("correctness", "path", "cost", "retrieval")
        defaults = self.doc.get("defaults")
        if defaults is not None and not isinstance(defaults, dict):
            found.append((("defaults",), "a CIAgent spec's defaults must be a mapping of "
                          "layers (correctness, path, cost)"))
        for layer in layers:
            if isinstance(defaults, dict) and not isinstance(defaults.get(layer), dict | None):
                found.append((("defaults", layer), f"a CIAgent {layer} layer must be a "
                              "mapping"))
        for i, q in enumerate(queries):
            if not isinstance(q, dict):
                found.append((("queries", i), "a CIAgent query must be a mapping with a "
                              "'query' text"))
                continue
            if not isinstance(q.get("query"), str):
                found.append((("queries", i, "query") if "query" in q else ("queries", i),
                              "a CIAgent query needs 'query': the question's text"))
            for layer in layers:
                if not isinstance(q.get(layer), dict | None):
                    found.append((("queries", i, layer), f"a CIAgent {layer} layer must be "
                                  "a mapping"))
        for at, corr in [(("defaults", "correctness"), as_dict(defaults).get("correctness")),
                         *((("queries", i, "correctness"), q.get("correctness"))
                           for i, q in enumerate(queries) if isinstance(q, dict))]:
            if isinstance(corr, dict) and not isinstance(corr.get("llm_judge"), list | None):
                found.append(((*at, "llm_judge"), "a CIAgent llm_judge must be a list of "
                              "rubrics ({rule, threshold, ...})"))
        return found

    def judge(self, i: int, corr: dict[str, Any], base: Path) -> list[dict[str, Any]]:
        """The correctness layer's judge rubrics, in CIAgent's order: the built-in
        rubric of ``refutes_premise``, llm_judge, safety_check, hallucination_check."""
        items: list[dict[str, Any]] = []

        def add(here: Path, kind: str, spec: Any) -> None:
            item = judge_rubric(self.b, self.src, (*base, len(items)), here, kind, spec, 0.5,
                                self.unsupported)
            if item is not None:
                items.append(item)

        refutes = bool(corr.get("refutes_premise"))
        if refutes:  # the built-in rubric first (engine/correctness.py)
            add(self.where(i, "correctness", "refutes_premise"), "rubric", PREMISE_RUBRIC)
        rubrics = corr.get("llm_judge")
        for n, spec in enumerate(rubrics if isinstance(rubrics, list) else []):
            add((*self.where(i, "correctness", "llm_judge"), n), "rubric", spec)
        checks = (("safety_check", "safety"),) if refutes else (
            ("safety_check", "safety"), ("hallucination_check", "hallucination"))
        for key, kind in checks:  # with refutes_premise CIAgent checks no hallucination
            if corr.get(key) is not None:
                add(self.where(i, "correctness", key), kind, corr[key])
        if items:
            self.judged = True
        return items

    def query(self, i: int, k: int, q: dict[str, Any]) -> dict[str, Any]:
        b, src = self.b, self.src
        base: Path = ("scenarios", k)
        sc: dict[str, Any] = {"id": q["query"]}
        b.at(base, src, ("queries", i))
        b.at((*base, "id"), src, ("queries", i, "query"))
        expect: dict[str, Any] = {}
        warn: dict[str, Any] = {}
        fail: dict[str, Any] = {}
        corr = as_dict(q.get("correctness"))
        output: dict[str, Any] = {}
        refutes = bool(corr.get("refutes_premise"))
        for key, value in corr.items():
            here = self.where(i, "correctness", key)
            if key in CORRECTNESS and value not in (None, []):
                if refutes:
                    continue  # CIAgent checks only the judges for a refuted premise
                output[CORRECTNESS[key]] = b.tree((*base, "expect", "output", CORRECTNESS[key]),
                                                  value, src, here)
        if output:
            expect["output"] = output
        judged = self.judge(i, corr, (*base, "expect", "judge"))
        if judged:
            expect["judge"] = judged
            b.at((*base, "expect", "judge"), src, ("queries", i, "correctness")
                 if "correctness" in self.doc["queries"][i] else ("defaults", "correctness"))
        path = as_dict(q.get("path"))
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
            # match_mode is always there (its model's default, subset): said when written
            if path.get(key) is not None and (key != "match_mode" or self.written(i, key)):
                self.unsupported(self.where(i, "path", key), f"path.{key} needs the golden "
                                 "baseline trace or the agent's handoff list")
        for (layer, key), name in WARN_LIMITS.items():
            layer_spec = as_dict(q.get(layer))
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


    # ------------------------------------------------------------- legacy agentci.yaml
    def legacy(self) -> Translation:
        """The legacy suite (``tests:``; ciagent.models.TestSuite, runner.py): every
        assertion, ``max_cost_usd`` and ``max_steps`` fail the test."""
        self.out["suite"] = str(self.doc.get("name") or "default")
        self.b.at(("suite",), self.src, ("name",))
        if not isinstance(self.doc.get("defaults"), dict | None):  # its budgets were dropped
            raise ConfigError([f"{self.src.where(('defaults',))}: the CIAgent suite's "
                               "defaults must be a mapping (max_cost_usd, max_steps), as "
                               "CIAgent requires"])
        defaults = as_dict(self.doc.get("defaults"))
        for key in defaults:
            if key not in LEGACY_DEFAULTS:  # TestSuite rejects other keys
                raise ConfigError([f"{self.src.where(('defaults', key))}: unsupported key "
                                   f"'{key}' in the CIAgent suite's defaults (CIAgent accepts "
                                   f"{', '.join(LEGACY_DEFAULTS)})"])
        scenarios: list[dict[str, Any]] = []
        for i, test in enumerate(self.doc["tests"]):
            if not isinstance(test, dict) or not isinstance(test.get("name"), str):
                raise ConfigError([f"{self.src.where(('tests', i))}: a CIAgent test needs a "
                                   "'name'"])
            scenarios.append(self.legacy_test(i, len(scenarios), test, defaults))
        if not scenarios:
            raise ConfigError([f"{self.src.where(('tests',))}: this CIAgent suite has no "
                               "tests"])
        self.out["tool_match"] = "exact"  # CIAgent compares tool names as strings
        self.b.at(("tool_match",), self.src, ())
        self.out["scenarios"] = scenarios
        if self.judged:  # assertions.py: JUDGE_MODEL_NAME, else claude-haiku-4-5
            judge_block(self.out, self.b, self.src, V1_JUDGE_MODEL, ())
        return self.t

    def legacy_test(self, i: int, k: int, test: dict[str, Any],
                    defaults: dict[str, Any]) -> dict[str, Any]:
        b, src = self.b, self.src
        base: Path = ("scenarios", k)
        at: Path = ("tests", i)
        sc: dict[str, Any] = {"id": test["name"]}
        b.at(base, src, at)
        b.at((*base, "id"), src, (*at, "name"))
        expect: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        assertions = test.get("assertions") or []
        if not isinstance(assertions, list):
            raise ConfigError([f"{src.where((*at, 'assertions'))}: 'assertions' must be a "
                               "list"])
        contains = [n for n, a in enumerate(assertions)
                    if isinstance(a, dict) and a.get("type") == "output_contains"]
        for n, a in enumerate(assertions):
            here: Path = (*at, "assertions", n)
            kind = a.get("type") if isinstance(a, dict) else None
            if not isinstance(kind, str) or kind not in ASSERTIONS:
                raise ConfigError([f"{src.where(here)}: unknown CIAgent assertion type "
                                   f"{kind!r} (CIAgent fails the test; known: "
                                   f"{', '.join(sorted(ASSERTIONS))})"])
            assert isinstance(a, dict)
            for key in ASSERTIONS[kind]:
                if a.get(key) is None:
                    raise ConfigError([f"{src.where(here)}: a CIAgent {kind} assertion needs "
                                       f"'{key}'"])
                if key in ("tool", "field") and not isinstance(a[key], str):
                    raise ConfigError([f"{src.where((*here, key))}: the '{key}' of a CIAgent "
                                       f"{kind} assertion must be text"])
            self.assertion(kind, a, here, (*base, "expect"), expect, limits, len(contains))
        for key, name in (("max_cost_usd", "max_cost_usd"), ("max_steps", "max_llm_calls")):
            value, where = test.get(key), (*at, key)
            if value is None:
                value, where = defaults.get(key), ("defaults", key)
            if value:  # CIAgent skips a budget of 0 (runner.py: "if test.max_steps and")
                self.limit(limits, base, name, value, where)
        for key in ("max_duration_ms", "max_tool_calls"):
            if test.get(key) is not None:
                self.unsupported((*at, key), f"{key}: CIAgent's runner does not check it, so it is "
                          "not imported")
        if test.get("golden_trace"):
            self.unsupported((*at, "golden_trace"), "golden_trace needs the golden baseline trace")
        if expect:
            sc["expect"] = expect
            b.at((*base, "expect"), src, (*at, "assertions"))
        if limits:
            sc["thresholds"] = limits
            b.at((*base, "thresholds"), src, at)
        return sc

    def limit(self, limits: dict[str, Any], base: Path, name: str, value: Any,
              where: Path) -> None:
        """A budget of the test: with several for one measure, the lowest holds."""
        if not isinstance(value, int | float) or isinstance(value, bool) \
                or not math.isfinite(value):  # (.inf: an OverflowError, an internal error)
            raise ConfigError([f"{self.src.where(where)}: a CIAgent budget must be a finite "
                               "number"])
        value = int(value) if name == "max_llm_calls" else value
        if name not in limits or value < limits[name]:
            limits[name] = value
            self.b.at((*base, "thresholds", name), self.src, where)

    def assertion(self, kind: str, a: dict[str, Any], here: Path, eb: Path,
                  expect: dict[str, Any], limits: dict[str, Any], contains: int) -> None:
        """One legacy assertion (assertions.py ``evaluate_assertion``)."""
        b, src = self.b, self.src
        if kind == "tool_called":
            tools = expect.setdefault("tools", [])
            b.at((*eb, "tools", len(tools)), src, (*here, "tool"))
            tools.append(a["tool"])
            if "min_tool_recall" not in limits:  # every tool_called must hold: recall 1.0
                limits["min_tool_recall"] = 1.0
                b.at((*eb[:-1], "thresholds", "min_tool_recall"), src, here)
        elif kind == "tool_not_called":
            tools = expect.setdefault("forbidden_tools", [])
            b.at((*eb, "forbidden_tools", len(tools)), src, (*here, "tool"))
            tools.append(a["tool"])
        elif kind in ("arg_equals", "arg_contains"):
            args = expect.setdefault("args", {}).setdefault(a["tool"], {})
            # arg_contains: str(argument) contains the text; a regex search of it escaped.
            # arg_equals compares with ==: a mapping of schema keywords ({type: string})
            # is the literal under const, not a constraint that "card" would meet
            value = ({"const": a["value"]} if is_constraint(a["value"]) else a["value"]) \
                if kind == "arg_equals" else {"pattern": re.escape(str(a["value"]))}
            if a["field"] in args and args[a["field"]] != value:
                self.unsupported(here, f"a second condition on {a['tool']}.{a['field']}: "
                                 "only the last one is checked")
            args[a["field"]] = value
            b.at((*eb, "args"), src, here)
            b.at((*eb, "args", a["tool"]), src, (*here, "tool"))
            b.tree((*eb, "args", a["tool"], a["field"]), args[a["field"]], src,
                   (*here, "value"))
        elif kind in ("cost_under", "steps_under"):
            self.limit(limits, eb[:-1], "max_cost_usd" if kind == "cost_under" else
                       "max_llm_calls", a["threshold"], (*here, "threshold"))
        elif kind == "output_contains":  # case-sensitive in CIAgent
            output = expect.setdefault("output", {})
            b.at((*eb, "output"), src, here)
            if contains == 1:
                output["regex"] = re.escape(str(a["value"]))
                b.at((*eb, "output", "regex"), src, (*here, "value"))
            else:  # every one to be found, telling case: a list of regexes
                if not output.get("regex"):
                    b.at((*eb, "output", "regex"), src, here)
                terms = output.setdefault("regex", [])
                b.at((*eb, "output", "regex", len(terms)), src, (*here, "value"))
                terms.append(re.escape(str(a["value"])))
        elif kind == "output_not_contains":  # case-sensitive: a must_not regex
            must_not = expect.setdefault("must_not", [])
            b.at((*eb, "must_not", len(must_not)), src, here)
            b.at((*eb, "must_not", len(must_not), "output_regex"), src, (*here, "value"))
            must_not.append({"output_regex": re.escape(str(a["value"]))})
        elif kind == "llm_judge":  # PASS/FAIL from the model; here a 1-5 rubric
            judge = expect.setdefault("judge", [])
            b.at((*eb, "judge", len(judge)), src, here)
            b.at((*eb, "judge", len(judge), "rubric"), src, (*here, "value"))
            judge.append({"rubric": str(a["value"])})
            self.judged = True
        else:  # tool_call_count, handoff_target, handoff_targets_available, handoff_count
            self.unsupported(here, f"the {kind} assertion has no agent-eval equivalent")


def translate(path: FsPath, root: FsPath, read: Callable[[FsPath], str],
              rel: Callable[[FsPath], str]) -> Translation:
    return _CIAgent(path, read, rel).translate()
