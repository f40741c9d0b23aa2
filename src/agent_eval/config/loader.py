"""Load the suite file and its policies into a compiled :class:`Suite`.

All problems are collected and raised together as one :class:`ConfigError`, each as
``FILE:LINE:COL: message``.
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_eval.checks import REGISTRY
from agent_eval.checks.base import CompileContext, CompiledTest
from agent_eval.config.models import PolicyFile, SuiteFile, TestBase
from agent_eval.config.policy import Policy, compile_policy
from agent_eval.config.schema_compiler import SchemaCompiler, did_you_mean
from agent_eval.errors import ConfigError
from agent_eval.yamlpos import Path, Positions, load_yaml

CONFIG_NAMES = ("agent-eval.yaml", "agent-eval.yml", ".agent-eval.yaml", "mcp-eval.yaml")
NOT_YET = {
    "scenarios": "scenario expectations are not available in this version; "
    "use rule checks under 'tests:'",
    "pass_criteria": "suite pass criteria are not available in this version",
}


def find_config(cwd: str | None = None) -> FsPath:
    here = FsPath(cwd or os.getcwd())
    for name in CONFIG_NAMES:
        if (here / name).is_file():
            return here / name
    raise ConfigError([f"{here}: no config found (looked for {', '.join(CONFIG_NAMES)}); "
                       "pass --config PATH"])


def repo_root(start: FsPath) -> FsPath:
    """The enclosing git work tree, else the config's folder."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def rel(path: FsPath, root: FsPath) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(path.resolve(), root.resolve()).replace(os.sep, "/")


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

    @property
    def trace_globs(self) -> list[str]:
        t = self.model.traces
        return [] if t is None else [t] if isinstance(t, str) else list(t)

    @property
    def format(self) -> str:
        return self.model.format

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild, (str(self.path), str(self.root), self.sources))


def _rebuild(path: str, root: str, sources: dict[str, str]) -> Suite:
    return _Loader(FsPath(path), FsPath(root), sources).load()


def load_suite(path: str | os.PathLike[str] | None = None, *, root: str | None = None) -> Suite:
    """Load and compile a suite file (default: the first known config name in the cwd)."""
    config = FsPath(path) if path is not None else find_config()
    config = config.resolve()
    if not config.is_file():
        raise ConfigError([f"{path}: config file not found"])
    base = config.parent
    return _Loader(config, FsPath(root).resolve() if root else repo_root(base), None).load()


class _Loader:
    def __init__(self, config: FsPath, root: FsPath, sources: dict[str, str] | None) -> None:
        self.config = config
        self.root = root
        self.base = config.parent
        self.frozen = sources is not None
        self.sources: dict[str, str] = dict(sources or {})
        self.problems: list[str] = []
        self.policies: dict[str, Policy] = {}
        self.mode: Any = "normalized"

    def read(self, path: FsPath) -> str:
        key = str(path)
        if key not in self.sources:
            if self.frozen:
                raise FileNotFoundError(key)
            with open(path, encoding="utf-8") as fh:
                self.sources[key] = fh.read()
        return self.sources[key]

    def load(self) -> Suite:
        file = rel(self.config, self.root)
        try:
            text = self.read(self.config)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError([f"{file}: cannot read the config: {exc}"]) from None
        data, positions = load_yaml(text, file)
        if not isinstance(data, dict):
            raise ConfigError.at(file, 1, 1, "the suite file must be a mapping with 'suite:' "
                                 "and 'tests:'")
        for key, why in NOT_YET.items():
            if key in data:
                self.problems.append(f"{positions.where((key,))}: '{key}': {why}")
        suite_data = {k: v for k, v in data.items() if k not in NOT_YET}
        model = self.validate(SuiteFile, suite_data, positions, ())
        if model is None:
            raise ConfigError(self.problems)
        self.mode = model.tool_match
        if not model.tests:
            self.problems.append(f"{positions.where(('suite',))}: the suite has no tests; add a "
                                 "'tests:' list (see docs/config.md)")
        tests = self.compile_tests(model, data.get("tests") or [], positions, file)
        if self.problems:
            raise ConfigError(self.problems)
        return Suite(model.suite, self.config, self.root, self.base, file, model, tests,
                     self.sources, positions, self.policies)

    # ---------------------------------------------------------------- validation
    def validate(self, model: type[BaseModel], data: Any, positions: Positions,
                 prefix: Path) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                self.problems.append(_describe(err, model, data, positions, prefix))
            return None

    def compile_tests(self, model: SuiteFile, raw: list[Any], positions: Positions,
                      file: str) -> list[CompiledTest]:
        tests: list[CompiledTest] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(raw):
            path: Path = ("tests", i)
            if not isinstance(item, dict):
                self.problems.append(f"{positions.where(path)}: a test must be a mapping with "
                                     "'id' and 'metric'")
                continue
            metric = item.get("metric")
            if metric is None:
                self.problems.append(f"{positions.where(path)}: test is missing 'metric' (one of "
                                     f"{', '.join(REGISTRY)})")
                continue
            spec = REGISTRY.get(str(metric))
            if spec is None:
                self.problems.append(
                    f"{positions.where((*path, 'metric'))}: unknown metric '{metric}'"
                    f"{did_you_mean(str(metric), set(REGISTRY))}; known: {', '.join(REGISTRY)}")
                continue
            item = {"id": item.get("id", metric), **item}
            cfg = self.validate(spec.model, item, positions, path)
            if cfg is None:
                continue
            assert isinstance(cfg, TestBase)
            if cfg.id in seen:
                self.problems.append(f"{positions.where((*path, 'id'))}: duplicate test id "
                                     f"'{cfg.id}' (also test #{seen[cfg.id] + 1})")
                continue
            seen[cfg.id] = i
            ctx = CompileContext(file, positions, path, cfg.id, model.tool_match, self.policy)
            try:
                tests.append(spec.compile(cfg, ctx))
            except ConfigError as exc:
                self.problems.extend(exc.problems)
        return tests

    # ------------------------------------------------------------------ policies
    def policy(self, value: Any, where: Path) -> Policy:
        suite_file = rel(self.config, self.root)
        path = (self.base / str(value)).resolve()
        key = str(path)
        if key in self.policies:
            return self.policies[key]
        file = rel(path, self.root)
        try:
            text = self.read(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not found" if isinstance(exc, FileNotFoundError) else str(exc)
            _, pos = load_yaml(self.sources[str(self.config)], suite_file)
            raise ConfigError([f"{pos.where(where)}: policy file '{value}' cannot be read "
                               f"({reason}); the path is relative to {suite_file}"]) from None
        data, positions = load_yaml(text, file)
        if not isinstance(data, dict):
            raise ConfigError.at(file, 1, 1, "a policy file must be a mapping with 'tools:'")
        problems_before = len(self.problems)
        self.validate(PolicyFile, data, positions, ())
        if len(self.problems) > problems_before:
            problems = self.problems[problems_before:]
            del self.problems[problems_before:]
            raise ConfigError(problems)
        policy = compile_policy(data, SchemaCompiler(data, positions), file, self.mode)
        self.policies[key] = policy
        return policy


# ----------------------------------------------------------------- error messages
def _walk(data: Any, loc: tuple[Any, ...]) -> Path:
    """The data path of a pydantic error location: union-member tags in the middle of
    ``loc`` are skipped; a last step that is not in the data (a missing key) is kept."""
    path: list[str | int] = []
    node = data
    for n, step in enumerate(loc):
        if isinstance(node, dict) and step in node:
            node = node[step]
            path.append(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            path.append(step)
        elif n == len(loc) - 1 and isinstance(step, str):
            path.append(step)
    return tuple(path)


def _model_at(model: type[BaseModel], path: Path) -> type[BaseModel] | None:
    """The model that validates the mapping at ``path`` (for "did you mean")."""
    current: Any = model
    for step in path:
        if isinstance(step, int):
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            name = next((n for n, f in fields.items() if step in (n, f.alias)), None)
            if name is None:
                return None
            current = _inner_model(fields[name].annotation)
        elif current is None:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (list, dict, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _field_names(model: type[BaseModel]) -> set[str]:
    return {f.alias or n for n, f in model.model_fields.items()}


def _describe(err: Any, model: type[BaseModel], data: Any, positions: Positions,
              prefix: Path) -> str:
    loc = tuple(err["loc"])
    path = _walk(data, loc)
    kind = err["type"]
    full = (*prefix, *path)
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        owner = _model_at(model, path[:-1])
        hint = did_you_mean(key, _field_names(owner)) if owner else ""
        allowed = f"; allowed: {', '.join(sorted(_field_names(owner)))}" if owner else ""
        return f"{positions.where(full)}: unknown key '{key}'{hint or allowed}"
    if kind == "missing":
        key = str(path[-1]) if path else str(loc[-1])
        where = positions.where(full[:-1] if path else full)
        return f"{where}: missing required key '{key}'"
    name = ".".join(str(p) for p in path) or "value"
    got = err.get("input")
    shown = f" (got {got!r})" if not isinstance(got, dict | list) and got is not None else ""
    return f"{positions.where(full)}: {name}: {err['msg']}{shown}"
