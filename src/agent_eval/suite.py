"""Suite assembly: load the suite file and its policies into a compiled :class:`Suite`.

This module sits above everything it assembles (the config models and policies, the
rule checks, the scenarios and the judge, the live MCP part, the trace formats, the
peer-config importers); none of them imports it.

All problems are collected and raised together as one :class:`ConfigError`, each as
``FILE:LINE:COL: message``.

:func:`inventory` is what a run records about its configuration, so that a comparison
can tell that the policy changed (docs/results.md "The baseline"): one entry per
configured rule key (``file#key.path`` -> digest of its value).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from agent_eval.checks import REGISTRY
from agent_eval.checks.base import CompileContext, CompiledTest
from agent_eval.config.models import PolicyFile, SuiteFile, TestBase, without_wrong_keys
from agent_eval.config.policy import Policy, compile_policy
from agent_eval.config.schema_compiler import SchemaCompiler
from agent_eval.coverage import CoveragePlan
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef, Finding
from agent_eval.importers import detect, translator
from agent_eval.limits import CONFIG, Limits
from agent_eval.limits import DEFAULT as DEFAULT_LIMITS
from agent_eval.paths import as_written, not_utf8, real, rel, repo_root
from agent_eval.readers import READERS
from agent_eval.rule_ids import IMPORT_UNSUPPORTED
from agent_eval.saferegex import regex_budget
from agent_eval.sections import Inventory
from agent_eval.selectors import Groups, SelectorCompiler
from agent_eval.textdist import suggest
from agent_eval.yamlpos import Path, Positions, YamlLimitError, load_yaml, safe_load

if TYPE_CHECKING:
    from agent_eval.judge.compile import JudgeContext, JudgeRun
    from agent_eval.judge.store import Store
    from agent_eval.live.compile import CompiledLive
    from agent_eval.scenarios.compile import CompiledScenarios

__all__ = ["CONFIG_NAMES", "Suite", "find_config", "inventory", "load_suite",
           "read_config_file"]

CONFIG_NAMES = ("agent-eval.yaml", "agent-eval.yml", ".agent-eval.yaml", "mcp-eval.yaml")
NOT_YET: dict[str, str] = {}  # top-level keys not available yet -> why
LIVE_KEYS = ("servers", "probes", "tool_lock")  # live MCP (live/compile.py)
# a test's keys whose absence changes what its other keys mean: without `strict: true` a
# policy of no tools is a problem of its own, which dropping a wrong `strict` would make
_NEEDED = frozenset({"strict"})


def find_config(cwd: str | None = None) -> FsPath:
    here = FsPath(cwd or os.getcwd())
    for name in CONFIG_NAMES:
        if (here / name).is_file():
            return here / name
    raise ConfigError([f"{here}: no config found (looked for {', '.join(CONFIG_NAMES)}); "
                       "pass --config PATH"])


@dataclass
class Suite:
    """A loaded, compiled suite. Picklable: it pickles as its source texts and is
    compiled again on the other side."""

    name: str
    path: FsPath  # absolute path of the suite file
    root: FsPath  # repository root (paths in results are relative to it)
    base_dir: FsPath  # the suite file's folder (config paths are relative to it)
    file: str  # the suite file, repo-relative
    model: SuiteFile
    tests: list[CompiledTest]
    sources: dict[str, str] = field(repr=False)  # absolute path -> text, as compiled
    positions: Positions = field(repr=False)  # positions in the suite file
    policies: dict[str, Policy] = field(default_factory=dict, repr=False)
    scenarios: CompiledScenarios | None = field(default=None, repr=False)
    coverage: CoveragePlan = field(default_factory=lambda: CoveragePlan((), ()), repr=False)
    live: CompiledLive | None = field(default=None, repr=False)  # servers, probes (mcp.md)
    dialect: str = "native"  # the config's language (importers/: assay, evalview, ciagent)
    notes: list[Finding] = field(default_factory=list, repr=False)  # import/unsupported

    @property
    def trace_globs(self) -> list[str]:
        t = self.model.traces
        return [] if t is None else [t] if isinstance(t, str) else list(t)

    @property
    def format(self) -> str:
        return self.model.format

    @property
    def limits(self) -> Limits:
        return self.model.limits.limits()

    @property
    def judge(self) -> JudgeRun | None:
        """The suite's judge (judge checks or a ``judge:`` block), else None."""
        return self.scenarios.judge if self.scenarios is not None else None

    def refuse_live(self, who: str, instead: str) -> None:
        """A config error at the suite's ``servers:`` (or ``probes:``, ``tool_lock:``) when
        it is live: ``who`` (the action, the library's ``evaluate``) checks recorded traces
        only, so its probes would never run and the verdict would pass without them
        (docs/mcp.md); ``instead`` says what runs them."""
        if self.live is None:
            return
        key = next((k for k in LIVE_KEYS if self.positions.has((k,))), LIVE_KEYS[0])
        raise ConfigError([f"{self.positions.where((key,))}: {who} does not run live MCP "
                           f"servers and probes ('{key}:'): they would not be checked. "
                           f"{instead}"])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        judge = self.judge
        return (_rebuild, (str(self.path), str(self.root), self.sources, self.dialect,
                           None if judge is None else (judge.context, judge.store)))


def _rebuild(path: str, root: str, sources: dict[str, str], dialect: str = "auto",
             judge: tuple[JudgeContext, Store] | None = None) -> Suite:
    suite = _Loader(FsPath(path), FsPath(root), sources, dialect).load()
    if judge is not None and suite.judge is not None:
        # how this run judges (--judge, the baseline) and the store as the parent has it
        # (the store is not one of the suite's sources: it is no part of the config)
        suite.judge.context, suite.judge.store = judge
    return suite


def load_suite(path: str | os.PathLike[str] | None = None, *, root: str | None = None,
               dialect: str = "auto") -> Suite:
    """Load and compile a suite file (default: the first known config name in the cwd).
    ``dialect``: auto (by content), native, or a peer's (importers/: assay, evalview,
    ciagent); a folder is read as a folder of EvalView test cases."""
    config = FsPath(path) if path is not None else find_config()
    config = config.resolve()
    if config.is_dir() and dialect in ("auto", "evalview"):
        dialect = "evalview"
    elif not config.is_file():  # (a FIFO, /dev/null, a folder: "not found" said nothing)
        why = ("config file not found" if not config.exists() else
               "a folder, not a config file; give the suite file (a folder is read as "
               "EvalView test cases only with --dialect auto or evalview)" if config.is_dir()
               else "not a regular file (a FIFO, socket or device); give the suite file")
        raise ConfigError([f"{path}: {why}"])
    base = config.parent if config.is_file() else config
    return _Loader(config, FsPath(root).resolve() if root else repo_root(base), None,
                   dialect).load()


def read_config_file(path: FsPath, config: FsPath, root: FsPath) -> str:
    """A config file's text (the suite file ``config``, a policy, a JSON Schema file, a
    peer's file): only a regular file inside the repository ``root`` (a path in the config
    is hostile: ``../../etc/passwd``, ``/dev/zero``; ``config`` itself is the operator's),
    of at most ``CONFIG``'s max_file_bytes. Raises OSError (or UnicodeDecodeError) with
    the reason."""
    if path != config and not real(path).is_relative_to(real(root)):
        raise PermissionError("outside the repository: agent-eval reads only files "
                              "inside the repository (the folder holding .git "
                              "above the suite file)")
    # O_NONBLOCK: opening a FIFO does not wait for a writer; O_BINARY: Windows opens
    # a file as text without it. Each only where the system has it (Windows has no
    # O_NONBLOCK, the others no O_BINARY).
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:  # the reason alone: the path is where links led
        raise type(exc)(exc.strerror or "cannot be opened") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # (open() of a folder's fd says "Is a directory: 3")
        os.close(fd)
        raise OSError("a folder, not a file" if stat.S_ISDIR(mode) else "not a regular file")
    with open(fd, "rb") as fh:
        data = fh.read(CONFIG.max_file_bytes + 1)
    if len(data) > CONFIG.max_file_bytes:
        raise OSError(f"larger than {CONFIG.max_file_bytes} bytes "
                      "(limits.max_file_bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(exc) from None


class NotUtf8Error(UnicodeDecodeError):
    """A config file that is not UTF-8 text: its text says where the first byte that is
    not UTF-8 is (1-based ``line`` and ``col``, in characters) and what to do, where
    Python's says "'utf-8' codec can't decode byte 0xff in position 8"."""

    def __init__(self, exc: UnicodeDecodeError) -> None:
        super().__init__(exc.encoding, exc.object, exc.start, exc.end, exc.reason)
        head = bytes(exc.object[:exc.start])
        self.line = head.count(b"\n") + 1
        self.col = len(head[head.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1

    def __str__(self) -> str:
        data = bytes(self.object[:2])
        if self.start == 0 and data in (b"\xff\xfe", b"\xfe\xff"):
            return ("not UTF-8 text: it starts with a UTF-16 byte order mark; save the file "
                    "as UTF-8")
        return (f"not UTF-8 text: byte 0x{self.object[self.start]:02x} at line {self.line}, "
                f"column {self.col}; save the file as UTF-8")


class _Loader:
    def __init__(self, config: FsPath, root: FsPath, sources: dict[str, str] | None,
                 dialect: str = "auto") -> None:
        self.config = config
        self.root = root
        self.base = config if config.is_dir() else config.parent
        self.dialect = dialect
        self.translated: dict[str, tuple[dict[str, Any], Positions]] = {}
        self.frozen = sources is not None
        self.sources: dict[str, str] = dict(sources or {})
        self.problems: list[str] = []
        self.policies: dict[str, Policy] = {}
        self.failed: set[str] = set()  # policy files whose problems were reported
        self.mode: Any = "normalized"
        self.selectors: SelectorCompiler | None = None  # the suite's selectors
        self.limits = DEFAULT_LIMITS  # the suite's, once its top level is valid

    def read(self, path: FsPath) -> str:
        """A config file's text (:func:`read_config_file`), read once."""
        key = str(path)
        if key not in self.sources:
            if self.frozen:
                raise FileNotFoundError(key)
            self.sources[key] = read_config_file(path, self.config, self.root)
        return self.sources[key]

    def load(self) -> Suite:
        with regex_budget():  # the suite's patterns: compiled once each, bounded together
            return self._load()

    def _load(self) -> Suite:
        file = rel(self.config, self.root)
        if not_utf8(file):
            # every finding names it: results.json and a fingerprint's hash could not
            # be written (an internal error, UnicodeEncodeError, after the evaluation)
            raise ConfigError([f"{repr(file)[1:-1]}: the suite file's path holds bytes "
                               "that are not UTF-8, which no output can name; rename the "
                               "file or its folder"])
        data: Any = None
        positions = Positions(file)
        if not self.config.is_dir():
            try:
                text = self.read(self.config)
            except NotUtf8Error as exc:
                raise ConfigError.at(file, exc.line, exc.col,
                                     f"cannot read the config: {exc}") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError([f"{file}: cannot read the config: {exc}"]) from None
            data, positions = load_yaml(text, file)
        dialect = self.dialect
        if dialect == "auto":
            dialect = detect(data)
        notes: list[Finding] = []
        if dialect != "native":
            t = translator(dialect)(self.config, self.root, self.read,
                                    lambda p: rel(p, self.root))
            data, positions = t.data, t.positions
            self.translated = t.policies
            notes = [_unsupported(dialect, *u) for u in t.unsupported]
        if not isinstance(data, dict):
            raise ConfigError.at(file, 1, 1, "the suite file must be a mapping with 'suite:' "
                                 "and 'tests:'")
        for key, why in NOT_YET.items():
            if key in data:
                self.problems.append(f"{positions.where((key,))}: '{key}': {why}")
        suite_data = {k: v for k, v in data.items() if k not in NOT_YET}
        model = self.validate(SuiteFile, suite_data, positions, ())
        # The tests are checked even when the top level is wrong, so that every
        # problem of the file is reported in one go.
        tool_match = model.tool_match if model is not None else (
            data.get("tool_match") if data.get("tool_match") in ("normalized", "exact")
            else "normalized")
        self.mode = tool_match
        if model is not None:
            self.limits = model.limits.limits()
        groups, group_problems = Groups.parse(data, positions)
        self.problems += group_problems
        self.selectors = SelectorCompiler(groups, positions,
                                          "exact" if tool_match == "exact" else "normalized")
        # (also when another top-level key is wrong: every problem in one run)
        fmt = model.format if model is not None else data.get("format", "auto")
        if isinstance(fmt, str):
            self.check_format(fmt, positions)
        raw_tests = data.get("tests")
        live_keys = [k for k in LIVE_KEYS if k in data]
        # an empty list checks nothing: `scenarios: []` (or `probes: []`) beside no tests
        # is a suite that can only pass (docs/config.md); so is `tool_lock:` alone, which
        # checks the tools of servers (it needs `servers:`)
        empty = [k for k in ("scenarios", "probes") if data.get(k, None) == []]
        if not raw_tests and (raw_tests is None or isinstance(raw_tests, list)) and not [
                k for k in ("scenarios", "servers", "probes") if k in data and k not in empty]:
            where: Path = ("tests",) if "tests" in data else (empty[0],) if empty else ()
            lists = " and ".join(f"'{k}:'" for k in empty)
            self.problems.append(
                f"{positions.where(where)}: the suite has no tests; add a 'tests:' list "
                "(see docs/config.md)" if not empty else
                f"{positions.where(where)}: the suite has no tests, and its {lists} "
                f"{'lists are' if len(empty) > 1 else 'list is'} empty: it would check "
                "nothing and pass; add a 'tests:' list or a scenario (see docs/config.md)")
        tests = self.compile_tests(tool_match, raw_tests if isinstance(raw_tests, list) else [],
                                   positions, file)
        scenarios = None
        if any(k in data for k in ("scenarios", "pass_criteria", "judge", "weights")):
            # lazy for start-up time: the scenario models are large, and many suites have none
            from agent_eval.scenarios.compile import compile_scenarios

            scenarios = compile_scenarios(data, positions, file, self.mode, self, self.root)
        live = None
        if live_keys:
            # lazy for start-up time (the MCP SDK itself is imported only by live.runner)
            from agent_eval.live.compile import compile_live

            live = compile_live(data, positions, file, self, self.root, {t.id for t in tests})
        if self.problems or model is None:
            raise ConfigError(self.problems)
        named = [r for sc in scenarios.scenarios for r in sc.named_tools] if scenarios else []
        return Suite(model.suite, self.config, self.root, self.base, file, model, tests,
                     self.sources, positions, self.policies, scenarios,
                     CoveragePlan.build(tests, named), live, dialect, notes)

    def check_format(self, fmt: str, positions: Positions) -> None:
        if fmt not in ("auto", *READERS):
            self.problems.append(
                f"{positions.where(('format',))}: unknown trace format '{fmt}'"
                f"{suggest(fmt, {'auto', *READERS})}; use auto or one of "
                f"{', '.join(READERS)}")

    # ---------------------------------------------------------------- validation
    def validate(self, model: type[BaseModel], data: Any, positions: Positions,
                 prefix: Path) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            from agent_eval.config.describe import (  # (start-up time: on errors only)
                describe,
                union_noise,
            )

            for err in union_noise(exc.errors(), data):
                self.problems.append(describe(err, model, data, positions, prefix))
            return None

    def compile_tests(self, tool_match: Any, raw: list[Any], positions: Positions,
                      file: str) -> list[CompiledTest]:
        tests: list[CompiledTest] = []
        seen: dict[str, Path] = {}
        for i, item in enumerate(raw):
            path: Path = ("tests", i)
            if not isinstance(item, dict):
                self.problems.append(f"{positions.where(path)}: a test must be a mapping with "
                                     "'id' and 'metric'")
                continue
            metric = item.get("metric")
            tid = item.get("id", metric)
            if isinstance(tid, str | int) and not isinstance(tid, bool):
                id_path: Path = (*path, "id") if "id" in item else path
                if str(tid) in seen:
                    first = positions.get(seen[str(tid)])
                    self.problems.append(f"{positions.where(id_path)}: duplicate test id "
                                         f"'{tid}' (first used at line {first.line}); test ids "
                                         "must be unique")
                    continue
                seen[str(tid)] = id_path
            if metric is None:
                self.problems.append(f"{positions.where(path)}: test is missing 'metric' (one of "
                                     f"{', '.join(REGISTRY)})")
                continue
            spec = REGISTRY.get(str(metric))
            if spec is None:
                self.problems.append(
                    f"{positions.where((*path, 'metric'))}: unknown metric '{metric}'"
                    f"{suggest(str(metric), set(REGISTRY))}; known: {', '.join(REGISTRY)}")
                continue
            item = {"id": tid, **item}
            cfg = self.validate(spec.model, item, positions, path)
            if cfg is None:
                self.check_policy_of(spec.model, item, path)
                rest = without_wrong_keys(spec.model, item, _NEEDED)
                if rest is not None:  # its other keys' problems too, in the same run
                    ctx = CompileContext(file, positions, path, rest.id, tool_match,
                                         self.policy, self.selectors, self.limits)
                    try:
                        spec.compile(rest, ctx)
                    except ConfigError as exc:
                        self.problems.extend(p for p in exc.problems
                                             if p not in self.problems)
                continue
            assert isinstance(cfg, TestBase)
            ctx = CompileContext(file, positions, path, cfg.id, tool_match, self.policy,
                                 self.selectors, self.limits)
            try:
                tests.append(spec.compile(cfg, ctx))
            except ConfigError as exc:
                self.problems.extend(exc.problems)
        return tests

    def check_policy_of(self, model: type[BaseModel], item: dict[str, Any],
                        path: Path) -> None:
        """The problems of the policy file a test names, when the test itself is invalid
        (a misspelt key beside ``policy:``): every problem is reported at once, so one
        typo in the test must not hide those of its policy (docs/config.md)."""
        value = item.get("policy")
        if "policy" not in model.model_fields or not isinstance(value, str) or not value \
                or "\0" in value:  # (a NUL: the model says so)
            return
        try:
            self.policy(value, (*path, "policy"))
        except ConfigError as exc:
            self.problems.extend(exc.problems)

    # ------------------------------------------------------------------ policies
    def policy(self, value: Any, where: Path) -> Policy:
        suite_file = rel(self.config, self.root)
        path = real(self.base / str(value))
        key = str(path)
        if key in self.policies:
            return self.policies[key]
        file = rel(path, self.root)
        if key in self.translated:  # a peer's policy, translated by an importer
            data, positions = self.translated[key]
            policy = self.compile_policy_data(data, positions, positions.file)
            self.policies[key] = policy
            return policy
        try:
            text = self.read(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not found" if isinstance(exc, FileNotFoundError) else str(exc)
            _, pos = load_yaml(self.sources[str(self.config)], suite_file)
            shown = as_written(self.base / str(value), self.root)  # never where links lead
            raise ConfigError([f"{pos.where(where)}: policy file '{value}' cannot be read "
                               f"({reason}: {shown}); the path is relative to the folder of "
                               f"{suite_file}"]) from None
        if key in self.failed:
            raise ConfigError([])  # already reported
        try:
            policy = self.compile_policy(text, file)
        except ConfigError:
            self.failed.add(key)
            raise
        self.policies[key] = policy
        return policy

    def compile_policy(self, text: str, file: str) -> Policy:
        """Compile a policy file; every problem in it (its structure and its schemas)
        is raised together, in the order of the file."""
        data, positions = load_yaml(text, file)
        if not isinstance(data, dict):
            raise ConfigError.at(file, 1, 1, "a policy file must be a mapping with 'tools:'")
        return self.compile_policy_data(data, positions, file)

    def compile_policy_data(self, data: dict[str, Any], positions: Positions,
                            file: str) -> Policy:
        problems_before = len(self.problems)
        self.validate(PolicyFile, data, positions, ())
        problems = self.problems[problems_before:]
        del self.problems[problems_before:]
        compiler = SchemaCompiler(data, positions)
        policy = compile_policy(data, compiler, file, self.mode)
        problems += [p for p in compiler.problems if p not in problems]
        if problems:
            from agent_eval.config.describe import position_of  # (start-up time)

            raise ConfigError(sorted(problems, key=position_of))
        return policy


def _unsupported(dialect: str, file: str, line: int, col: int, what: str) -> Finding:
    """A key of a peer's config that agent-eval cannot apply: never silently dropped."""
    return Finding(rule=IMPORT_UNSUPPORTED.id, severity=IMPORT_UNSUPPORTED.level,
                   message=f"{what} ({dialect} config; see docs/migrating.md)",
                   test=f"import:{dialect}",
                   config=ConfigRef(file, line, col, f"{file}#unsupported:{what}"),
                   trace=None, constraint=what)




# ----------------------------------------------------------------------- inventory
def inventory(suite: Suite) -> Inventory:
    """The configured rules of ``suite``: a digest of its files, and a digest per rule.

    A rule is one configured key: in the suite file every key below a test (by test id),
    a scenario (by scenario id) and ``pass_criteria``, and every other key that changes
    what is checked (``tool_groups``, ``tool_match``, ``traces``, ``limits``, …: all but
    :data:`_NOT_RULES`); in a policy file every key below ``tools`` and every other key
    of the document (``enforcement``, ``$defs``; the whole document for other files such
    as JSON Schemas). Lists are one rule. Keys are ``file#dotted.path`` with repo-relative
    files, so moving lines changes nothing and renaming a test id is one rule removed and
    one added."""
    rules: dict[str, str] = {}
    whole = hashlib.sha256()
    for path in sorted(suite.sources):
        text = suite.sources[path]
        name = _relative(FsPath(path), suite.root)
        whole.update(f"{name}\0{text}\0".encode())
        try:
            doc = safe_load(text)
        except (yaml.YAMLError, YamlLimitError):
            continue
        if FsPath(path) == suite.path:
            if isinstance(doc, dict):
                _suite_rules(name, doc, rules)
        elif isinstance(doc, dict) and isinstance(doc.get("tools"), dict):
            for key, value in doc.items():  # enforcement and $defs judge calls too
                if key not in _NOT_RULES:
                    _rules_of(f"{name}#{key}", value, rules)
        else:
            _rules_of(f"{name}#", doc, rules)
    return Inventory(whole.hexdigest()[:32], dict(sorted(rules.items())))


def _relative(path: FsPath, root: FsPath) -> str:
    try:
        return real(path).relative_to(real(root)).as_posix()
    except ValueError:
        return path.as_posix()


# Keys of a suite or policy file that change nothing that is checked: what the file is,
# and (the suite's) where the outputs go. Every other key is a rule: a change to
# tool_groups, tool_match, traces or a policy's enforcement changes the findings as much as
# a test's own keys, and a comparison must say so (docs/results.md "baseline").
_NOT_RULES = frozenset({"version", "suite", "description", "output"})
_SECTIONS = ("tests", "scenarios", "probes")


def _suite_rules(name: str, doc: dict[str, Any], rules: dict[str, str]) -> None:
    for key, value in doc.items():
        if key not in _NOT_RULES and key not in _SECTIONS and value is not None:
            _rules_of(f"{name}#{key}", value, rules)
    for section in _SECTIONS:
        items = doc.get(section)
        if not isinstance(items, list):
            continue
        for n, item in enumerate(items):
            ident = item.get("id", n) if isinstance(item, dict) else n
            _rules_of(f"{name}#{section}.{ident}", item, rules)


def _str_keys(value: Any) -> Any:
    """``value`` with every mapping key a string, for ``json.dumps(sort_keys=True)``: YAML
    keys may be numbers, booleans or null beside strings (``{amount: …, 2.5: …}``), which
    do not sort together. A key that is no string keeps its type in its text."""
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else f"\0{type(k).__name__}:{k!r}"): _str_keys(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_str_keys(v) for v in value]
    return value


def _rules_of(prefix: str, value: Any, rules: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        sep = "" if prefix.endswith("#") else "."
        for key, sub in value.items():
            _rules_of(f"{prefix}{sep}{key}", sub, rules)
        return
    text = json.dumps(_str_keys(value), sort_keys=True, default=str)
    rules[prefix] = hashlib.sha256(text.encode()).hexdigest()[:12]
