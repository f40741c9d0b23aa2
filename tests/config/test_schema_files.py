"""config/schema_files.py: the JSON Schemas that scenario outputs, live probes and
tool_results name, inline or as a file next to the suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agent_eval.config.schema_files import SchemaFiles, compile_schema
from agent_eval.yamlpos import Path as YamlPath
from agent_eval.yamlpos import Positions


class Loader:
    def __init__(self, base: Path) -> None:
        self.problems: list[str] = []
        self.base = base
        self.reads: list[Path] = []

    def validate(self, model: type[BaseModel], data: Any, positions: Positions,
                 prefix: YamlPath) -> Any:
        raise AssertionError("not used")

    def read(self, path: Path) -> str:
        self.reads.append(path)
        return path.read_text(encoding="utf-8")


def files(tmp_path: Path) -> tuple[SchemaFiles, Loader, list[str]]:
    loader = Loader(tmp_path)
    said: list[str] = []
    return SchemaFiles(loader, lambda path, msg: said.append(f"{'.'.join(map(str, path))}: "
                                                             f"{msg}")), loader, said


def test_inline_and_file_schemas_validate(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("type: object\nrequired: [id]\n")
    schemas, loader, said = files(tmp_path)
    inline, source = schemas({"type": "string", "pattern": "^a"}, ("x",))
    assert source == "inline" and inline.is_valid("ab") and not inline.is_valid("ba")
    v, source = schemas("s.yaml", ("y",))
    assert source == "s.yaml" and v.is_valid({"id": 1}) and not v.is_valid({})
    again, _ = schemas("s.yaml", ("z",))
    assert again is v and loader.reads == [(tmp_path / "s.yaml").resolve()]  # read once
    assert said == []


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("missing.json", None, "x.json_schema: JSON Schema file 'missing.json' cannot be read "
     "(not found); the path is relative to the folder of the suite file"),
    ("bad.json", "{", "x.json_schema: JSON Schema file 'bad.json' is not valid JSON/YAML: "),
    ("bad.yaml", "a: [", "x.json_schema: JSON Schema file 'bad.yaml' is not valid JSON/YAML: "),
    ("deep.yaml", "a: " + "[" * 300 + "]" * 300, "x.json_schema: JSON Schema file "
     "'deep.yaml' cannot be used: line 1: "),
    ("null.yaml", "null\n", "x.json_schema: invalid JSON Schema (null.yaml): None is not of "
     "type 'object', 'boolean'"),
    ("five.json", "5", "x.json_schema: invalid JSON Schema (five.json): 5 is not of type "
     "'object', 'boolean'"),
    ("list.yaml", "[1]\n", "x.json_schema: invalid JSON Schema (list.yaml): [1] is not of "
     "type 'object', 'boolean'"),
    ("rx.yaml", "pattern: '(?<=a)b'\n", "x.json_schema: invalid JSON Schema (rx.yaml): "
     "pattern '(?<=a)b': "),
])
def test_a_file_that_cannot_be_used_is_one_problem(tmp_path: Path, name: str,
                                                   text: str | None, expected: str) -> None:
    if text is not None:
        (tmp_path / name).write_text(text)
    schemas, _, said = files(tmp_path)
    assert schemas(name, ("x", "json_schema")) == (None, name)
    assert len(said) == 1 and said[0].startswith(expected), said


def test_compile_schema_reports_instead_of_raising() -> None:
    said: list[str] = []
    assert compile_schema({"type": "nope"}, "inline", said.append) is None
    assert said and said[0].startswith("invalid JSON Schema (inline): ")
    assert compile_schema(True, "inline", said.append).is_valid(1)
