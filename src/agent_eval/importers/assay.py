"""Assay configs (``eval.yaml``, ``mcp-eval.yaml``) and policies, with Assay's semantics:
tool names compared byte for byte, ``blocklist`` ``pattern`` a substring, its rule keys
(``max_calls``, ``never_after {trigger, forbidden}``, ``after {trigger}``), policy v2
(``tools.allow/deny``, ``schemas`` with ``$defs``, ``enforcement`` whose default is warn) and
the legacy policy shapes. See docs/migrating.md "Assay"."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.importers.base import Builder, PeerConfig, Translation, as_dict
from agent_eval.paths import as_written, real
from agent_eval.yamlpos import Path, Positions, load_yaml

RULE_TYPES = {"require", "before", "blocklist", "max_calls", "count", "eventually",
              "never_after", "after", "sequence", "immediately_before", "allowlist"}
OUTPUT = {"must_contain": "contains", "must_not_contain": "not_contains",
          "regex_match": "regex"}


def exact_glob(text: str) -> str:
    """A literal name as an fnmatch pattern (``[``, ``*`` and ``?`` escaped)."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


def wildcard(pattern: str) -> str:
    """An Assay tool pattern (only ``*`` is special) as an fnmatch pattern."""
    return "*".join(exact_glob(part) for part in pattern.split("*"))


class _Assay(PeerConfig):
    dialect = "assay"

    def __init__(self, path: FsPath, root: FsPath, read: Callable[[FsPath], str],
                 rel: Callable[[FsPath], str]) -> None:
        super().__init__(path, read, rel, {})
        self.root = root
        data, self.src = load_yaml(read(path), self.file)
        self.doc: dict[str, Any] = as_dict(data)
        self.tests: list[dict[str, Any]] = []
        self.scenarios: list[dict[str, Any]] = []

    def unsupported(self, src: Positions, path: Path, what: str) -> None:
        pos = src.get(path)
        self.t.unsupported.append((src.file_of(pos), pos.line, pos.col, what))

    # ---------------------------------------------------------------------- suite
    def translate(self) -> Translation:
        b, src, doc = self.b, self.src, self.doc
        self.out["suite"] = str(doc.get("suite") or self.path.stem)
        b.at(("suite",), src, ("suite",))
        self.out["tool_match"] = "exact"  # Assay compares tool names byte for byte
        b.at(("tool_match",), src, ())
        # settings.parallel / timeout_seconds / cache concern running a model: no effect on
        # recorded traces; relative thresholds against a baseline are not carried over
        settings = doc.get("settings")
        if isinstance(settings, dict) and "thresholding" in settings:
            self.unsupported(src, ("settings", "thresholding"), "Assay relative thresholding "
                             "is not applied")
        for key in ("thresholds", "baseline"):
            if key in doc:
                self.unsupported(src, (key,), f"Assay '{key}' is not applied")
        tests = doc.get("tests")
        first: dict[str, int] = {}  # test id -> the test that has it
        problems: list[str] = []
        for i, test in enumerate(tests if isinstance(tests, list) else []):
            tid = str(test.get("id", f"test_{i}")) if isinstance(test, dict) else None
            if tid is not None and tid in first:  # one scenario would take both tests' checks
                problems.append(f"{src.where(('tests', i, 'id'))}: Assay test id '{tid}' is "
                                f"given twice (first at line "
                                f"{src.get(('tests', first[tid], 'id')).line}); agent-eval "
                                "pairs a test with its traces by its id: give each test "
                                "its own")
                continue
            if tid is not None:
                first[tid] = i
            expected = test.get("expected") if isinstance(test, dict) else None
            # Assay refuses such a config; skipping the test ran the others as if it passed
            if not isinstance(test, dict):
                problems.append(f"{src.where(('tests', i))}: an Assay test must be a mapping "
                                "(id, input, expected) whose expected is a mapping with a "
                                "type")
                continue
            if not isinstance(expected, dict | None):
                problems.append(f"{src.where(('tests', i, 'expected'))}: an Assay test's "
                                "expected must be a mapping with a type (one check; write "
                                "another test for another check)")
                continue
            try:
                self.test(test, ("tests", i))
            except ConfigError as exc:  # every test's problems are said, not the first's
                problems.extend(exc.problems)
        if problems:
            raise ConfigError(problems)
        if self.tests:
            self.out["tests"] = self.tests
        if self.scenarios:
            self.out["scenarios"] = self.scenarios
        if not self.tests and not self.scenarios:
            raise ConfigError.at(self.file, 1, 1, "this Assay config has no test that "
                                 "agent-eval can run (see docs/migrating.md)")
        return self.t

    def test(self, test: dict[str, Any], at: Path) -> None:
        tid = str(test.get("id", f"test_{at[-1]}"))
        if "metric" in test:  # the mcp-eval.yaml shape: already a rule test
            self.rule_test(tid, str(test["metric"]), test, at, at)
            return
        expected = test.get("expected")
        if isinstance(expected, dict):
            kind = str(expected.get("type", ""))
            self.rule_test(tid, kind, expected, at, (*at, "expected"))
        assertions = test.get("assertions")
        if assertions is not None and not (isinstance(assertions, list) and all(
                isinstance(a, dict) for a in assertions)):
            raise ConfigError([f"{self.src.where((*at, 'assertions'))}: an Assay test's "
                               "assertions must be a list of mappings ({type, tool})"])
        if expected is None and not assertions:  # nothing to check: it was dropped unsaid
            raise ConfigError([f"{self.src.where(at)}: Assay test '{tid}' has no expected "
                               "check (expected: {type: ...}) and no assertions"])
        for k, a in enumerate(assertions or []):
            self.assertion(tid, a, (*at, "assertions", k))

    def rule_test(self, tid: str, kind: str, spec: dict[str, Any], at: Path,
                  spec_at: Path) -> None:
        b, src = self.b, self.src
        n = len(self.tests)
        base: Path = ("tests", n)
        if kind == "args_valid":
            policy = spec.get("policy")
            if not isinstance(policy, str):
                self.unsupported(src, spec_at, "args_valid without a policy file")
                return
            native, checks = self.policy(policy, (*spec_at, "policy"))
            if not checks:  # an args_valid test of it would check nothing (a config error)
                if len(self.tests) > n:
                    return  # its tool lists are tests of their own: all the policy checks
                raise ConfigError([f"{src.where((*spec_at, 'policy'))}: Assay policy "
                                   f"'{policy}' has no schemas or constraints, and lets "
                                   "every other tool through (enforcement allow), so this "
                                   "args_valid test would check nothing: give its tools' "
                                   "schemas"])
            n = len(self.tests)  # after the tests the policy's tool lists became
            base = ("tests", n)
            test = {"id": tid, "metric": "args_valid", "policy": native}
            self.tests.append(test)
            b.at(base, src, at)
            b.at((*base, "id"), src, (*at, "id"))
            b.at((*base, "policy"), src, (*spec_at, "policy"))
            return
        if kind == "sequence_valid":
            # Expected::SequenceValid { policy, sequence, rules }: the rules and the exact
            # sequence are both checked (assay-metrics sequence_valid.rs)
            rules = spec.get("rules")
            if rules is not None and not isinstance(rules, list):  # said as "no rules"
                raise ConfigError([f"{src.where((*spec_at, 'rules'))}: Assay's "
                                   "sequence_valid 'rules' must be a list of rules "
                                   "({type, ...})"])
            if isinstance(rules, list):
                self.sequence_test(tid, rules, at, (*spec_at, "rules"))
            if "sequence" in spec:
                self.exact_sequence(tid, spec["sequence"], at, (*spec_at, "sequence"))
            if "policy" in spec:
                self.unsupported(src, (*spec_at, "policy"), "a sequence_valid policy file "
                                 "is not read: write its rules under rules: (or its "
                                 "sequence under sequence:)")
            elif not isinstance(rules, list) and "sequence" not in spec:
                self.unsupported(src, spec_at, "sequence_valid without rules")
            return
        if kind == "tool_blocklist":
            # Assay's Expected::ToolBlocklist { blocked }: a call of one of these names
            # (compared whole); 'blocklist' (the metric: shape) a substring, as before
            key = "blocked" if "blocked" in spec or "blocklist" not in spec else "blocklist"
            block = spec.get(key)
            items = block if isinstance(block, list) else [block]
            if not items or not all(isinstance(x, str | int | float) and
                                    not isinstance(x, bool) and str(x) for x in items):
                raise ConfigError([f"{src.where((*spec_at, key) if key in spec else spec_at)}"
                                   f": Assay's tool_blocklist needs '{key}': the tool names "
                                   "it blocks (Assay refuses a blocklist that is missing or "
                                   "empty: it would pass every call)"])
            self.blocklist_test(tid, [str(x) for x in items], src, (*spec_at, key),
                                isinstance(block, list), at,
                                "substring" if key == "blocklist" else "exact")
            return
        if kind in OUTPUT:
            value = spec.get(kind, spec.get("pattern"))
            key = kind if kind in spec else "pattern"
            if value is None:  # read as `contains: null`, which checked nothing: a pass
                raise ConfigError([f"{src.where((*spec_at, key) if key in spec else spec_at)}"
                                   f": Assay's {kind} needs '{kind}': the "
                                   f"{'pattern' if kind == 'regex_match' else 'text'} to "
                                   "look for (Assay refuses it missing)"])
            terms = [value] if isinstance(value, str) else value
            if kind == "must_contain" and isinstance(terms, list) and terms \
                    and all(isinstance(t, str) and t for t in terms):
                # Assay's str::contains tells case (NOOIT is not in 'nooit'); contains
                # ignores it, so each term is a regex of its text (several: a list, every
                # one to be found, as Assay wants every term)
                if isinstance(value, str) or len(terms) == 1:
                    here = (*spec_at, key) if isinstance(value, str) else (*spec_at, key, 0)
                    self.output(tid, "regex", re.escape(terms[0]), at, here)
                else:
                    self.output(tid, "regex", [re.escape(t) for t in terms], at,
                                (*spec_at, key))
                return
            if kind == "regex_match" and isinstance(value, str):
                value = _flagged(value, spec.get("flags"), src, (*spec_at, "flags"))
            self.output(tid, OUTPUT[kind], value, at, (*spec_at, key))
            return
        self.unsupported(src, (*spec_at, "type") if "type" in spec else spec_at,
                         f"Assay check '{kind}' is not deterministic or not supported by "
                         "agent-eval; it is not run")

    def output(self, tid: str, key: str, value: Any, at: Path, value_at: Path) -> None:
        sc = self.scenario(tid, at)
        expect = sc[1].setdefault("expect", {})
        output = expect.setdefault("output", {})
        k = len(self.scenarios) - 1 if sc[0] else sc[2]
        path: Path = ("scenarios", k, "expect", "output", key)
        output[key] = self.b.tree(path, value, self.src, value_at)
        self.b.at(("scenarios", k, "expect"), self.src, value_at)
        self.b.at(("scenarios", k, "expect", "output"), self.src, value_at)

    def scenario(self, tid: str, at: Path) -> tuple[bool, dict[str, Any], int]:
        for k, found in enumerate(self.scenarios):
            if found["id"] == tid:
                return False, found, k
        s: dict[str, Any] = {"id": tid}
        self.scenarios.append(s)
        k = len(self.scenarios) - 1
        self.b.at(("scenarios", k), self.src, at)
        self.b.at(("scenarios", k, "id"), self.src, (*at, "id"))
        tests = self.doc.get("tests")
        test = tests[at[1]] if len(at) == 2 and isinstance(tests, list) and isinstance(
            at[1], int) and 0 <= at[1] < len(tests) else None  # at: ("tests", i)
        inp = test.get("input") if isinstance(test, dict) else None
        prompt = inp.get("prompt") if isinstance(inp, dict) else None
        if isinstance(prompt, str) and prompt:  # Assay replays a test by its prompt
            s["input"] = prompt
            self.b.at(("scenarios", k, "input"), self.src, (*at, "input", "prompt"))
        return True, s, k

    def exact_sequence(self, tid: str, seq: Any, at: Path, seq_at: Path) -> None:
        """sequence_valid's ``sequence``: the trace's tool calls are exactly these names in
        this order (none at all for an empty list), as the test's scenario."""
        b, src = self.b, self.src
        if not isinstance(seq, list) or not all(isinstance(x, str) and x for x in seq):
            raise ConfigError([f"{src.where(seq_at)}: Assay's sequence_valid 'sequence' "
                               "must be a list of tool names"])
        _, sc, k = self.scenario(tid, at)
        base: Path = ("scenarios", k)
        if not seq:  # Assay: an empty sequence asserts that no tool is called
            sc.setdefault("thresholds", {})["max_tool_calls"] = 0
            for p in ((*base, "thresholds"), (*base, "thresholds", "max_tool_calls")):
                b.at(p, src, seq_at)
            return
        expect = sc.setdefault("expect", {})
        expect["sequence"] = [exact_glob(x) for x in seq]
        expect["sequence_mode"] = "exact"
        for p in ((*base, "expect"), (*base, "expect", "sequence"),
                  (*base, "expect", "sequence_mode")):
            b.at(p, src, seq_at)
        for i in range(len(seq)):
            b.at((*base, "expect", "sequence", i), src, (*seq_at, i))

    def assertion(self, tid: str, a: dict[str, Any], at: Path) -> None:
        kind = a.get("type")
        tool = a.get("tool")
        if kind in ("trace_must_call_tool", "trace_must_not_call_tool") and isinstance(tool,
                                                                                       str):
            rtype = "require" if kind == "trace_must_call_tool" else "blocklist"
            field = "tool" if rtype == "require" else "tools"
            self.sequence_test(f"{tid}.{at[-1]}", [{"type": rtype, field: tool}], at,
                               at, raw=True)
        else:
            self.unsupported(self.src, at, f"Assay assertion '{kind}' is not supported")

    # ------------------------------------------------------------------ sequences
    def sequence_test(self, tid: str, rules: list[Any], at: Path, rules_at: Path,
                      raw: bool = False) -> None:
        b, src = self.b, self.src
        n = len(self.tests)
        base: Path = ("tests", n)
        out_rules: list[dict[str, Any]] = []
        for i, r in enumerate(rules):
            here = rules_at if raw else (*rules_at, i)
            rule = self.rule(r, here, ("tests", n, "rules", len(out_rules)), raw)
            if rule is not None:
                out_rules.append(rule)
        if not out_rules:
            return
        self.tests.append({"id": tid, "metric": "sequence_valid", "rules": out_rules})
        b.at(base, src, at)
        b.at((*base, "id"), src, (*at, "id"))
        b.at((*base, "rules"), src, rules_at)

    def rule(self, r: Any, at: Path, out: Path, raw: bool) -> dict[str, Any] | None:
        b, src = self.b, self.src
        if not isinstance(r, dict) or not isinstance(r.get("type"), str) \
                or r.get("type") not in RULE_TYPES:
            kind = r.get("type") if isinstance(r, dict) else None
            raise ConfigError([f"{src.where((*at, 'type') if isinstance(r, dict) else at)}: "
                               f"unknown Assay sequence rule type '{kind}'; known: "
                               f"{', '.join(sorted(RULE_TYPES))}"])
        kind = str(r["type"])
        # Assay key -> native key
        rename: dict[str, str] = {"max_calls": {"max": "max"}, "never_after": {"trigger": "first",
                                                               "forbidden": "then"},
                  "after": {"trigger": "tool"}}.get(kind, {})
        native_type = "count" if kind == "max_calls" else kind
        rule: dict[str, Any] = {"type": native_type}
        b.at(out, src, at)
        b.at((*out, "type"), src, at if raw else (*at, "type"))
        for key, value in r.items():
            if key == "type":
                continue
            here = at if raw else (*at, key)
            if kind == "blocklist" and key == "pattern":
                # Assay: the tool name *contains* the pattern (a String: a list was the
                # glob of its repr, which blocked no call)
                if not isinstance(value, str):
                    raise ConfigError([f"{src.where(here)}: an Assay blocklist rule's "
                                       "'pattern' must be text (a part of the tool names "
                                       "it blocks); write one rule per pattern"])
                rule["tools"] = f"*{exact_glob(value)}*"
                b.at((*out, "tools"), src, here)
                continue
            name = str(rename.get(key, key))
            if name in ("tool", "tools", "first", "then"):
                value = self.names(value)
            rule[name] = b.tree((*out, name), value, src, here)
        if kind == "after" and "within" not in r:
            # Assay's default (SequenceRule::After, serde default_one): the then call comes
            # next; the native after without within allows it any time later
            rule["within"] = 1
            b.at((*out, "within"), src, at)
        return rule

    def names(self, value: Any) -> Any:
        """Rule tool names, compared byte for byte: glob characters escaped."""
        if isinstance(value, str):
            return exact_glob(value)
        if isinstance(value, list):
            return [self.names(v) for v in value]
        return value

    def blocklist_test(self, tid: str, items: list[str], src: Positions, at: Path,
                       listed: bool, test_at: Path, match: str) -> None:
        """A tool_blocklist test of ``items``, each matched as a ``substring`` of the
        name, ``exact``ly, or as an Assay ``wildcard`` (``*`` only)."""
        n = len(self.tests)
        base: Path = ("tests", n)
        block = [f"*{exact_glob(x)}*" if match == "substring" else
                 exact_glob(x) if match == "exact" else wildcard(x) for x in items]
        self.tests.append({"id": tid, "metric": "tool_blocklist", "blocklist": block})
        self.b.at(base, src, test_at)
        self.b.at((*base, "id"), src, test_at)
        self.b.at((*base, "blocklist"), src, at)
        for k in range(len(block)):
            self.b.at((*base, "blocklist", k), src, (*at, k) if listed else at)

    # ------------------------------------------------------------------- policies
    def policy(self, value: str, where: Path) -> tuple[str, bool]:
        """Translate an Assay policy file into a native policy (and the tests its
        allow/deny lists imply); returns the path the native test names, and whether an
        ``args_valid`` test of the native policy checks anything (it has tools, or an
        enforcement that reports the others)."""
        if "\0" in value:  # (no path holds one: opening it was an internal error)
            raise ConfigError([f"{self.src.where(where)}: policy file: a file name cannot "
                               "hold a NUL character (\\0)"])
        path = real(self.path.parent / value)
        file = self.rel(path)
        try:
            text = self.read(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = (exc.strerror or str(exc)) if isinstance(exc, OSError) else "not UTF-8"
            shown = as_written(self.path.parent / value, self.root)  # not where links lead
            raise ConfigError([f"{self.src.where(where)}: policy file '{value}' cannot be "
                               f"read ({reason}: {shown})"]) from None
        data, src = load_yaml(text, file)
        pb = Builder(file)
        native: dict[str, Any] = {"version": "1", "tools": {}}
        pb.at(("tools",), src, ())
        doc = data if isinstance(data, dict) else {}
        tools = doc.get("tools")
        if (isinstance(tools, dict) and ("allow" in tools or "deny" in tools)) or "schemas" in doc \
                or "allow" in doc or "deny" in doc or "constraints" in doc \
                or "enforcement" in doc:  # (not a tool named enforcement of a schema map)
            self.policy_v2(doc, src, pb, native)
        elif isinstance(tools, dict):  # legacy: tools: NAME: args: {properties}
            _schemas([(("tools", name), entry.get("args") if isinstance(entry, dict) else
                       entry) for name, entry in tools.items()], src, "args")
            for name, entry in tools.items():
                schema = entry.get("args") if isinstance(entry, dict) else None
                if isinstance(schema, dict):
                    schema = {"type": "object", **schema}
                    native["tools"][exact_glob(name)] = {"schema": schema}
                    pb.at(("tools", exact_glob(name)), src, ("tools", name))
                    pb.tree(("tools", exact_glob(name), "schema"), schema, src,
                            ("tools", name, "args"))
        elif "schema" in doc:  # one schema for every tool
            native["tools"]["*"] = {"schema": doc["schema"]}
            pb.at(("tools", "*"), src, ("schema",))
            pb.tree(("tools", "*", "schema"), doc["schema"], src, ("schema",))
        elif "blocklist" in doc:
            block = doc["blocklist"]
            _names(block, src, ("blocklist",), "blocklist")
            self.blocklist_test(f"{FsPath(file).stem}.blocklist",
                                [str(x) for x in (block if isinstance(block, list)
                                                  else [block])],
                                src, ("blocklist",), isinstance(block, list), where,
                                "substring")
        else:  # a map of tool -> JSON Schema
            _schemas([((name,), schema) for name, schema in doc.items()
                      if name not in _METADATA or isinstance(schema, dict | bool)], src,
                     "schema")
            for name, schema in doc.items():
                if isinstance(schema, dict | bool) and (name not in _METADATA
                                                        or isinstance(schema, dict)):
                    native["tools"][exact_glob(name)] = {"schema": schema}
                    pb.at(("tools", exact_glob(name)), src, (name,))
                    pb.tree(("tools", exact_glob(name), "schema"), schema, src, (name,))
        native_name = str(FsPath(value).with_suffix("")) + ".agent-eval.yaml"
        self.t.policies[str(real(self.path.parent / native_name))] = (native,
                                                                            pb.positions)
        mode = native.get("enforcement", {}).get("unconstrained_tools", "allow")
        return native_name, bool(native["tools"]) or mode != "allow"

    def policy_v2(self, doc: dict[str, Any], src: Positions, pb: Builder,
                  native: dict[str, Any]) -> None:
        schemas = doc.get("schemas")
        if schemas is not None and not isinstance(schemas, dict):  # was dropped unsaid
            raise ConfigError([f"{src.where(('schemas',))}: Assay 'schemas' must be a "
                               "mapping of tool name -> JSON Schema"])
        for name, schema in (schemas or {}).items():
            if name == "$defs" and isinstance(schema, dict):
                native["$defs"] = _refs(schema)
                pb.tree(("$defs",), native["$defs"], src, ("schemas", "$defs"))
                continue
            native["tools"][wildcard(name)] = {"schema": _refs(schema)}
            pb.at(("tools", wildcard(name)), src, ("schemas", name))
            pb.tree(("tools", wildcard(name), "schema"), native["tools"][wildcard(name)][
                "schema"], src, ("schemas", name))
        constraints = doc.get("constraints")
        if constraints is not None and not isinstance(constraints, list):
            raise ConfigError([f"{src.where(('constraints',))}: Assay 'constraints' must be a "
                               "list of {tool, params}"])
        for i, rule in enumerate(constraints or []):
            self.constraint(rule, ("constraints", i), src, pb, native)
        mode = "warn"  # Assay's default
        enforcement = doc.get("enforcement")
        if not isinstance(enforcement, dict | None):
            # `enforcement: deny` was read as no enforcement: warn, where deny was meant
            raise ConfigError([f"{src.where(('enforcement',))}: Assay 'enforcement' must be "
                               "a mapping {unconstrained_tools: deny | warn | allow}"])
        if not isinstance(doc.get("tools"), dict | None):  # (dropped unsaid: tools: [exec])
            raise ConfigError([f"{src.where(('tools',))}: Assay policy 'tools' must be a "
                               "mapping {allow: [...], deny: [...]}"])
        # (a value that is no mode, `unconstrained_tools: false` too, is the native
        # policy's config error at its line; it was read as not written: warn)
        if isinstance(enforcement, dict) and enforcement.get("unconstrained_tools") is not None:
            mode = str(enforcement["unconstrained_tools"])
            pb.at(("enforcement", "unconstrained_tools"), src,
                  ("enforcement", "unconstrained_tools"))
        else:
            pb.at(("enforcement", "unconstrained_tools"), src, ())
        native["enforcement"] = {"unconstrained_tools": mode}
        tools = as_dict(doc.get("tools"))
        for key, where in (("deny", ("tools", "deny")), ("allow", ("tools", "allow"))):
            items, at = (tools.get(key), where) if key in tools else (doc.get(key), (key,))
            if items is not None:  # a deny list of another shape was dropped unsaid
                _names(items, src, at, ".".join(map(str, at)), listed=True)
            if not isinstance(items, list) or not items:
                continue
            names = [str(x) for x in items]
            if key == "deny":
                self.blocklist_test(f"{FsPath(src.file).stem}.deny", names, src, at, True, at,
                                    "wildcard")
            elif "*" not in names:
                n = len(self.tests)
                rule = {"type": "allowlist", "tools": [wildcard(x) for x in names]}
                self.tests.append({"id": f"{FsPath(src.file).stem}.allow",
                                   "metric": "sequence_valid", "rules": [rule]})
                for p in (("tests", n), ("tests", n, "id"), ("tests", n, "rules"),
                          ("tests", n, "rules", 0), ("tests", n, "rules", 0, "type"),
                          ("tests", n, "rules", 0, "tools")):
                    self.b.at(p, src, at)
                for k in range(len(names)):
                    self.b.at(("tests", n, "rules", 0, "tools", k), src, (*at, k))


    def constraint(self, rule: Any, at: Path, src: Positions, pb: Builder,
                   native: dict[str, Any]) -> None:
        """One v1 ``constraints`` entry, ``{tool, params: {ARG: {matches: REGEX}}}``, as
        Assay migrates it when it loads the policy: the tool's schema (replacing one of
        ``schemas:``) requires each such argument to be a non-empty string with that
        pattern (a search), other arguments allowed."""
        tool = rule.get("tool") if isinstance(rule, dict) else None
        params = rule.get("params") if isinstance(rule, dict) else None
        if not isinstance(tool, str) or not isinstance(params, dict):
            raise ConfigError([f"{src.where(at)}: an Assay constraint needs 'tool' (a tool "
                               "name) and 'params' (argument -> {matches: REGEX})"])
        key = wildcard(tool)
        base: Path = ("tools", key, "schema")
        properties: dict[str, Any] = {}
        required: list[str] = []
        pb.at(("tools", key), src, (*at, "tool"))
        for name, how in params.items():
            here = (*at, "params", name)
            pattern = how.get("matches") if isinstance(how, dict) else None
            if not isinstance(pattern, str):
                self.unsupported(src, here, f"Assay constraint on '{name}' without a "
                                 "'matches' regex (Assay ignores it too)")
                continue
            properties[name] = {"type": "string", "pattern": pattern, "minLength": 1}
            required.append(name)
            for k in ("type", "minLength"):
                pb.at((*base, "properties", name, k), src, here)
            pb.at((*base, "properties", name), src, here)
            pb.at((*base, "properties", name, "pattern"), src, (*here, "matches"))
            pb.at((*base, "required", len(required) - 1), src, here)
        native["tools"][key] = {"schema": {"type": "object", "properties": properties,
                                           "required": required}}
        for part in ((), ("type",), ("properties",), ("required",)):
            pb.at((*base, *part), src, (*at, "params"))


# scalar keys a policy file may carry beside its tools (Assay's own files write them)
_METADATA = frozenset({"version", "name", "description"})


def _schemas(entries: list[tuple[Path, Any]], src: Positions, what: str) -> None:
    """Each legacy policy entry's schema: a mapping (or, in a map of tool -> schema, a
    boolean JSON Schema; ``args`` may be left out). Another value is a config error at its
    line: it was dropped, the tool left unconstrained (``exec_cmd: [deny]`` denied
    nothing)."""
    wrong = [at for at, value in entries
             if not (isinstance(value, dict) or (value is None and what == "args")
                     or (isinstance(value, bool) and what == "schema"))]
    if wrong:
        raise ConfigError([f"{src.where(at)}: Assay policy '{'.'.join(map(str, at))}' must "
                           + ("be a mapping {args: {properties: ...}}" if what == "args" else
                              "be a JSON Schema of the tool's arguments (a mapping, or "
                              "true/false)") for at in wrong])


def _names(value: Any, src: Positions, at: Path, key: str, listed: bool = False) -> None:
    """A policy's list of tool names (or one name, where ``listed`` is False): anything
    else is a config error at ``at`` (its repr was a name that matched no tool)."""
    items = value if isinstance(value, list) else None if listed else [value]
    if items is None or not all(isinstance(x, str | int | float) and not isinstance(x, bool)
                                for x in items):
        raise ConfigError([f"{src.where(at)}: Assay policy '{key}' must be a list of tool "
                           "names"])


def _flagged(pattern: str, flags: Any, src: Positions, at: Path) -> str:
    """A regex_match pattern with its ``flags`` as inline flags (assay-metrics
    regex_match.rs: ``i`` case-insensitive, ``m`` multi-line, ``s`` a dot matches a line
    break; any other is ignored, by Assay too)."""
    if flags is None:
        return pattern
    if not isinstance(flags, list):
        raise ConfigError([f"{src.where(at)}: Assay's regex 'flags' must be a list "
                           "(i, m, s)"])
    known = "".join(f for f in "ims" if f in flags)
    return f"(?{known}){pattern}" if known else pattern


def _refs(node: Any) -> Any:
    """Assay's ``#/schemas/$defs/...`` references as ``#/$defs/...``."""
    if isinstance(node, dict):
        return {k: (v.replace("#/schemas/$defs/", "#/$defs/", 1)
                    if k == "$ref" and isinstance(v, str) else _refs(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_refs(v) for v in node]
    return node


def translate(path: FsPath, root: FsPath, read: Callable[[FsPath], str],
              rel: Callable[[FsPath], str]) -> Translation:
    return _Assay(path, root, read, rel).translate()
