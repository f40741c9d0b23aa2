"""$ref cycles, over small generated schemas: the policy compiler (schema_compiler.py) and
the JSON Schemas of scenarios, probes and tool_results (schema_files.py) report a cycle of
references that never consumes any of the value exactly when there is one (a plain
recursive reading of the schema, below, decides), and a schema without one validates as
jsonschema does, without end or RecursionError.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from agent_eval.config.schema_compiler import SchemaCompiler
from agent_eval.config.schema_files import compile_schema
from agent_eval.yamlpos import Positions

CYCLE = "refers back to itself without descending into a property or an item"
DEFS = ("a", "b", "c")
REFS = st.sampled_from(["#", *(f"#/$defs/{d}" for d in DEFS)]).map(lambda r: {"$ref": r})
LEAVES = st.sampled_from([{"type": "string"}, {"type": "array"}, {"type": "object"},
                          {"minimum": 1}, True]) | REFS | REFS  # a ref in half the leaves


def _wrapped(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    some = st.lists(inner, min_size=1, max_size=2)
    return st.one_of(
        # on the same value
        some.map(lambda xs: {"allOf": xs}),
        some.map(lambda xs: {"anyOf": xs}),
        some.map(lambda xs: {"oneOf": xs}),
        inner.map(lambda x: {"not": x}),
        st.tuples(inner, inner).map(lambda t: {"if": t[0], "then": t[1]}),
        inner.map(lambda x: {"then": x}),  # no effect without if
        inner.map(lambda x: {"dependentSchemas": {"k": x}}),
        st.tuples(REFS, inner).map(lambda t: {**(t[1] if isinstance(t[1], dict) else {}),
                                              **t[0]}),  # a $ref beside other keywords
        # on a member or an item
        inner.map(lambda x: {"properties": {"k": x}}),
        inner.map(lambda x: {"items": x}),
        inner.map(lambda x: {"additionalProperties": x}),
    )


SCHEMAS = st.recursive(LEAVES, _wrapped, max_leaves=5)
DOCS = st.tuples(SCHEMAS, SCHEMAS, SCHEMAS, SCHEMAS).map(lambda t: {
    **(t[0] if isinstance(t[0], dict) else {}), "$defs": dict(zip(DEFS, t[1:], strict=True))})
VALUES: list[Any] = [None, 1, 0, "s", [], [1], [[]], ["s", [0]], {}, {"k": 1}, {"k": []},
          {"k": {"k": "s"}}, {"z": [1, "s"]}, {"k": [[1]], "z": {}}]

# -- the plain reading: which schemas are reached, and which reach themselves in place
SAME_VALUE_LISTS = ("allOf", "anyOf", "oneOf")
PARTS = ("properties", "items", "additionalProperties")


def _target(ref: str) -> str:
    return "" if ref == "#" else ref.rsplit("/", 1)[1]


def _node(doc: dict[str, Any], target: str) -> Any:
    return doc if target == "" else doc["$defs"][target]


def _refs(schema: Any, same_value_only: bool, lone_then: bool = False) -> set[str]:
    """The targets of the $refs in ``schema`` (only those applying to the same value; with
    ``lone_then``, those under a then without if too: the policy compiler checks it)."""
    if not isinstance(schema, dict):
        return set()
    found = {_target(schema["$ref"])} if "$ref" in schema else set()
    subs: list[Any] = [x for k in SAME_VALUE_LISTS for x in schema.get(k, [])]
    subs += [schema[k] for k in ("not", "if") if k in schema]
    subs += [schema["then"]] if "then" in schema and "if" in schema else []
    subs += list(schema.get("dependentSchemas", {}).values())
    if not same_value_only:
        subs += [schema["then"]] if "then" in schema and "if" not in schema and lone_then else []
        subs += list(schema.get("properties", {}).values())
        subs += [schema[k] for k in ("items", "additionalProperties") if k in schema]
    for sub in subs:
        found |= _refs(sub, same_value_only, lone_then)
    return found


def has_cycle(doc: dict[str, Any], lone_then: bool) -> bool:
    reached: set[str] = set()
    todo = list(_refs(doc, False, lone_then))
    while todo:
        t = todo.pop()
        if t not in reached:
            reached.add(t)
            todo += _refs(_node(doc, t), False, lone_then)

    def comes_back(start: str) -> bool:
        seen: set[str] = set()
        todo = list(_refs(_node(doc, start), True))
        while todo:
            t = todo.pop()
            if t == start:
                return True
            if t not in seen:
                seen.add(t)
                todo += _refs(_node(doc, t), True)
        return False

    return any(comes_back(t) for t in reached)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=DOCS)
def test_the_policy_compiler_reports_exactly_the_cycles(doc: dict[str, Any]) -> None:
    compiler = SchemaCompiler(doc, Positions("p.json"))
    validate = compiler.compile_root(doc, ())
    # a then without if (of a schema the document applies) is a config error of its own:
    # it checked nothing; what it holds is still compiled, its cycles said
    cycles = [p for p in compiler.problems if CYCLE in p]
    lone = [p for p in compiler.problems if CYCLE not in p]
    assert all("'then' has no effect without 'if'" in p for p in lone), lone
    assert bool(cycles) == has_cycle(doc, lone_then=True), compiler.problems
    if not compiler.problems:
        reference = Draft202012Validator(doc)
        for value in VALUES:
            assert (validate(value) is None) == reference.is_valid(value), value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=DOCS)
def test_json_schemas_of_outputs_report_exactly_the_cycles(doc: dict[str, Any]) -> None:
    said: list[str] = []
    validator = compile_schema(doc, "inline", said.append)
    # a then without if is a problem of its own (it checked nothing), as in a policy
    cycles = [p for p in said if CYCLE in p]
    lone = [p for p in said if CYCLE not in p]
    assert all("'then' at " in p and "has no effect without 'if'" in p for p in lone), lone
    assert bool(cycles) == has_cycle(doc, lone_then=False), said
    assert bool(said) == (validator is None), said
    if validator is not None:
        for value in VALUES:
            validator.is_valid(value)  # ends, without RecursionError
