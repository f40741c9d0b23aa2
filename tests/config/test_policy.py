"""A tool's ``arguments:`` map (config/policy.py) against the JSON Schema it stands for.

The map ``{name: {…, required: true}}`` with ``additional_arguments: false`` is the object
schema ``{properties: {name: {…}}, required: [names], additionalProperties: false}``; its
validator (with its generated fast test, schema_compiler "Accepting fast") must give
jsonschema's verdict on every object of arguments.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from agent_eval.config.policy import Policy, compile_policy
from agent_eval.config.schema_compiler import SchemaCompiler
from agent_eval.yamlpos import Positions, load_yaml

ARGUMENTS: dict[str, dict[str, Any]] = {
    "a": {"type": "string", "pattern": "^a", "min_length": 2, "required": True},
    "b": {"enum": ["x", 1, None]},
    "c": {"type": "number", "exclusive_min": 0, "max": 3},
    "d": {"type": "object", "properties": {"e": {"type": "integer"}}, "required": ["e"]},
}
PLAIN = {"min_length": "minLength", "exclusive_min": "exclusiveMinimum", "max": "maximum"}


def as_json_schema(closed: bool) -> dict[str, Any]:
    # an argument's `required: true` is the object's "required" list; a list on an
    # object-typed argument (d) is that object's own, kept as it is
    props = {name: {PLAIN.get(k, k): v for k, v in schema.items()
                    if not (k == "required" and isinstance(v, bool))}
             for name, schema in ARGUMENTS.items()}
    out: dict[str, Any] = {"type": "object", "properties": props, "required": ["a"]}
    if closed:
        out["additionalProperties"] = False
    return out


def policy(closed: bool) -> Policy:
    tool: dict[str, Any] = {"arguments": ARGUMENTS}
    if closed:
        tool["additional_arguments"] = False
    doc = {"version": "1", "tools": {"t": tool}}
    compiler = SchemaCompiler(doc, Positions("p.yaml"))
    compiled = compile_policy(doc, compiler, "p.yaml", "exact")
    assert not compiler.problems
    return compiled


POLICIES = {closed: policy(closed) for closed in (False, True)}
REFERENCE = {closed: Draft202012Validator(as_json_schema(closed)) for closed in (False, True)}
VALUES = (st.none() | st.booleans() | st.integers(-2, 5) | st.sampled_from([0.5, 3.0, 3.5])
          | st.text(alphabet="ax", max_size=3)
          | st.dictionaries(st.sampled_from(["e", "f"]), st.integers(0, 1) | st.just(1.5),
                            max_size=2))
ARGS = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "z"]), VALUES, max_size=5)


@pytest.mark.parametrize("closed", [False, True])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=ARGS)
def test_arguments_verdict_agrees_with_jsonschema(closed: bool, args: dict[str, Any]) -> None:
    errors = POLICIES[closed].rules[0].validate(args)
    assert (errors is None) == REFERENCE[closed].is_valid(args), (args, errors)


@pytest.mark.parametrize(("closed", "args", "rules"), [
    (True, {"a": "ab", "b": 1, "c": 3, "d": {"e": 0}}, []),
    (True, {"a": "ab", "z": 0}, ["args_valid/additional_arguments"]),
    (False, {"a": "ab", "z": 0}, []),
    (False, {"b": True, "c": 0}, ["args_valid/required", "args_valid/enum",
                                  "args_valid/exclusive_minimum"]),
    (False, {"a": "b", "d": {"e": 1.5}}, ["args_valid/pattern", "args_valid/min_length",
                                         "args_valid/type"]),
    (False, {"a": "aa", "d": {}}, ["args_valid/required"]),  # d's own required: [e]
])
def test_arguments_findings(closed: bool, args: dict[str, Any], rules: list[str]) -> None:
    # hand-picked: every value the fast test rejects still gets each of its errors
    errors = POLICIES[closed].rules[0].validate(args) or []
    assert [e.constraint.rule for e in errors] == rules


def compile_text(text: str) -> tuple[Policy, list[str]]:
    """A policy file's text compiled: (the policy, the problems of its schemas)."""
    doc, positions = load_yaml(textwrap.dedent(text), "p.yaml")
    compiler = SchemaCompiler(doc, positions)
    return compile_policy(doc, compiler, "p.yaml", "exact"), compiler.problems


CYCLE = ("refers back to itself without descending into a property or an item; reach it "
         "again only under 'properties', 'items' or the like, or remove this $ref")


@pytest.mark.parametrize(("text", "problems"), [
    # the security review's case: validate said the policy was fine, and run crashed
    # (RecursionError) on the first call of t: an argument's path ends under 'arguments',
    # so compiling the $ref's target was taken as a step into a member of the value
    ("""\
        version: "1"
        tools:
          t:
            arguments:
              u: {$ref: "#/tools/t/arguments/u"}
        """, ["p.yaml:5:11: '#/tools/t/arguments/u' " + CYCLE]),
    # to an ancestor, through a keyword on the same value
    ("""\
        tools:
          t:
            arguments:
              u: {anyOf: [{type: string}, {$ref: "#/tools/t/arguments/u"}]}
        """, ["p.yaml:4:36: '#/tools/t/arguments/u' " + CYCLE]),
    # from an argument to the tool's schema: and back
    ("""\
        tools:
          t:
            arguments:
              u: {$ref: "#/tools/t/schema/properties/v"}
            schema:
              properties:
                v: {$ref: "#/tools/t/arguments/u"}
        """, ["p.yaml:4:11: '#/tools/t/schema/properties/v' " + CYCLE]),
    # from one tool to another's argument, which leads back
    ("""\
        $defs:
          d: {allOf: [{$ref: "#/tools/b/arguments/x"}]}
        tools:
          a:
            schema: {$ref: "#/$defs/d"}
          b:
            arguments:
              x: {not: {$ref: "#/$defs/d"}}
        """, ["p.yaml:8:17: '#/$defs/d' " + CYCLE]),
])
def test_a_ref_cycle_on_the_same_value_is_a_problem_at_its_ref(text: str,
                                                                problems: list[str]) -> None:
    assert compile_text(text)[1] == problems


def test_an_argument_may_refer_to_itself_under_items() -> None:
    policy, problems = compile_text("""\
        tools:
          t:
            arguments:
              u: {type: array, items: {$ref: "#/tools/t/arguments/u"}}
        """)
    assert problems == []
    validate = policy.rules[0].validate
    assert validate({"u": [[], [[]]]}) is None
    assert [(e.constraint.rule, e.path) for e in validate({"u": [[1]]}) or []] == [
        ("args_valid/type", ("u", 0, 0))]
