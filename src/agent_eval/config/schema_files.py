"""The JSON Schemas that output and result checks name (a scenario's ``output.json_schema``,
a live probe's ``json_schema``, a ``tool_results`` entry's): inline or a file relative to the
suite file, each compiled once, its regular expressions matched by RE2; and what the suite
loader gives the compilers that read such files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any, Protocol

import yaml
from pydantic import BaseModel

from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.limits import CONFIG
from agent_eval.paths import real
from agent_eval.saferegex import (
    RegexError,
    SafeRegex,
    compile_ecma,
    jsonschema_validator,
    schema_patterns,
)
from agent_eval.yamlpos import Path, Positions, YamlLimitError, safe_load

__all__ = ["LoaderLike", "SchemaFiles", "compile_schema"]


class LoaderLike(Protocol):
    """What the suite loader gives the compilers (suite.py ``_Loader``)."""

    problems: list[str]
    base: FsPath

    def validate(self, model: type[BaseModel], data: Any, positions: Positions,
                 prefix: Path) -> Any: ...

    def read(self, path: FsPath) -> str: ...


def compile_schema(schema: Any, source: str, problem: Callable[[str], None]) -> Any:
    """A validator of ``schema`` (draft by ``$schema``, default 2020-12), or None after
    reporting why not."""
    # only when a suite uses it: keeps the CLI's start-up fast
    import jsonschema  # type: ignore[import-untyped]

    if not isinstance(schema, dict | bool):  # a file of `null` or `5`: validator_for fails
        problem(f"invalid JSON Schema ({source}): {schema!r} is not of type 'object', "
                "'boolean'")
        return None
    cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problem(f"invalid JSON Schema ({source}): {exc.message}")
        return None
    regexes: dict[str, SafeRegex] = {}
    for pattern in schema_patterns(schema):  # matched by RE2, not Python's re
        try:
            regexes[pattern] = compile_ecma(pattern)
        except RegexError as exc:
            problem(f"invalid JSON Schema ({source}): pattern {pattern!r}: {exc}")
            return None
    return jsonschema_validator(cls, schema, regexes)


class SchemaFiles:
    """The JSON Schemas of one suite: ``files(value, path)`` is ``(validator, source)``,
    the validator None after a problem at ``path`` was reported; a file is read and
    compiled once."""

    def __init__(self, loader: LoaderLike, problem: Callable[[Path, str], None]) -> None:
        self.loader = loader
        self.problem = problem
        self._compiled: dict[str, Any] = {}

    def __call__(self, value: Any, path: Path) -> tuple[Any, str]:
        source = "inline"
        if isinstance(value, str):
            source = value
            if value in self._compiled:
                return self._compiled[value], source
            read, schema = self._read(value, path)
            if not read:
                return None, source
        else:
            schema = value
        validator = compile_schema(schema, source, lambda msg: self.problem(path, msg))
        if validator is not None and isinstance(value, str):
            self._compiled[value] = validator
        return validator, source

    def _read(self, value: str, path: Path) -> tuple[bool, Any]:
        """(True, the schema) or, after reporting why not, (False, None)."""
        try:
            text = self.loader.read(real(self.loader.base / value))
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not found" if isinstance(exc, FileNotFoundError) else str(exc)
            self.problem(path, f"JSON Schema file '{value}' cannot be read ({reason}); "
                         "the path is relative to the folder of the suite file")
            return False, None
        try:
            return True, (bounded_loads(text, CONFIG) if value.endswith(".json")
                    else safe_load(text, CONFIG))  # bounded (docs/security.md)
        except YamlLimitError as exc:
            self.problem(path, f"JSON Schema file '{value}' cannot be used: line "
                         f"{exc.line}: {exc.message}")
        except (ValueError, yaml.YAMLError) as exc:
            self.problem(path, f"JSON Schema file '{value}' is not valid JSON/YAML: "
                         f"{str(exc).splitlines()[0]}")
        return False, None
