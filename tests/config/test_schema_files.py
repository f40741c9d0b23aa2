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


CYCLE = ("refers back to itself without descending into a property or an item; reach it "
         "again only under 'properties', 'items' or the like, or remove this $ref")
NOWHERE = ("points at nothing: a reference must lead to a schema of this document (or to a "
           "JSON Schema meta-schema); nothing is fetched")
DRAFT7 = "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize(("schema", "expected"), [
    # before, these failed every output ("Output nests too deeply to be validated") or
    # crashed the run (an internal error): now each is a config error when loaded
    ({"$ref": "#"}, f"the $ref at /$ref ('#') {CYCLE}"),
    ({"allOf": [{"$ref": "#"}]}, f"the $ref at /allOf/0/$ref ('#') {CYCLE}"),
    ({"properties": {"a": {"$ref": "#/$defs/l"}},
      "$defs": {"l": {"oneOf": [{"$ref": "#/$defs/l"}]}}},
     f"the $ref at /$defs/l/oneOf/0/$ref ('#/$defs/l') {CYCLE}"),
    ({"$defs": {"x": {"$anchor": "x", "not": {"$ref": "#x"}}}, "$ref": "#x"},
     f"the $ref at /$defs/x/not/$ref ('#x') {CYCLE}"),
    ({"$id": "https://a.example/root", "properties": {"p": {"$ref": "https://a.example/e"}},
      "$defs": {"e": {"$id": "https://a.example/e", "allOf": [{"$ref": "#"}]}}},
     f"the $ref at /$defs/e/allOf/0/$ref ('#') {CYCLE}"),
    ({"$dynamicAnchor": "m", "anyOf": [{"$dynamicRef": "#m"}]},
     f"the $dynamicRef at /anyOf/0/$dynamicRef ('#m') {CYCLE}"),
    ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": True,
      "anyOf": [{"$recursiveRef": "#"}]},
     f"the $recursiveRef at /anyOf/0/$recursiveRef ('#') {CYCLE}"),
    ({"$schema": DRAFT7, "dependencies": {"a": {"$ref": "#"}}},
     f"the $ref at /dependencies/a/$ref ('#') {CYCLE}"),
    ({"$ref": "#/nope"}, f"the $ref at /$ref ('#/nope') {NOWHERE}"),
    ({"items": {"$ref": "other.json"}}, f"the $ref at /items/$ref ('other.json') {NOWHERE}"),
    ({"$ref": "https://example.com/s.json"},
     f"the $ref at /$ref ('https://example.com/s.json') {NOWHERE}"),
    ({"$ref": "file:///etc/hostname"}, f"the $ref at /$ref ('file:///etc/hostname') {NOWHERE}"),
    ({"required": ["a"], "$ref": "#/required"},
     "the $ref at /$ref ('#/required') points at a value of type array, not at a "
     "schema"),
    ({"allOf": [{}], "items": {"$ref": "#/allOf/x"}},  # before: ValueError (a crash)
     f"the $ref at /items/$ref ('#/allOf/x') {NOWHERE}"),
])
def test_a_ref_that_points_at_nothing_or_comes_back_is_a_problem(schema: Any,
                                                                 expected: str) -> None:
    said: list[str] = []
    assert compile_schema(schema, "s.json", said.append) is None
    assert said == [f"invalid JSON Schema (s.json): {expected}"]


@pytest.mark.parametrize(("schema", "valid", "invalid"), [
    # recursion through a member or an item is how trees are written: it stays valid
    ({"$defs": {"node": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
      "$ref": "#/$defs/node"}, {"children": [{"children": []}]}, {"children": [1]}),
    ({"$id": "https://a.example/root", "properties": {"p": {"$ref": "https://a.example/e"}},
      "$defs": {"e": {"$id": "https://a.example/e", "type": "object",
                      "properties": {"x": {"$ref": "#"}}}}},
     {"p": {"x": {"x": {}}}}, {"p": {"x": {"x": 1}}}),
    ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": True,
      "type": "array", "items": {"$recursiveRef": "#"}}, [[], [[]]], [[1]]),
    # the meta-schemas resolve (jsonschema's own registry), and nothing else is needed
    ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, {"type": "string"},
     {"type": 5}),
    # before 2019-09 a $ref's siblings are ignored: this allOf is never applied
    ({"$schema": DRAFT7, "definitions": {"a": {"type": "string"}}, "$ref": "#/definitions/a",
      "allOf": [{"$ref": "#"}]}, "s", 1),
])
def test_recursion_that_descends_and_the_meta_schemas_are_fine(schema: Any, valid: Any,
                                                               invalid: Any) -> None:
    said: list[str] = []
    validator = compile_schema(schema, "s.json", said.append)
    assert said == []
    assert validator.is_valid(valid) and not validator.is_valid(invalid)


def _doubling(n: int) -> dict[str, Any]:
    """d0 .. dn, each applying the next twice to the same value: 2**(n+1) - 1 schemas."""
    defs: dict[str, Any] = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2}
                            for i in range(n)}
    defs[f"d{n}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def test_references_that_apply_a_definition_twice_are_bounded() -> None:
    """22 definitions, each naming the next twice (a scenario's output.json_schema), did
    not finish validating one output in minutes: 2**23 schemas applied one by one. A
    schema may apply at most 10,000 to one value, as a policy's (docs/config.md):
    2**13 - 1 = 8,191 is fine, 2**14 - 1 = 16,383 is a problem, at the schema that does
    (here the root; under a property, that property's schema)."""
    said: list[str] = []
    validator = compile_schema(_doubling(12), "s.json", said.append)
    assert said == [] and validator.is_valid("a") and not validator.is_valid(1)
    many = ("applies more than 10,000 schemas to the same value through its references "
            "(definitions that name the same definitions again, as in anyOf: [{$ref: X}, "
            "{$ref: X}]); name each definition once")
    assert compile_schema(_doubling(13), "s.json", said.append) is None
    nested = {"$defs": _doubling(13)["$defs"], "properties": {"a": {"$ref": "#/$defs/d0"}}}
    assert compile_schema(nested, "s.json", said.append) is None
    assert said == [f"invalid JSON Schema (s.json): the schema at / {many}",
                    f"invalid JSON Schema (s.json): the schema at /properties/a {many}"]


def test_a_schema_file_with_a_ref_to_itself_is_one_problem(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"$ref": "#"}')
    schemas, _, said = files(tmp_path)
    assert schemas("s.json", ("x", "json_schema")) == (None, "s.json")
    assert said == [f"x.json_schema: invalid JSON Schema (s.json): the $ref at /$ref ('#') "
                    f"{CYCLE}"]


IGNORED = ("a keyword that is not JSON Schema's would be ignored, so it would check "
           "nothing")


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "properties": {"t": {"type": "number", "maxium": 50}}},
     ["unknown keyword 'maxium' at /properties/t/maxium (did you mean 'maximum'?)"]),
    ({"type": "object", "additionalProperty": False},
     ["unknown keyword 'additionalProperty' at /additionalProperty (did you mean "
      "'additionalProperties'?)"]),
    # in a definition a $ref leads to, and a keyword no draft has (no hint)
    ({"$schema": DRAFT7, "definitions": {"a": {"type": "string", "x-internal-id": 5}},
      "items": {"$ref": "#/definitions/a"}},
     ["unknown keyword 'x-internal-id' at /definitions/a/x-internal-id"]),
])
def test_an_unknown_keyword_is_a_problem(schema: Any, expected: list[str]) -> None:
    """jsonschema ignores a keyword it does not know: a misspelt maxium: 50 let a
    temperature of 300 pass a tool_results json_schema (exit 0)."""
    said: list[str] = []
    assert compile_schema(schema, "inline", said.append) is None
    assert said == [f"invalid JSON Schema (inline): {e}: {IGNORED}" for e in expected]


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "else": {"required": ["b"]}}, "'else' at /else has no effect "
     "without 'if'"),
    ({"properties": {"a": {"then": {"maximum": 1}}}}, "'then' at /properties/a/then has no "
     "effect without 'if'"),
    ({"type": "object", "if": {"required": ["a"]}}, "'if' at /if has no effect without "
     "'then' or 'else'"),
    ({"properties": {"a": {"maxContains": 0}}}, "'maxContains' at /properties/a/maxContains "
     "has no effect without 'contains'"),
])
def test_a_keyword_that_has_no_effect_alone_is_a_problem(schema: Any, expected: str) -> None:
    """JSON Schema ignores then/else without if, an if without then or else, and
    min/maxContains without contains: an output schema's `else: {required: [b]}` with no
    `if` checked nothing, and an output of `{}` passed it (as a policy's, docs/config.md)."""
    said: list[str] = []
    assert compile_schema(schema, "inline", said.append) is None
    assert len(said) == 1 and said[0].startswith(f"invalid JSON Schema (inline): {expected} "
                                                 "(JSON Schema ignores"), said


@pytest.mark.parametrize("draft", [None, "https://json-schema.org/draft/2019-09/schema"])
def test_min_and_max_contains_beside_contains_are_keywords(draft: str | None) -> None:
    """They have no validator of their own in jsonschema (contains reads them), so they
    were 'unknown keywords' and a valid schema was refused."""
    said: list[str] = []
    schema = {"contains": {"const": 1}, "minContains": 2, "maxContains": 3,
              **({"$schema": draft} if draft else {})}
    validator = compile_schema(schema, "inline", said.append)
    assert said == []
    assert validator.is_valid([1, 1, 0]) and validator.is_valid([1, 1, 1])
    assert not validator.is_valid([1, 0]) and not validator.is_valid([1, 1, 1, 1])


def test_min_contains_in_draft_7_is_an_unknown_keyword() -> None:
    said: list[str] = []
    compile_schema({"$schema": DRAFT7, "contains": {"const": 1}, "minContains": 2}, "inline",
                   said.append)
    assert said == [f"invalid JSON Schema (inline): unknown keyword 'minContains' at "
                    f"/minContains (did you mean 'contains'?): {IGNORED}"]


def test_a_meta_schema_a_ref_leads_to_is_not_checked_for_keywords() -> None:
    """A $ref to a meta-schema of another draft may be written (scenarios.md); its
    keywords are that draft's ($recursiveRef in 2019-09's), not unknown ones of this
    schema's draft: the schema was refused with one 'unknown keyword' per node of it."""
    said: list[str] = []
    validator = compile_schema({"$ref": "https://json-schema.org/draft/2019-09/schema"},
                               "inline", said.append)
    assert said == []
    # a schema whose type is a number is no 2019-09 schema
    assert validator.is_valid({"type": "string"}) and not validator.is_valid({"type": 5})


def test_annotations_and_property_names_are_no_unknown_keywords() -> None:
    said: list[str] = []
    schema = {"$id": "https://a.example/s", "title": "t", "description": "d",
              "$comment": "c", "examples": [{}], "default": {}, "deprecated": False,
              "readOnly": False, "contentMediaType": "application/json",
              "$defs": {"unused": {"type": "string"}},
              "if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {},
              "properties": {"maxium": {"type": "string"}, "nullable": True}}
    validator = compile_schema(schema, "inline", said.append)
    assert said == []
    assert validator.is_valid({"a": 1, "b": 2}) and not validator.is_valid({"a": 1})


@pytest.mark.parametrize("fmt", ["iri", "uri-reference", "json-pointer", "duration",
                                 "color", "my-own-format"])
def test_a_format_agent_eval_does_not_check_is_a_problem(fmt: str) -> None:
    """jsonschema lets every value pass a format it has no check for (one it does not know,
    or one whose library is not installed): a schema naming one is refused when loaded."""
    said: list[str] = []
    schema = {"type": "object", "properties": {"p": {"type": "string", "format": fmt}}}
    assert compile_schema(schema, "inline", said.append) is None
    (message,) = said
    assert message.startswith(f"invalid JSON Schema (inline): format '{fmt}' is not one "
                              "agent-eval checks, so every value would pass it; use one of "
                              "date, date-time, email, hostname, ")


def test_a_format_or_pattern_in_data_is_not_a_keyword() -> None:
    """A `format` or `pattern` inside const, enum, default or examples is a value to compare,
    not a keyword: not refused as a format, not compiled as a regex (`(` was a problem)."""
    said: list[str] = []
    value = {"format": "nothing", "pattern": "("}
    schema = {"const": value, "enum": [value, {"format": "x"}],
              "default": {"format": "y", "pattern": "(("}, "examples": [{"format": "z"}]}
    validator = compile_schema(schema, "inline", said.append)
    assert said == [] and validator is not None
    assert validator.is_valid(value) and not validator.is_valid({"format": "x"})


@pytest.mark.parametrize(("fmt", "good", "bad"), [
    ("date-time", "2024-02-29T10:00:00Z", "2024-02-29 yesterday"),
    ("date-time", "2024-02-29T10:00:00+01:00", "2023-02-29T10:00:00Z"),  # no 29 Feb 2023
    ("time", "10:00:00Z", "25:00:00Z"),
    ("uri", "https://example.com/a", "not a uri"),
    ("hostname", "api.example.com", "-bad-.example"),
])
def test_formats_that_need_a_library_are_checked_without_it(
        monkeypatch: pytest.MonkeyPatch, fmt: str, good: str, bad: str) -> None:
    """date-time, time, uri and hostname were checked by jsonschema only where
    rfc3339-validator, rfc3987 or fqdn happened to be installed (date-time and time in a
    developer's environment, none of them in the action's image): elsewhere every value
    passed. They are the policy's own checks now, wherever agent-eval runs."""
    import jsonschema  # type: ignore[import-untyped]

    from agent_eval import saferegex

    bare = jsonschema.FormatChecker(())  # jsonschema in an environment without the libraries
    for name, (check, raises) in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers.items():
        if name not in ("date-time", "time", "uri", "hostname"):
            bare.checks(name, raises)(check)
    monkeypatch.setattr(jsonschema.Draft202012Validator, "FORMAT_CHECKER", bare)
    monkeypatch.setattr(saferegex, "_CHECKERS", {})
    said: list[str] = []
    validator = compile_schema({"format": fmt}, "inline", said.append)
    assert said == [] and validator is not None
    assert validator.is_valid(good) and not validator.is_valid(bad)
    assert validator.is_valid(5)  # a format applies to strings only
