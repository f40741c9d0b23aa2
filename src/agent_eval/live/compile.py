"""Compile ``servers:``, ``probes:`` and ``tool_lock:`` once per suite.

Every key a finding can point at becomes a :class:`ConfigRef` (file, line, column and a
stable key path by server name or probe id); regexes and JSON Schemas are compiled here,
so that checking a probe's answers compiles nothing. The MCP SDK is not imported: its
absence is a config error at the ``servers:`` line.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any, TypeVar

from pydantic import BaseModel

from agent_eval.config.schema_files import LoaderLike, SchemaFiles
from agent_eval.findings import ConfigRef
from agent_eval.live.models import NAME_PATTERN, Probe, Server, TextExpect
from agent_eval.paths import as_written, real
from agent_eval.saferegex import (
    RegexError,
    SafeRegex,
    compile_python,
)
from agent_eval.safetext import fold
from agent_eval.textdist import suggest
from agent_eval.yamlpos import Path, Positions

SDK_HINT = ("install the MCP extra: pip install 'agent-eval-ci[mcp]' (the official `mcp` "
            "Python SDK)")
_NAME = re.compile(NAME_PATTERN)
_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class TextCheck:
    """One key of a :class:`TextExpect`, compiled."""

    kind: str  # equals | contains | not_contains | regex | json_schema
    ref: ConfigRef
    shown: str  # the constraint as written: "contains: Echo"
    terms: tuple[str, ...] = ()  # contains / not_contains, lower-cased
    value: Any = None  # equals
    regex: SafeRegex | None = None
    schema: Any = None  # a jsonschema validator
    source: str = ""  # the schema's file, or "inline"


@dataclass(frozen=True, slots=True)
class ServerSpec:
    name: str
    ref: ConfigRef  # the server's key in servers:
    model: Server
    cwd: FsPath  # absolute working folder of a stdio server
    key_path: str  # servers.NAME

    def sub(self, refs: dict[str, ConfigRef], key: str) -> ConfigRef:
        return refs.get(key, self.ref)


@dataclass(slots=True)
class ProbeSpec:
    id: str
    index: int
    kind: str
    server: str
    model: Probe
    ref: ConfigRef  # the probe's item (its `id:` line)
    refs: dict[str, ConfigRef]  # dotted key below the probe -> its location
    result: tuple[TextCheck, ...] = ()
    error: tuple[TextCheck, ...] = ()
    content: tuple[TextCheck, ...] = ()
    messages_text: tuple[TextCheck, ...] = ()
    sampling_text: tuple[TextCheck, ...] = ()
    system_prompt: tuple[TextCheck, ...] = ()

    def at(self, *keys: str | int) -> ConfigRef:
        """The location of a key below the probe (its nearest configured ancestor)."""
        parts = [str(k) for k in keys]
        while parts:
            hit = self.refs.get(".".join(parts))
            if hit is not None:
                return hit
            parts.pop()
        return self.ref


@dataclass(slots=True)
class CompiledLive:
    servers: dict[str, ServerSpec]
    probes: list[ProbeSpec]
    lock: FsPath | None  # absolute path of the lock file
    lock_file: str  # repo-relative
    lock_ref: ConfigRef | None
    file: str  # the suite file
    server_refs: dict[str, dict[str, ConfigRef]] = field(default_factory=dict)

    @property
    def test_ids(self) -> list[str]:
        """The result entries: one per probe, then one per server (its tool checks)."""
        return [p.id for p in self.probes] + [f"server:{n}" for n in self.servers]


class _Compiler:
    def __init__(self, data: dict[str, Any], positions: Positions, file: str,
                 loader: LoaderLike, root: FsPath) -> None:
        self.data = data
        self.positions = positions
        self.file = file
        self.loader = loader
        self.root = root
        self.json_schema = SchemaFiles(loader, self.problem)

    def problem(self, path: Path, message: str) -> None:
        self.loader.problems.append(f"{self.positions.where(path)}: {message}")

    def ref(self, path: Path, key_path: str) -> ConfigRef:
        pos = self.positions.get(path)
        return ConfigRef(self.file, pos.line, pos.col, key_path)

    def validated(self, model: type[_M], value: Any, path: Path,
                  not_a_mapping: str) -> _M | None:
        """``value`` as ``model``; None after its problems were reported."""
        if not isinstance(value, dict):
            self.problem(path, not_a_mapping)
            return None
        found = self.loader.validate(model, value, self.positions, path)
        if found is None:
            return None
        assert isinstance(found, model)
        return found

    def refs_below(self, value: Any, path: Path, key_path: str) -> dict[str, ConfigRef]:
        """Every key (and list item) below ``value``, by dotted path."""
        out: dict[str, ConfigRef] = {}
        stack: list[tuple[Any, Path, list[str]]] = [(value, path, [])]
        while stack:
            node, here, names = stack.pop()
            items = (node.items() if isinstance(node, dict) else enumerate(node)
                     if isinstance(node, list) else ())
            for k, sub in items:
                where = (*here, k)
                dotted = [*names, str(k)]
                out[".".join(dotted)] = self.ref(where, ".".join((key_path, *dotted)))
                stack.append((sub, where, dotted))
        return out

    # ----------------------------------------------------------------- servers
    def servers(self) -> dict[str, ServerSpec]:
        raw = self.data.get("servers")
        if raw is None:
            return {}
        if not isinstance(raw, dict) or not raw:
            self.problem(("servers",), "'servers' must be a mapping of server name -> "
                         "{command, args, …} or {url, headers, …} (see docs/mcp.md)")
            return {}
        if importlib.util.find_spec("mcp") is None:
            self.problem(("servers",), f"the suite names MCP servers but the MCP SDK is "
                         f"not installed; {SDK_HINT}")
        out: dict[str, ServerSpec] = {}
        for name, value in raw.items():
            path: Path = ("servers", name)
            if not _NAME.match(str(name)):
                self.problem(path, f"server name '{name}' must be letters, digits, '_', '.' "
                             "or '-' (it names the session's trace file)")
                continue
            model = self.validated(Server, value, path, f"server '{name}' must be a mapping "
                                   "with 'command' or 'url'")
            if model is None:
                continue
            cwd = real(self.loader.base / (model.cwd or "."))
            if model.command is not None and not cwd.is_dir():
                self.problem((*path, "cwd"), f"server '{name}': cwd '{model.cwd}' is not a "
                             "folder (relative to the suite file's folder)")
            for header, spec in model.headers.items():
                if "\n" in header or ":" in header:
                    self.problem((*path, "headers", header), f"invalid header name "
                                 f"'{header}'")
                del spec
            out[str(name)] = ServerSpec(str(name), self.ref(path, f"servers.{name}"), model,
                                        cwd, f"servers.{name}")
        return out

    # ------------------------------------------------------------------ probes
    def probes(self, servers: dict[str, ServerSpec], taken: set[str]) -> list[ProbeSpec]:
        raw = self.data.get("probes")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.problem(("probes",), "'probes' must be a list (see docs/mcp.md)")
            return []
        if raw and not servers and "servers" not in self.data:
            self.problem(("probes",), "probes need servers: add a 'servers:' mapping")
        seen: dict[str, int] = {}
        out: list[ProbeSpec] = []
        for i, item in enumerate(raw):
            path: Path = ("probes", i)
            model = self.validated(Probe, item, path, "a probe must be a mapping with 'id' "
                                   "and one of tool, list, resource, resource_template, "
                                   "prompt, capabilities")
            if model is None:
                continue
            id_path: Path = (*path, "id")
            if model.id in seen or model.id in taken:
                first = (f"probe at line {seen[model.id]}" if model.id in seen
                         else "a test")
                self.problem(id_path, f"duplicate id '{model.id}' (also used by {first}); "
                             "test and probe ids must be unique")
                continue
            seen[model.id] = self.positions.get(id_path).line
            server = model.server
            if server is None:
                if len(servers) == 1:
                    server = next(iter(servers))
                elif servers:
                    self.problem(path, f"probe '{model.id}': name its 'server' (one of "
                                 f"{', '.join(servers)})")
                    continue
                else:
                    continue
            elif server not in servers:
                if servers or "servers" not in self.data:
                    self.problem((*path, "server"), f"probe '{model.id}': unknown server "
                                 f"'{server}'{suggest(server, set(servers))}; known: "
                                 f"{', '.join(servers) or 'none'}")
                continue
            key = f"probes.{model.id}"
            spec = ProbeSpec(model.id, i, model.kind, server, model, self.ref(path, key),
                             self.refs_below(item, path, key))
            self.probe_checks(spec, model, path)
            out.append(spec)
        return out

    def probe_checks(self, spec: ProbeSpec, model: Probe, path: Path) -> None:
        for key in _PROBE_CHECKS:  # read as not written: its check would not run
            if key in model.model_fields_set and getattr(model, key) is None:
                self.problem((*path, key), f"'{key}' {UNSET}")
        if model.expect_result is not None:
            spec.result = self.text(model.expect_result, (*path, "expect_result"), spec,
                                    ("expect_result",))
        if isinstance(model.expect_error, TextExpect):
            spec.error = self.text(model.expect_error, (*path, "expect_error"), spec,
                                   ("expect_error",))
        if model.expect_content is not None:
            spec.content = self.text(model.expect_content, (*path, "expect_content"), spec,
                                     ("expect_content",))
        if model.expect_messages is not None and model.expect_messages.text is not None:
            spec.messages_text = self.text(model.expect_messages.text,
                                           (*path, "expect_messages", "text"), spec,
                                           ("expect_messages", "text"))
        sampling = model.sampling.expect if model.sampling is not None else None
        if sampling is not None:
            if sampling.messages is not None:
                spec.sampling_text = self.text(sampling.messages,
                                               (*path, "sampling", "expect", "messages"),
                                               spec, ("sampling", "expect", "messages"))
            if sampling.system_prompt is not None:
                spec.system_prompt = self.text(
                    sampling.system_prompt, (*path, "sampling", "expect", "system_prompt"),
                    spec, ("sampling", "expect", "system_prompt"))
        if model.resource_template is not None:
            names = set(re.findall(r"\{([^{}]+)\}", model.resource_template))
            given = set(model.parameters or {})
            if names != given:
                missing, extra = sorted(names - given), sorted(given - names)
                what = "; ".join(
                    ([f"missing {', '.join(missing)}"] if missing else [])
                    + ([f"not in the template: {', '.join(extra)}"] if extra else []))
                self.problem((*path, "parameters") if model.parameters else
                             (*path, "resource_template"),
                             f"probe '{model.id}': parameters must fill every {{name}} of "
                             f"the template ({what})")

    def text(self, expect: TextExpect, path: Path, spec: ProbeSpec,
             keys: tuple[str, ...]) -> tuple[TextCheck, ...]:
        return text_checks(expect, lambda kind: spec.at(*keys, kind),
                           lambda kind, msg: self.problem((*path, kind), msg),
                           lambda kind, value: self.json_schema(value, (*path, kind)))

    # -------------------------------------------------------------------- lock
    def lock(self) -> tuple[FsPath | None, str, ConfigRef | None]:
        value = self.data.get("tool_lock")
        if value is None:
            return None, "", None
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            return None, "", None  # the SuiteFile model reports it
        path = real(self.loader.base / value)
        # named as written: a message about it never says where a link leads
        shown = as_written(self.loader.base / value, self.root)
        if not path.is_relative_to(real(self.root)):
            # read by `agent-eval run`, written by `agent-eval lock`: never outside
            self.problem(("tool_lock",), f"tool_lock '{value}' is outside the repository "
                         f"({shown}): agent-eval reads and writes only files inside the "
                         "repository (the folder holding .git above the suite file); the "
                         "path is relative to the folder of the suite file")
            return None, "", None
        return path, shown, self.ref(("tool_lock",), "tool_lock")


# what a key written without a value (null) does: YAML reads it as null, which is taken
# as "not written" (docs/scenarios.md)
UNSET = ("is written without a value (null), so it checks nothing and would pass; give it "
         "a value or remove the key")
# the keys of a probe that check something
_PROBE_CHECKS = ("expect_result", "expect_error", "max_latency_ms", "min_count", "max_count",
                 "expect", "expect_mime_type", "expect_content", "expect_arguments",
                 "expect_messages", "protocol_version", "sampling")


def text_checks(expect: TextExpect, ref: Callable[[str], ConfigRef],
                problem: Callable[[str, str], None],
                schema: Callable[[str, Any], tuple[Any, str]]) -> tuple[TextCheck, ...]:
    """The configured keys of ``expect``, compiled (``ref(kind)`` locates a key,
    ``problem(kind, message)`` reports one, ``schema(kind, value)`` compiles a JSON
    Schema given inline or as a file)."""
    out: list[TextCheck] = []
    for kind in ("equals", "contains", "not_contains", "regex", "json_schema"):
        if kind not in expect.model_fields_set:
            continue
        value = getattr(expect, kind)
        where = ref(kind)
        shown = f"{kind}: {_short(value)}"
        # a key that checks nothing, and passed (as a scenario's: docs/scenarios.md);
        # equals: null is a claim (the structured content is null)
        if value is None and kind != "equals":
            problem(kind, f"'{kind}' {UNSET}")
            continue
        if kind in ("contains", "not_contains"):
            terms = [value] if isinstance(value, str) else list(value)
            if not terms:
                problem(kind, f"'{kind}' is an empty list, so it checks nothing and would "
                        "pass; add a term or remove the key")
                continue
            if "" in terms:
                problem(kind, f"'{kind}' has an empty term, which is found in every text; "
                        "write the text to look for")
                continue
            out.append(TextCheck(kind, where, shown, terms=tuple(fold(t) for t in terms)))
        elif kind == "equals":
            out.append(TextCheck(kind, where, shown, value=value))
        elif kind == "regex":
            if value == "":
                problem(kind, "an empty regular expression is found in every text, so it "
                        "checks nothing and would pass; write the pattern to look for")
                continue
            try:
                rx = compile_python(str(value))  # RE2: linear time on any output
            except RegexError as exc:
                problem(kind, f"invalid regular expression: {exc}")
                continue
            out.append(TextCheck(kind, where, shown, regex=rx))
        else:
            validator, source = schema(kind, value)
            if validator is not None:
                out.append(TextCheck(kind, where, f"json_schema: {source}", schema=validator,
                                     source=source))
    return tuple(out)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def compile_live(data: dict[str, Any], positions: Positions, file: str, loader: LoaderLike,
                 root: FsPath, test_ids: set[str]) -> CompiledLive:
    """Compile the live part of a suite; problems go to ``loader.problems``."""
    c = _Compiler(data, positions, file, loader, root)
    servers = c.servers()
    probes = c.probes(servers, test_ids)
    lock, lock_file, lock_ref = c.lock()
    if lock is not None and not servers and "servers" not in data:
        c.problem(("tool_lock",), "tool_lock needs servers: add a 'servers:' mapping")
    clash = {f"server:{n}" for n in servers} & (test_ids | {p.id for p in probes})
    for name in sorted(clash):
        c.problem(("servers", name.split(":", 1)[1]),
                  f"the id '{name}' of this server's tool checks is also a test or probe id")
    refs = {name: c.refs_below(data["servers"][name], ("servers", name), f"servers.{name}")
            for name in servers}
    return CompiledLive(servers, probes, lock, lock_file, lock_ref, file, refs)
