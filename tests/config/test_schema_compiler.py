"""The policy schema compiler (docs/config.md "args_valid and the policy file").

Every keyword: valid values pass (the validator returns None), invalid ones give the
rule id ``args_valid/<snake_case keyword>``, the instance path and the exact line and
column of the violated keyword in the YAML written here. Lines and columns below were
counted by hand in the YAML literals (line 1 is the literal's first line, column 1 its
first character). Then configuration errors, then a Hypothesis cross-check against
``jsonschema.Draft202012Validator``.
"""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from agent_eval.config.schema_compiler import (
    MAX_MEMBERS,
    MAX_SCHEMA_DEPTH,
    SchemaCompiler,
    SchemaError,
    Validator,
)
from agent_eval.errors import ConfigError
from agent_eval.yamlpos import Positions, load_yaml

FILE = "policies/p.yaml"
Where = tuple[str, tuple[str | int, ...], int, int]  # rule, instance path, line, column


def compile_yaml(text: str) -> Validator:
    """Compile a YAML schema document (as a tool's full ``schema:``); its problems (all
    of them) are raised as one ConfigError."""
    data, positions = load_yaml(textwrap.dedent(text), FILE)
    return compile_checked(data, positions)


def compile_checked(data: Any, positions: Positions) -> Validator:
    compiler = SchemaCompiler(data, positions)
    validator = compiler.compile_root(data, ())
    if compiler.problems:
        raise ConfigError(compiler.problems)
    return validator


def where(errors: list[SchemaError] | None) -> list[Where]:
    assert errors, "expected errors, got none"
    return [(e.constraint.rule, e.path, e.constraint.line, e.constraint.col) for e in errors]


def one(errors: list[SchemaError] | None) -> SchemaError:
    assert errors is not None and len(errors) == 1, errors
    return errors[0]


def check(text: str, valid: Sequence[Any],
          invalid: Sequence[tuple[Any, Sequence[Where]]]) -> Validator:
    v = compile_yaml(text)
    for value in valid:
        assert v(value) is None, f"{value!r} should be valid: {v(value)}"
    for value, expected in invalid:
        assert where(v(value)) == list(expected), f"{value!r}"
    return v


def config_error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        compile_yaml(text)
    assert len(info.value.problems) == 1
    return info.value.problems[0]


# ------------------------------------------------------------------------------- type
def test_type_integer_accepts_whole_floats_not_bools() -> None:
    check("type: integer\n",
          valid=[0, -5, 1.0, 2.0, 10**18],
          invalid=[(1.5, [("args_valid/type", (), 1, 1)]),
                   (True, [("args_valid/type", (), 1, 1)]),
                   ("1", [("args_valid/type", (), 1, 1)]),
                   (None, [("args_valid/type", (), 1, 1)])])


def test_type_number_is_not_bool() -> None:
    v = check("type: number\n",
              valid=[0, 1.5, -0.0, 10**20],
              invalid=[(True, [("args_valid/type", (), 1, 1)]),
                       (False, [("args_valid/type", (), 1, 1)]),
                       ("50", [("args_valid/type", (), 1, 1)]),
                       ([], [("args_valid/type", (), 1, 1)])])
    e = one(v(True))
    assert e.constraint.text == "type: number"
    assert e.message == "Expected number, got boolean"
    assert e.value is True


def test_type_boolean_is_not_number() -> None:
    check("type: boolean\n", valid=[True, False],
          invalid=[(0, [("args_valid/type", (), 1, 1)]), (1, [("args_valid/type", (), 1, 1)])])


def test_type_other_names_and_lists() -> None:
    check("type: object\n", valid=[{}, {"a": 1}], invalid=[([], [("args_valid/type", (), 1, 1)])])
    check("type: array\n", valid=[[], [1]], invalid=[({}, [("args_valid/type", (), 1, 1)])])
    check("type: 'null'\n", valid=[None], invalid=[(0, [("args_valid/type", (), 1, 1)])])
    check("type: string\n", valid=[""], invalid=[(1, [("args_valid/type", (), 1, 1)])])
    v = check("type: [string, 'null']\n", valid=["x", None],
              invalid=[(1, [("args_valid/type", (), 1, 1)])])
    # 'null' is a string here (quoted in the YAML), so the text quotes it too
    assert one(v(1)).constraint.text == "type: [string, 'null']"


def test_type_in_nested_property_points_at_its_column() -> None:
    text = """\
        type: object
        properties:
          payee:
            type: object
            properties:
              iban: {type: string}
        """
    # line 6 is "      iban: {type: string}": 'iban' at col 7, '{' at 13, 'type' at 14
    check(text, valid=[{"payee": {"iban": "DE00"}}, {}],
          invalid=[({"payee": {"iban": 5}}, [("args_valid/type", ("payee", "iban"), 6, 14)]),
                   ({"payee": 1}, [("args_valid/type", ("payee",), 4, 5)])])


# ------------------------------------------------------------------------- enum/const
def test_enum_uses_json_equality() -> None:
    text = "enum: [1, a, null, [1, 2], {k: true}]\n"
    bad = [("args_valid/enum", (), 1, 1)]
    v = check(text,
              valid=[1, 1.0, "a", None, [1, 2], [1.0, 2], {"k": True}],
              invalid=[(True, bad), ("1", bad), ([2, 1], bad), ({"k": 1}, bad),
                       ([True, 2], bad), ("A", bad)])
    assert one(v(True)).constraint.text == "enum: [1, a, null, [1, 2], {k: true}]"


def test_enum_true_and_zero_are_not_numbers() -> None:
    bad = [("args_valid/enum", (), 1, 1)]
    check("enum: [true]\n", valid=[True], invalid=[(1, bad), (1.0, bad)])
    check("enum: [0]\n", valid=[0, 0.0, -0.0], invalid=[(False, bad), (None, bad)])


def test_enum_renders_strings_that_look_like_numbers_quoted() -> None:
    v = compile_yaml('enum: ["1", "true", USD]\n')
    e = one(v(1))
    # "1" and "true" are strings; shown bare they would read as a number and a boolean.
    assert e.constraint.text == "enum: ['1', 'true', USD]"


def test_const_json_equality() -> None:
    bad = [("args_valid/const", (), 1, 1)]
    check("const: 1\n", valid=[1, 1.0], invalid=[(True, bad), ("1", bad), ([1], bad)])
    check("const: false\n", valid=[False], invalid=[(0, bad), (0.0, bad), (None, bad)])
    check("const: {a: [1, 2]}\n", valid=[{"a": [1.0, 2]}],
          invalid=[({"a": [1, 2], "b": 1}, bad), ({"a": [2, 1]}, bad)])
    v = compile_yaml("const: '30'\n")
    assert one(v(30)).constraint.text == "const: '30'"


def test_enum_and_const_written_as_yaml11_boolean_words_are_config_errors() -> None:
    # YAML 1.1 reads off as false: `not: {enum: [off]}` let the text "off" through
    assert config_error("not: {enum: [off, x]}\n") == (
        "policies/p.yaml:1:14: 'off' is read by YAML as the boolean false, not as the text "
        "'off'; quote it (\"off\") to compare with the text, or write false for the boolean")
    assert config_error("const: Yes\n") == (
        "policies/p.yaml:1:8: 'Yes' is read by YAML as the boolean true, not as the text "
        "'Yes'; quote it (\"Yes\") to compare with the text, or write true for the boolean")
    bad = [("args_valid/not", (), 1, 1)]
    check("not: {enum: ['off', true]}\n", valid=["on", False], invalid=[("off", bad),
                                                                        (True, bad)])


# ------------------------------------------------------------------------------ bounds
BOUNDS = """\
    type: object
    properties:
      a: {maximum: 30}
      b: {max: 30}
      c: {minimum: 0.01}
      d: {min: 0}
      e: {exclusiveMaximum: 30}
      f: {exclusive_max: 30}
      g: {exclusiveMinimum: 0}
      h: {exclusive_min: 0}
    """


@pytest.mark.parametrize(("name", "rule", "text", "ok", "bad"), [
    # each property's keyword is at line 3..10, column 7 ("  a: {" is 6 characters)
    ("a", "maximum", "maximum: 30", [30, 29.5, -1], [30.5, 31, 50]),
    ("b", "maximum", "max: 30", [30, 30.0], [30.000001, 1e9]),
    ("c", "minimum", "minimum: 0.01", [0.01, 1], [0.009, 0, -5]),
    ("d", "minimum", "min: 0", [0, 0.0, 3], [-0.5, -1]),
    ("e", "exclusive_maximum", "exclusiveMaximum: 30", [29.999, -4], [30, 30.0, 31]),
    ("f", "exclusive_maximum", "exclusive_max: 30", [29], [30, 100]),
    ("g", "exclusive_minimum", "exclusiveMinimum: 0", [1e-9, 5], [0, -1, 0.0]),
    ("h", "exclusive_minimum", "exclusive_min: 0", [1], [0, -0.0]),
])
def test_numeric_bounds(name: str, rule: str, text: str, ok: list[float],
                        bad: list[float]) -> None:
    line = 3 + "abcdefgh".index(name)
    v = compile_yaml(BOUNDS)
    for value in ok:
        assert v({name: value}) is None, value
    # Non-numbers are left to `type`: a string "50", a bool, null pass the bound.
    for other in ("50", True, None, [99]):
        assert v({name: other}) is None, other
    for value in bad:
        e = one(v({name: value}))
        assert where([e]) == [(f"args_valid/{rule}", (name,), line, 7)]
        assert e.constraint.text == text  # as written, sugar included
        assert e.constraint.key_path == f"properties.{name}.{text.split(':')[0]}"
        assert e.value == value


def test_multiple_of_float_step_uses_relative_tolerance() -> None:
    bad = [("args_valid/multiple_of", (), 1, 1)]
    check("multipleOf: 0.01\n",
          # 19.99 / 0.01 and 0.3 / 0.01 are not whole in binary floating point, but within
          # the engine's relative tolerance of 1e-9; 1e308 / 0.01 overflows to infinity
          # and is decided exactly on the decimals (1e308 = 10**308 is a multiple of 0.01).
          valid=[19.99, 0.3, 10, 0, -4.5, 1e308, 123456.78],
          invalid=[(0.001, bad), (19.995, bad), (1e-10, bad)])


def test_multiple_of_integer_step() -> None:
    bad = [("args_valid/multiple_of", (), 1, 1)]
    v = check("multipleOf: 3\n", valid=[9, -3, 0, 9.0, 3e20, 2**70 * 3, True, "4"],
              # 1e-10 is not a multiple of 3: the tolerance is relative to the quotient
              invalid=[(10, bad), (9.5, bad), (1e-10, bad), (2**70 * 3 + 1, bad)])
    assert one(v(10)).message == "Value is not a multiple of 3"


def test_multiple_of_one_rejects_tiny_fractions() -> None:
    check("multipleOf: 1\n", valid=[0, 5, 5.0],
          invalid=[(1e-10, [("args_valid/multiple_of", (), 1, 1)]),
                   (5.5, [("args_valid/multiple_of", (), 1, 1)])])


def test_multiple_of_float_step_with_an_integer_beyond_the_float_range() -> None:
    # a YAML trace may hold an integer of 400 digits: 10**400 / 0.5 overflows, and the
    # check of the value's own finiteness raised OverflowError (an internal error)
    bad = [("args_valid/multiple_of", (), 1, 1)]
    check("multipleOf: 0.5\n", valid=[10**400, -(10**400) - 1], invalid=[])
    # 10**400 / 0.3 = 10**401 / 3, not whole; 3 * 10**399 / 0.3 = 10**400
    check("multipleOf: 0.3\n", valid=[3 * 10**399], invalid=[(10**400, bad)])


# ------------------------------------------------------------------------------ strings
def test_min_and_max_length_count_code_points() -> None:
    text = """\
        minLength: 2
        max_length: 3
        """
    v = check(text,
              # "😀😀😀" is 3 code points (6 UTF-16 units); "日本" is 2
              valid=["ab", "abc", "日本", "😀😀😀", 5, ["a"]],
              invalid=[("a", [("args_valid/min_length", (), 1, 1)]),
                       ("", [("args_valid/min_length", (), 1, 1)]),
                       ("abcd", [("args_valid/max_length", (), 2, 1)]),
                       ("😀😀😀😀", [("args_valid/max_length", (), 2, 1)])])
    assert one(v("abcd")).constraint.text == "max_length: 3"


def test_pattern_is_a_search() -> None:
    bad = [("args_valid/pattern", (), 1, 1)]
    v = check('pattern: "[0-9]{3}"\n', valid=["abc123def", "123", 123, None],
              invalid=[("12a3", bad), ("", bad)])
    # unquoted, [0-9]{3} would read as a YAML list: shown quoted, as it must be written
    assert one(v("x")).constraint.text == "pattern: '[0-9]{3}'"
    v = compile_yaml("pattern: '^[A-Z]{4}\\d{2}$'\n")
    # { and } are YAML flow indicators: quoted, too
    assert one(v("x")).constraint.text == "pattern: '^[A-Z]{4}\\d{2}$'"
    v = compile_yaml("pattern: ^A-\\d+$\n")
    assert one(v("x")).constraint.text == "pattern: ^A-\\d+$"
    check("pattern: '^A-\\d{6}$'\n", valid=["A-123456"],
          invalid=[("xA-123456", bad), ("A-1234567", bad)])


@pytest.mark.parametrize(("pattern", "valid", "invalid"), [
    # ECMA-262 `$` is the very end: a trailing newline does not slip through (Python's `$`
    # also matches before a final "\n")
    (r"^A-\d{6}$", ["A-123456"], ["A-123456\n", "A-1234567"]),
    # `\d` and `\w` are ASCII in ECMA-262: Arabic-Indic digits and "é" are not in them
    (r"^A-\d{6}$", [], ["A-١٢٣٤٥٦"]),
    (r"^\w+$", ["abc_9"], ["café", "a-b"]),
    # ECMA `\b` is an ASCII word boundary: "é" is not a word character, so "écat" matches
    (r"\bcat\b", ["a cat", "écat"], ["cats", "bobcat"]),
    # `\s` is ECMA-262 whitespace, Unicode spaces included; `\S` its complement
    (r"^a\sb$", ["a b", "a\u00a0b", "a\u2028b", "a\tb"], ["ab", "a_b"]),
    (r"^\S+$", ["abc"], ["a\u00a0b", "a\u3000b"]),
    (r"^[\sx]+$", ["x\u2028 x"], ["xy"]),
    (r"^[^\s]+$", ["xy"], ["x\u00a0"]),
    # escaped and bracketed `$` are literal; `]` first in a class is literal (as in Python)
    (r"^\$\d+$", ["$12"], ["$12\n", "12"]),
    (r"^[$]$", ["$"], ["", "$$"]),
    (r"^[]a]+$", ["]a]"], ["b"]),
    (r"^[^]a]$", ["b"], ["]", "a"]),
    # (?:...) groups and alternations with `$` inside
    (r"^(?:yes$|no)", ["yes", "no", "none"], ["yes\n", "yesno"]),
])
def test_pattern_follows_ecma_262(pattern: str, valid: list[str], invalid: list[str]) -> None:
    v = compile_yaml(f"pattern: '{pattern}'\n")
    for s in valid:
        assert v(s) is None, f"{pattern}: {s!r} should match"
    for s in invalid:
        assert where(v(s)) == [("args_valid/pattern", (), 1, 1)], f"{pattern}: {s!r}"


def test_pattern_properties_keys_follow_ecma_262() -> None:
    text = """\
        patternProperties:
          "^x$": {type: integer}
        additionalProperties: false
        """
    # "x\n" is not matched by ^x$: it is an additional property
    check(text, valid=[{"x": 1}],
          invalid=[({"x\n": 1}, [("args_valid/additional_properties", ("x\n",), 3, 1)])])


FORMAT_SAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "date-time": (
        ["1963-06-19T08:30:06.283185Z", "1963-06-19t08:30:06z", "2024-02-29T23:59:59+05:30",
         "1998-12-31T23:59:60Z", "1998-12-31T15:59:60.123-08:00"],
        ["1963-06-19T08:30:06", "1990-02-31T15:59:59-08:00", "2024-13-01T00:00:00Z",
         "1998-12-31T23:59:61Z", "1998-12-31T22:59:60Z", "1990-12-31T15:59:59-24:00",
         "1963-06-19T08:30:06Z\n", "1963-06-1৪T08:30:06Z", "2013-350T01:01:01", "tomorrow",
         # RFC 3339's date-time has a T (jsonschema's check too), not a space
         "1963-06-19 08:30:06Z"],
    ),
    "date": (
        ["1963-06-19", "2020-02-29"],
        ["2021-02-29", "2020-01-32", "1998-1-20", "20230328", "2023-W01", "1963-06-1৪",
         "1963-06-19\n", "06/19/1963"],
    ),
    "time": (
        ["08:30:06Z", "23:20:50.52Z", "08:30:06+00:20", "08:30:06z", "23:59:60Z",
         "01:29:60+01:30", "15:59:60-08:00"],
        ["12:00:00", "24:00:00Z", "01:02:03+24:00", "22:59:60Z", "23:58:60Z",
         "23:59:60+01:00", "1২:00:00Z", "08:30:06Z\n", "8:3:6Z"],
    ),
    "email": (
        ["joe.bloggs@example.com", "te~st@example.com", "te.s.t@example.com",
         "a+tag@sub.example.org"],
        ["2962", ".test@example.com", "test.@example.com", "te..st@example.com",
         "joe@invalid=domain.com", "a@b@c.com", "joe@example.com\n", "joe bloggs@example.com"],
    ),
    "uri": (
        ["http://foo.bar/?baz=qux#quux", "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
         "mailto:John.Doe@example.com"],
        ["//foo.bar/?baz=qux", "/abc", "abc", "http:// shouldfail.com", "bar,baz:foo",
         "http://x.org\n"],
    ),
    "uuid": (
        ["2EB8AA08-AA98-11EA-B4AA-73B441D16380", "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
         "00000000-0000-0000-0000-000000000000"],
        ["2eb8aa08aa9811eab4aa73b441d16380", "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
         "2eb8-aa08-aa98-11ea-b4aa73b44-1d16380", "2eb8aa08-aa98-11ea-b4aa-73b441d1638g",
         "2eb8aa08-aa98-11ea-b4aa-73b441d16380\n"],
    ),
    "ipv4": (
        ["192.168.0.1", "0.0.0.0", "255.255.255.255"],
        ["256.0.0.1", "087.10.0.1", "1.2.3", "192.168.1.0/24", "১২৭.0.0.1", "1.2.3.4\n"],
    ),
    "ipv6": (
        ["::1", "fe80::a", "1:2:3:4:5:6:7:8", "::ffff:192.168.0.1"],
        ["12345::", "fe80::a%eth1", "fe80::/64", " ::1", "1:2:3:4:5:6:7:৪", "::1\n", "1:2"],
    ),
    "hostname": (
        ["example.com", "host-name", "1host", "a", "example.com.", "xn--bcher-kva.example"],
        ["-a.com", "a-.com", "not_a_valid_host_name", "", ".", "a" * 64 + ".com",
         "ex\u0430mple.com", "example.com\n", "a..b"],
    ),
}


@pytest.mark.parametrize("fmt", sorted(FORMAT_SAMPLES))
def test_format(fmt: str) -> None:
    valid, invalid = FORMAT_SAMPLES[fmt]
    text = f"""\
        type: object
        properties:
          v: {{type: string, format: {fmt}}}
        """
    # line 3 "  v: {type: string, format: …}": '{' at col 6, 'type' at 7, 'format' at 21
    v = compile_yaml(text)
    for s in valid:
        assert v({"v": s}) is None, f"{fmt}: {s!r} should be valid"
    for s in invalid:
        e = one(v({"v": s}))
        assert where([e]) == [("args_valid/format", ("v",), 3, 21)], f"{fmt}: {s!r}"
        assert e.constraint.text == f"format: {fmt}"
        assert e.message == f"String is not a valid {fmt}"


def test_format_ignores_non_strings() -> None:
    v = compile_yaml("format: email\n")
    for value in (5, None, ["a@b"], {"a": 1}):
        assert v(value) is None


# ------------------------------------------------------------------------------ objects
def test_required_list_points_at_the_missing_name() -> None:
    flow = """\
        type: object
        required: [amount, currency]
        """
    # "required: [amount, currency]": '[' at col 11, amount at 12, currency at 20
    v = check(flow, valid=[{"amount": 1, "currency": None}],
              invalid=[({"amount": 1}, [("args_valid/required", ("currency",), 2, 20)]),
                       ({}, [("args_valid/required", ("amount",), 2, 12),
                             ("args_valid/required", ("currency",), 2, 20)])])
    e = one(v({"amount": 1}))
    assert e.missing is True
    assert e.constraint.text == "required: [amount, currency]"
    # not an object: nothing is required of it
    assert compile_yaml("required: [a]\n")([]) is None
    assert compile_yaml("required: [a]\n")("a") is None
    block = """\
        required:
          - amount
          - currency
        """
    check(block, valid=[{"amount": 0, "currency": "EUR"}],
          invalid=[({"amount": 0}, [("args_valid/required", ("currency",), 3, 5)])])


def test_required_true_sugar_on_a_property() -> None:
    text = """\
        type: object
        properties:
          order_id:
            type: string
            required: true
          note: {type: string, required: false}
        """
    v = check(text, valid=[{"order_id": "A-1"}, {"order_id": "A-1", "note": "x"}],
              invalid=[({}, [("args_valid/required", ("order_id",), 5, 5)]),
                       ({"note": "x"}, [("args_valid/required", ("order_id",), 5, 5)]),
                       ({"order_id": 1}, [("args_valid/type", ("order_id",), 4, 5)])])
    e = one(v({}))
    assert e.missing and e.constraint.text == "required: true"
    assert e.constraint.key_path == "properties.order_id.required"


def test_properties_pattern_properties_additional_false() -> None:
    text = """\
        type: object
        properties:
          name: {type: string}
        patternProperties:
          "^x-": {type: integer}
        additionalProperties: false
        """
    # line 3: '{' col 9, 'type' col 10; line 5: '"^x-"' is cols 3-7, '{' col 10, 'type' 11
    v = check(text, valid=[{}, {"name": "a", "x-n": 1, "x-": 2.0}],
              invalid=[({"name": 1}, [("args_valid/type", ("name",), 3, 10)]),
                       ({"x-n": "s"}, [("args_valid/type", ("x-n",), 5, 11)]),
                       ({"other": 1, "ax-": 2},
                        [("args_valid/additional_properties", ("other",), 6, 1),
                         ("args_valid/additional_properties", ("ax-",), 6, 1)])])
    e = v({"other": [1]})
    assert one(e).value == [1] and one(e).constraint.text == "additionalProperties: false"


def test_pattern_properties_is_a_search_and_additional_properties_a_schema() -> None:
    text = """\
        type: object
        properties:
          a: {}
        patternProperties:
          x: {minimum: 0}
        additionalProperties: {type: string}
        """
    # line 5 "  x: {minimum: 0}": minimum at col 7; line 6: '{' col 23, 'type' col 24
    check(text, valid=[{"a": 1, "b": "x", "axb": 5}],
          invalid=[({"b": 2}, [("args_valid/type", ("b",), 6, 24)]),
                   ({"axb": -1}, [("args_valid/minimum", ("axb",), 5, 7)])])


def test_property_names() -> None:
    text = 'propertyNames: {pattern: "^[a-z_]+$", maxLength: 5}\n'
    v = check(text, valid=[{"ab_c": 1}, {}, "Bad"],
              invalid=[({"Bad": 1}, [("args_valid/property_names", ("Bad",), 1, 1)]),
                       ({"ok": 1, "too_long": 2},
                        [("args_valid/property_names", ("too_long",), 1, 1)])])
    assert one(v({"Bad": 1})).value == "Bad"


def test_min_and_max_properties() -> None:
    text = """\
        minProperties: 1
        maxProperties: 2
        """
    check(text, valid=[{"a": 1}, {"a": 1, "b": 2}, [], "x"],
          invalid=[({}, [("args_valid/min_properties", (), 1, 1)]),
                   ({"a": 1, "b": 2, "c": 3}, [("args_valid/max_properties", (), 2, 1)])])


def test_dependent_required_points_at_the_dependency() -> None:
    text = """\
        dependentRequired:
          credit_card: [billing_address, cvc]
        """
    v = check(text, valid=[{}, {"billing_address": 1}, {"credit_card": 1, "cvc": 2,
                                                       "billing_address": 3}],
              invalid=[({"credit_card": 1, "cvc": 2},
                        [("args_valid/dependent_required", ("billing_address",), 2, 3)]),
                       ({"credit_card": 1},
                        [("args_valid/dependent_required", ("billing_address",), 2, 3),
                         ("args_valid/dependent_required", ("cvc",), 2, 3)])])
    e = one(v({"credit_card": 1, "cvc": 2}))
    assert e.missing and e.constraint.text == "credit_card: [billing_address, cvc]"


def test_dependent_schemas() -> None:
    text = """\
        dependentSchemas:
          credit_card:
            required: [billing_address]
            properties:
              amount: {maximum: 10}
        """
    # line 3: '[' col 15, billing_address col 16; line 5: maximum at col 16
    check(text, valid=[{}, {"amount": 50}, {"credit_card": 1, "billing_address": "x"}],
          invalid=[({"credit_card": 1}, [("args_valid/required", ("billing_address",), 3, 16)]),
                   ({"credit_card": 1, "billing_address": "x", "amount": 11},
                    [("args_valid/maximum", ("amount",), 5, 16)])])


# ------------------------------------------------------------------------------- arrays
def test_prefix_items_and_items_false() -> None:
    text = """\
        type: array
        prefixItems:
          - {type: string}
          - {type: integer}
        items: false
        """
    # lines 3-4 "  - {type: …}": '{' col 5, 'type' col 6
    check(text, valid=[[], ["a"], ["a", 1]],
          invalid=[([1], [("args_valid/type", (0,), 3, 6)]),
                   (["a", "b"], [("args_valid/type", (1,), 4, 6)]),
                   (["a", 1, True, None], [("args_valid/false_schema", (2,), 5, 1),
                                           ("args_valid/false_schema", (3,), 5, 1)])])


def test_items_schema_and_sugar_item_counts() -> None:
    text = """\
        type: array
        items: {type: integer, maximum: 5}
        min_items: 1
        maxItems: 3
        """
    # line 2: '{' col 8, 'type' col 9, 'maximum' col 24
    v = check(text, valid=[[1], [5, 5, -1]],
              invalid=[([1, 2, 9], [("args_valid/maximum", (2,), 2, 24)]),
                       ([1.5], [("args_valid/type", (0,), 2, 9)]),
                       ([], [("args_valid/min_items", (), 3, 1)]),
                       ([1, 2, 3, 4], [("args_valid/max_items", (), 4, 1)])])
    assert one(v([])).constraint.text == "min_items: 1"


def test_contains() -> None:
    text = """\
        type: array
        contains: {const: admin}
        """
    v = check(text, valid=[["a", "admin"], ["admin"]],
              invalid=[(["a"], [("args_valid/contains", (), 2, 1)]),
                       ([], [("args_valid/contains", (), 2, 1)])])
    assert one(v([])).constraint.text == "contains: {const: admin}"


def test_min_and_max_contains() -> None:
    text = """\
        contains: {type: integer}
        minContains: 2
        maxContains: 3
        """
    bad = [("args_valid/contains", (), 1, 1)]
    v = check(text, valid=[[1, "a", 2], [1, 2, 3], "x"],
              invalid=[([1], bad), ([1, 2, 3, 4], bad), (["a", "b"], bad)])
    assert one(v([1])).constraint.text == "contains: {type: integer}, minContains: 2, " \
        "maxContains: 3"
    check("contains: {type: integer}\nminContains: 0\n", valid=[[], ["a"]], invalid=[])


def test_unique_items_json_equality() -> None:
    bad1 = [("args_valid/unique_items", (1,), 1, 1)]
    check("uniqueItems: true\n",
          valid=[[], [1, "1", True], [0, False], [[1], [True]], [{"a": 1}, {"a": 2}],
                 [None, False, 0, ""]],
          invalid=[([1, 1.0], bad1),
                   ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], bad1),
                   ([[1, 2], [1.0, 2]], bad1),
                   (["x", "y", "x"], [("args_valid/unique_items", (2,), 1, 1)])])
    check("uniqueItems: false\n", valid=[[1, 1]], invalid=[])


# -------------------------------------------------------------------------- combinators
def test_all_of_reports_each_failed_member() -> None:
    text = """\
        allOf:
          - {type: integer}
          - {minimum: 3}
        """
    check(text, valid=[3, 10],
          invalid=[(2, [("args_valid/minimum", (), 3, 6)]),
                   (2.5, [("args_valid/type", (), 2, 6), ("args_valid/minimum", (), 3, 6)])])


def test_any_of_lists_why_each_alternative_failed() -> None:
    text = """\
        anyOf:
          - {type: string}
          - {type: integer, minimum: 10}
        """
    v = check(text, valid=["x", 12, 10.0],
              invalid=[(5, [("args_valid/any_of", (), 1, 1)]),
                       (1.5, [("args_valid/any_of", (), 1, 1)])])
    e = one(v(5))
    assert e.constraint.text == "anyOf: 2 alternatives"
    assert e.message == ("Value matches none of the 2 alternatives (#1: Expected string, got "
                         "integer (type: string); #2: Value is below minimum (minimum: 10))")


def test_one_of_names_the_matching_alternatives() -> None:
    text = """\
        oneOf:
          - {type: integer}
          - {minimum: 10}
        """
    v = check(text, valid=[5, 10.5],
              invalid=[(12, [("args_valid/one_of", (), 1, 1)]),
                       (2.5, [("args_valid/one_of", (), 1, 1)])])
    assert one(v(12)).message.endswith("it matches 2 (#1, #2)")
    assert one(v(2.5)).message.endswith("it matches none")


def test_not() -> None:
    check("not: {enum: [root, admin]}\n", valid=["bob", 1],
          invalid=[("root", [("args_valid/not", (), 1, 1)])])


def test_if_then_else() -> None:
    text = """\
        if:
          properties:
            country: {const: US}
        then:
          required: [zip]
        else:
          required: [postcode]
        """
    # lines 5 and 7 "  required: [x]": '[' col 13, the name at col 14
    check(text, valid=[{"country": "US", "zip": "1"}, {"country": "FR", "postcode": "2"}, 3],
          invalid=[({"country": "US"}, [("args_valid/required", ("zip",), 5, 14)]),
                   # no country: `if` holds vacuously, so `then` applies
                   ({}, [("args_valid/required", ("zip",), 5, 14)]),
                   ({"country": "FR"}, [("args_valid/required", ("postcode",), 7, 14)])])
    check("if: {type: string}\nelse: {type: integer}\n", valid=["a", 1],
          invalid=[(1.5, [("args_valid/type", (), 2, 8)])])


# -------------------------------------------------------------------------------- $ref
def test_ref_to_defs_points_into_the_definition() -> None:
    text = """\
        $defs:
          money: {type: number, minimum: 0}
        type: object
        properties:
          amount: {$ref: "#/$defs/money"}
          fee: {$ref: "#/$defs/money"}
        """
    # line 2 "  money: {type: number, minimum: 0}": 'type' col 11, 'minimum' col 25
    check(text, valid=[{"amount": 0, "fee": 2.5}],
          invalid=[({"amount": -1}, [("args_valid/minimum", ("amount",), 2, 25)]),
                   ({"fee": "1"}, [("args_valid/type", ("fee",), 2, 11)])])


def test_recursive_ref() -> None:
    text = """\
        $defs:
          node:
            type: object
            required: [name]
            properties:
              name: {type: string}
              children:
                type: array
                items: {$ref: "#/$defs/node"}
        $ref: "#/$defs/node"
        """
    # line 4 "    required: [name]": name at col 16; line 6 "      name: {type: string}":
    # 'type' at col 14
    ok = {"name": "a", "children": [{"name": "b", "children": []}]}
    deep = {"name": "a", "children": [{"name": "b", "children": [{"x": 1}]}]}
    check(text, valid=[ok],
          invalid=[(deep, [("args_valid/required", ("children", 0, "children", 0, "name"),
                            4, 16)]),
                   ({"name": 1}, [("args_valid/type", ("name",), 6, 14)])])


# A value invalid deep inside a recursive schema: each node's generated test once ran
# the full validators of the nodes under it (a call of their validator beyond the inline
# depth, or of a keyword with no test of its own), and its validator ran them again:
# twice more at each level, so 14 levels took ~50 s and 40 would take centuries.
TREE = """\
    $defs:
      node:
        type: object
        properties:
          children:
            type: array
            items: {$ref: "#/$defs/node"}
    $ref: "#/$defs/node"
    """
# a schema recursing through each keyword that descends into the value: the schema, how a
# value nests one level, a valid and an invalid innermost value
DESCENDING: dict[str, tuple[Any, Callable[[Any], Any], Any, Any]] = {
    "properties": ({"type": "object", "properties": {"a": {"$ref": "#"}}},
                   lambda v: {"a": v}, {}, "x"),
    "items": ({"type": "array", "items": {"$ref": "#"}}, lambda v: [v], [], "x"),
    "prefixItems": ({"type": "array", "prefixItems": [{"$ref": "#"}]}, lambda v: [v], [], "x"),
    "patternProperties": ({"type": "object", "patternProperties": {"^a": {"$ref": "#"}}},
                          lambda v: {"a": v}, {}, "x"),
    "additionalProperties": ({"type": "object", "additionalProperties": {"$ref": "#"}},
                             lambda v: {"a": v}, {}, "x"),
    "dependentSchemas": ({"type": "object", "dependentSchemas": {
        "a": {"properties": {"a": {"$ref": "#"}}}}}, lambda v: {"a": v}, {}, "x"),
    "allOf": ({"type": "object", "allOf": [{"properties": {"a": {"$ref": "#"}}}]},
              lambda v: {"a": v}, {}, "x"),
    "anyOf": ({"type": "object", "anyOf": [{"properties": {"a": {"$ref": "#"}}}]},
              lambda v: {"a": v}, {}, "x"),
    "oneOf": ({"type": "object", "oneOf": [{"properties": {"a": {"$ref": "#"}}}]},
              lambda v: {"a": v}, {}, "x"),
    "not": ({"type": "object", "not": {"not": {"properties": {"a": {"$ref": "#"}}}}},
            lambda v: {"a": v}, {}, "x"),
    "if": ({"type": "object", "if": {"required": ["a"]},
            "then": {"properties": {"a": {"$ref": "#"}}}}, lambda v: {"a": v}, {}, "x"),
    "contains": ({"type": ["array", "string"], "contains": {"$ref": "#"}},
                 lambda v: [v], "s", 1),
}


def _nest(wrap: Any, levels: int, leaf: Any) -> Any:
    for _ in range(levels):
        leaf = wrap(leaf)
    return leaf


def _timed(validator: Validator, value: Any) -> tuple[float, list[SchemaError] | None]:
    start = time.perf_counter()
    errors = validator(value)
    return time.perf_counter() - start, errors


def test_a_value_invalid_deep_in_a_recursive_schema_is_checked_in_linear_time() -> None:
    tree = compile_yaml(TREE)
    ok = _nest(lambda v: {"children": [v, {"children": []}]}, 40, {"children": []})
    bad = _nest(lambda v: {"children": [{"children": []}, v]}, 40, {"children": 5})
    seconds, errors = _timed(tree, ok)
    assert errors is None and seconds < 1, seconds
    seconds, errors = _timed(tree, bad)
    assert seconds < 1, seconds  # was 50 s for 14 levels, doubling or more at each
    assert where(errors) == [("args_valid/type", ("children", 1) * 40 + ("children",), 6, 9)]
    assert one(errors).message == "Expected array, got integer"


@pytest.mark.parametrize("name", [*sorted(DESCENDING), "no $ref"])
def test_each_descending_keyword_checks_a_deep_value_in_linear_time(name: str) -> None:
    # no $ref: nested far deeper than a test inlines (MAX_INLINE_DEPTH)
    nested: tuple[Any, Callable[[Any], Any], Any, Any] = (
        _nest(lambda s: {"properties": {"a": s}}, 40, {"type": "object"}),
        lambda v: {"a": v}, {}, 1)
    schema, wrap, good, bad = nested if name == "no $ref" else DESCENDING[name]
    validator = compile_checked(schema, Positions("cross.json"))
    reference = Draft202012Validator(schema)
    for leaf in (good, bad):
        value = _nest(wrap, 40, leaf)
        seconds, errors = _timed(validator, value)
        assert seconds < 1, (leaf, seconds)
        assert (errors is None) is reference.is_valid(value) is (leaf is good)


def test_ref_to_the_root() -> None:
    text = """\
        type: array
        items: {$ref: "#"}
        maxItems: 2
        """
    # every item is itself such an array: arrays of arrays, at most 2 long, all the way down
    check(text, valid=[[], [[], [[]]], [[[], []]]],
          invalid=[([[[], [], []]], [("args_valid/max_items", (0,), 3, 1)]),
                   ([[], "x"], [("args_valid/type", (1,), 1, 1)]),
                   ([[[1]]], [("args_valid/type", (0, 0, 0), 1, 1)])])


@pytest.mark.parametrize(("text", "line_col"), [
    # a definition that is itself, through keywords that apply to the same value: before,
    # validating any value recursed until Python's recursion limit (an internal error)
    ('$defs:\n  d: {not: {$ref: "#/$defs/d"}}\n$ref: "#/$defs/d"\n', "2:13"),
    ('$defs:\n  a: {allOf: [{$ref: "#/$defs/b"}]}\n  b: {anyOf: [{$ref: "#/$defs/a"}]}\n'
     '$ref: "#/$defs/a"\n', "3:16"),
    ('$defs:\n  d: {if: {type: string}, then: {$ref: "#/$defs/d"}}\n$ref: "#/$defs/d"\n',
     "2:34"),
    ('allOf: [{$ref: "#"}]\n', "1:10"),
    # each route below was missed (validating recursed to Python's limit: an internal
    # error): the target's own path decided whether it was a step into the value, so a
    # $ref to a node under items/properties (or a definition named like them) restarted
    # the count; and a target first compiled under a property was taken as safe when it
    # was reached again on the same value
    ('items: {$ref: "#/items"}\n', "1:9"),
    ('properties:\n  a: {$ref: "#/properties/b"}\n  b: {$ref: "#/properties/a"}\n', "2:7"),
    ('$defs:\n  x:\n    dependentSchemas:\n      items: {$ref: "#/$defs/x"}\n'
     '$ref: "#/$defs/x"\n', "4:15"),
    ('$defs:\n  arguments: {not: {$ref: "#/$defs/arguments"}}\n$ref: "#/$defs/arguments"\n',
     "2:21"),
    ('$defs:\n  t: {properties: {x: {$ref: "#/$defs/u"}}, allOf: [{$ref: "#/$defs/u"}]}\n'
     '  u: {allOf: [{$ref: "#/$defs/t"}]}\n$ref: "#/$defs/t"\n', "3:16"),
    ('if: {type: string}\nelse: {$ref: "#"}\n', "2:8"),
    ('properties:\n  p: {$ref: "#/properties/p"}\n', "2:7"),  # a property's own schema
])
def test_ref_cycle_on_the_same_value_is_a_config_error(text: str, line_col: str) -> None:
    problem = config_error(text)
    assert problem.startswith(f"{FILE}:{line_col}: '#"), problem
    assert problem.endswith("refers back to itself without descending into a property or "
                            "an item; reach it again only under 'properties', 'items' or "
                            "the like, or remove this $ref"), problem


def test_ref_cycle_through_a_member_or_an_item_is_allowed() -> None:
    text = """\
        $defs:
          d:
            anyOf:
              - {type: string}
              - {type: array, items: {$ref: "#/$defs/d"}}
              - {type: object, additionalProperties: {$ref: "#/$defs/d"}}
              - {type: object, properties: {k: {$ref: "#/$defs/d"}}}
        $ref: "#/$defs/d"
        """
    check(text, valid=["a", ["a", ["b"]], {"x": {"k": ["c"]}}],
          invalid=[([1], [("args_valid/any_of", (), 3, 5)])])


def test_a_ref_to_a_ref_that_descends_is_allowed() -> None:
    text = """\
        $defs:
          list: {$ref: "#/$defs/nested"}
          nested: {type: array, items: {$ref: "#/$defs/list"}}
        $ref: "#/$defs/list"
        """
    check(text, valid=[[], [[], [[]]]],
          invalid=[([[1]], [("args_valid/type", (0, 0), 3, 12)])])


@pytest.mark.parametrize(("text", "expected"), [
    ('then: {$ref: "#"}\ntype: string\n', "1:1: 'then' has no effect without 'if'"),
    ("type: number\nelse: {max: 100}\n", "2:1: 'else' has no effect without 'if'"),
    ("minContains: 2\n", "1:1: 'minContains' has no effect without 'contains'"),
    ("type: array\nmaxContains: 0\n", "2:1: 'maxContains' has no effect without 'contains'"),
    # an if alone: its result picks then or else, and there is none
    ("type: number\nif: {minimum: 100}\n", "2:1: 'if' has no effect without 'then' or "
     "'else'"),
])
def test_then_else_without_if_and_min_max_contains_without_contains(text: str,
                                                                    expected: str) -> None:
    """JSON Schema ignores them: a policy's `else: {max: 100}` with no `if`, or a
    `maxContains: 0` with no `contains`, checked nothing and passed every call."""
    assert config_error(text).startswith(f"{FILE}:{expected}")


def _chain(n: int) -> str:
    """Definitions d0 .. dn, each applying the next to the same value (allOf)."""
    defs = "".join(f'  d{i}: {{allOf: [{{$ref: "#/$defs/d{i + 1}"}}]}}\n' for i in range(n))
    return f"$defs:\n{defs}  d{n}: {{type: integer}}\n$ref: \"#/$defs/d0\"\n"


def test_a_long_chain_of_refs_is_a_config_error_not_a_recursion_error() -> None:
    # before, compiling 500 definitions that each refer to the next exhausted Python's
    # stack (an internal error); a chain up to MAX_SCHEMA_DEPTH schemas deep compiles
    assert compile_yaml(_chain(40))(1) is None
    assert where(compile_yaml(_chain(40))("x")) == [("args_valid/type", (), 42, 9)]
    problem = config_error(_chain(500))
    assert re.match(rf"{FILE}:\d+:\d+: '#/\$defs/d\d+' leads more than {MAX_SCHEMA_DEPTH} "
                    r"schemas deep \(a chain of \$refs", problem), problem
    docs = (Path(__file__).resolve().parents[2] / "docs" / "config.md").read_text("utf-8")
    assert f"may lead at most {MAX_SCHEMA_DEPTH} schemas deep" in " ".join(docs.split())


def _doubling(n: int) -> str:
    """Definitions d0 .. dn, each applying the next twice to the same value (anyOf):
    2**(n+1) - 1 schemas applied to one value."""
    defs = "".join(f'  d{i}: {{anyOf: [{{$ref: "#/$defs/d{i + 1}"}}, '
                   f'{{$ref: "#/$defs/d{i + 1}"}}]}}\n' for i in range(n))
    return f"$defs:\n{defs}  d{n}: {{type: integer}}\n$ref: \"#/$defs/d0\"\n"


def test_refs_that_apply_a_definition_twice_are_bounded() -> None:
    """22 definitions, each naming the next twice, were a 2 KB policy that did not finish
    checking one argument in minutes (2**23 schemas, one by one). A schema may apply at
    most 10,000 schemas (MAX_SCHEMAS_IN_PLACE) to one value: 2**13 - 1 = 8,191 compiles
    and checks, 2**14 - 1 = 16,383 is a config error at the schema (the document's root:
    line 1, column 1), and so are two $refs to a schema of 8,191 (1 + 2 * 8,191)."""
    message = ("this schema applies more than 10,000 schemas to the same value through its "
               "$refs (definitions that name the same definitions again, as in anyOf: "
               "[{$ref: X}, {$ref: X}]); name each definition once")
    assert compile_yaml(_doubling(12))(1) is None
    assert config_error(_doubling(13)) == f"{FILE}:1:1: {message}"
    twice = _doubling(12).replace('$ref: "#/$defs/d0"\n',
                                  'allOf: [{$ref: "#/$defs/d0"}, {$ref: "#/$defs/d0"}]\n')
    assert config_error(twice) == f"{FILE}:1:1: {message}"
    # under a property: at the property's key (line 16 of "$defs:", d0 .. d13, "properties:")
    nested = _doubling(13).replace('$ref: "#/$defs/d0"\n',
                                   'properties:\n  a: {$ref: "#/$defs/d0"}\n')
    assert config_error(nested) == f"{FILE}:17:3: {message}"
    # a definition that many name, each once, is no such case
    many = "".join('  - {$ref: "#/$defs/d"}\n' for i in range(5000))
    assert compile_yaml(f"$defs:\n  d: {{type: integer}}\nallOf:\n{many}")(1) is None


# -------------------------------------------------------------------------- booleans
def test_boolean_schemas() -> None:
    assert compile_yaml("true\n")({"anything": [1]}) is None
    assert where(compile_yaml("false\n")(1)) == [("args_valid/false_schema", (), 1, 1)]
    text = """\
        properties:
          force: false
          dry_run: true
        """
    v = check(text, valid=[{}, {"dry_run": 1}],
              invalid=[({"force": True}, [("args_valid/false_schema", ("force",), 2, 3)])])
    assert one(v({"force": 0})).constraint.text == "false"


# ------------------------------------------------------------------------- config errors
def test_unknown_keyword_did_you_mean() -> None:
    text = """\
        type: object
        properties:
          percent: {type: number, maxium: 30}
        """
    # line 3: '{' col 12, 'type' col 13, 'maxium' col 27
    assert config_error(text) == (f"{FILE}:3:27: unknown schema keyword 'maxium' "
                                  "(did you mean 'maximum'?)")


def test_unknown_keyword_in_then_without_if_is_still_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        compile_yaml("then: {maxium: 3}\n")
    problems = info.value.problems
    assert problems[0].startswith(f"{FILE}:1:8: unknown schema keyword 'maxium'")
    assert problems[1].startswith(f"{FILE}:1:1: 'then' has no effect without 'if'")


@pytest.mark.parametrize(("text", "expected"), [
    ('pattern: "(unclosed"\n', "1:1: invalid regular expression"),
    ("patternProperties:\n  '[a-': {}\n", "2:3: invalid regular expression"),
    ("format: credit-card\n", "1:1: unsupported format 'credit-card'; supported: date-time"),
    ("format: emial\n", "1:1: unsupported format 'emial'"),
    # a list or a mapping is unhashable: a TypeError (an internal error) before
    ("format: [email]\n", "1:1: 'format' must be a string naming a format (date-time, "),
    ("format: {email: 1}\n", "1:1: 'format' must be a string naming a format"),
    ("format: 5\n", "1:1: 'format' must be a string naming a format"),
    ("items: [{type: string}]\n", "1:1: 'items' takes one schema; for a list of schemas use "
     "'prefixItems'"),
    ('$ref: "#/$defs/missing"\n', "1:1: '$ref: #/$defs/missing' points at nothing in this file"),
    ('$ref: "other.json#/a"\n', "1:1: '$ref' must be a reference within this file"),
    ("unevaluatedProperties: false\n", "1:1: 'unevaluatedProperties' is not supported: use "
     "additionalProperties"),
    ("dependencies: {a: [b]}\n", "1:1: 'dependencies' is not supported"),
    ('max: "30"\n', "1:1: 'max' must be a number"),
    ("minimum: true\n", "1:1: 'minimum' must be a number"),
    ("type: number\nmax: 30\nmaximum: 40\n", "3:1: 'maximum' repeats 'max'"),
    ("min_length: 2\nminLength: 3\n", "2:1: 'minLength' repeats 'min_length'"),
    ("type: int\n", "1:1: unknown type 'int'"),
    ("multipleOf: 0\n", "1:1: 'multipleOf' must be a finite number greater than 0"),
    # before: an internal error (ValueError: int('inf') in the decimal of the step)
    ("multipleOf: .inf\n", "1:1: 'multipleOf' must be a finite number greater than 0"),
    # a properties / patternProperties that is no mapping, beside additionalProperties:
    # false (which lists their names): a TypeError / KeyError, an internal error, before
    ("properties: [{a: 1}]\nadditionalProperties: false\n",
     "1:1: 'properties' must be a mapping of property names to schemas"),
    ("patternProperties: [{x: 1}]\nadditionalProperties: false\n",
     "1:1: 'patternProperties' must be a mapping of regexes to schemas"),
    # a name that is no string: unhashable, a TypeError when a value had the property
    ("dependentRequired: {a: [{x: 1}]}\n",
     "1:1: 'dependentRequired' must be a mapping of property names to lists of names"),
    ("minLength: -1\n", "1:1: 'minLength' must be a whole number ≥ 0"),
    ("enum: []\n", "1:1: 'enum' must be a non-empty list"),
    # no type allowed no value (JSON Schema's meta-schema asks for at least one): a policy
    # failed every call ("Expected , got string"), a blocklist's {type: []} blocked none
    ("type: []\n", "1:1: 'type' must be a type name or a non-empty list of type names"),
    ("anyOf: []\n", "1:1: 'anyOf' must be a non-empty list of schemas"),
    ("required: true\n", "1:1: 'required: true' applies to an argument or a property"),
    ("properties:\n  a: string\n", "2:3: a schema must be a mapping or true/false, not string"),
    ("uniqueItems: 1\n", "1:1: 'uniqueItems' must be true or false"),
    ("contains: {}\nminContains: -1\n", "2:1: 'minContains' must be a whole number ≥ 0"),
])
def test_config_errors(text: str, expected: str) -> None:
    assert config_error(text).startswith(f"{FILE}:{expected}")


def test_unknown_type_suggests_the_close_name() -> None:
    assert "did you mean 'integer'" in config_error("type: int\n")
    assert "did you mean 'email'" in config_error("format: emial\n")


# ----------------------------------------------------- cross-check against jsonschema
# Sugar-free schemas, no `format` (jsonschema asserts only some formats, and `email` as
# "contains an @"). Compiled without YAML: positions do not matter for the verdict.
CROSS_SCHEMAS: dict[str, Any] = {
    "bounds": {"type": "number", "minimum": -2, "exclusiveMaximum": 2.5},
    "int_step": {"type": "integer", "multipleOf": 3, "maximum": 100},
    "float_step": {"multipleOf": 0.5, "exclusiveMinimum": -3},
    "string": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "[ab]"},
    "enum": {"enum": [1, "a", None, [1, 2], {"a": True}, False]},
    "const": {"const": {"a": [1, 2.5]}},
    "object": {"type": "object", "required": ["a"],
               "properties": {"a": {"type": "integer"},
                              "b": {"type": "object", "properties": {"c": {"type": "string"}},
                                    "additionalProperties": False}},
               "additionalProperties": False},
    "map": {"type": "object", "patternProperties": {"^x": {"type": "number"}},
            "additionalProperties": {"type": "string"}, "propertyNames": {"maxLength": 2},
            "minProperties": 1, "maxProperties": 3},
    "dependent": {"dependentRequired": {"a": ["b"]},
                  "dependentSchemas": {"b": {"properties": {"a": {"type": "integer"}}}}},
    "array": {"type": "array", "items": {"type": ["integer", "string"]}, "uniqueItems": True,
              "maxItems": 4},
    "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}],
              "items": False, "minItems": 1},
    "contains": {"type": "array", "contains": {"type": "integer"}, "minContains": 1,
                 "maxContains": 2},
    "unique": {"uniqueItems": True},
    "any_not": {"anyOf": [{"type": "string"}, {"type": "array"}], "not": {"const": "a"}},
    "one_of": {"oneOf": [{"type": "integer"}, {"minimum": 2}, {"type": "boolean"}]},
    "all_of_bools": {"allOf": [{"type": ["integer", "boolean"]},
                               {"not": {"enum": [0, True]}}]},
    "if_then_else": {"if": {"type": "object", "required": ["a"]},
                     "then": {"properties": {"a": {"enum": ["a", "b"]}}},
                     "else": {"type": ["array", "null"]}},
    "ref_tree": {"$defs": {"tree": {"type": "object",
                                    "properties": {"a": {"type": "integer"},
                                                   "b": {"$ref": "#/$defs/tree"}},
                                    "additionalProperties": False}},
                 "$ref": "#/$defs/tree"},
    "false_property": {"properties": {"a": False, "b": True}},
    # deeper than MAX_INLINE_DEPTH: the inner nodes' tests are called, not inlined
    "deep": {"properties": {"a": {"properties": {"b": {"properties": {"c": {"properties": {
        "x": {"type": "integer", "maximum": 3}}, "required": ["x"]}}}}}}},
    "closed_strings": {"type": "object", "required": ["a", "b"],
                       "properties": {"a": {"type": "string", "pattern": "^a", "minLength": 2},
                                      "b": {"enum": ["x", "xy", 1]},
                                      "c": {"const": "ab"}},
                       "additionalProperties": False},
    "bounds_ex": {"exclusiveMinimum": 0, "maximum": 1.5, "minimum": -1, "maxLength": 2},
}

# Small alphabets, so that generated values often hit the schemas' names and collide
# (for uniqueItems and enum). Integers stay within JSON's exact range.
KEYS = st.sampled_from(["a", "b", "c", "x", "xy", "ab", "xyz"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.integers(min_value=-4, max_value=6)
    | st.sampled_from([0.0, 1.0, 1.5, 2.5, -2.0, 3.0, 0.5, 1e-10])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="abxy", max_size=5)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def _decimal_differs_from_binary(value: Any) -> bool:
    """Intentional difference: the engine decides multipleOf on a float's decimal value as
    written (its shortest repr: 1e17 is 10**17), jsonschema on its exact binary value
    (float(1e17) is 100000000000000000 as well, but 2.0**60 prints as 1.152921504606847e+18,
    which is not 2**60). Both agree whenever the two values are the same number."""
    return isinstance(value, float) and Fraction(repr(value)) != Fraction(value)


def _known_difference(name: str, value: Any) -> bool:
    if name in ("float_step", "int_step"):  # the only schemas with multipleOf
        return _decimal_differs_from_binary(value)
    return False


COMPILERS = {name: SchemaCompiler(schema, Positions("cross.json")) for name, schema in
             CROSS_SCHEMAS.items()}
COMPILED = {name: compiler.compile_root(CROSS_SCHEMAS[name], ())
            for name, compiler in COMPILERS.items()}
# the generated fast test of each schema (schema_compiler "Accepting fast")
ACCEPT = {name: COMPILERS[name].accept(check) for name, check in COMPILED.items()}
REFERENCE = {name: Draft202012Validator(schema) for name, schema in CROSS_SCHEMAS.items()}


def test_cross_schemas_are_valid_draft_2020_12() -> None:
    for schema in CROSS_SCHEMAS.values():
        Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", sorted(CROSS_SCHEMAS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON_VALUES)
def test_verdict_agrees_with_jsonschema(name: str, value: Any) -> None:
    ours = COMPILED[name](value) is None
    theirs = REFERENCE[name].is_valid(value)
    if ours != theirs and _known_difference(name, value):
        return
    assert ours == theirs, (name, value, COMPILED[name](value))


@pytest.mark.parametrize("name", sorted(CROSS_SCHEMAS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON_VALUES)
def test_fast_test_agrees_with_jsonschema(name: str, value: Any) -> None:
    """The fast test accepts exactly the valid values (never an invalid one: it would hide
    a finding; every valid one, or it would save nothing)."""
    ours = ACCEPT[name](value)
    theirs = REFERENCE[name].is_valid(value)
    if ours != theirs and _known_difference(name, value):
        return
    assert ours == theirs, (name, value)


def test_fast_tests_are_generated_for_the_common_keywords() -> None:
    schema = CROSS_SCHEMAS["closed_strings"]
    compiler = SchemaCompiler(schema, Positions("cross.json"))
    check = compiler.compile_root(schema, ())
    source = compiler.test_of(check).source("v")
    # every keyword inlined: no call of a keyword's validator or test, one of the regex search
    assert "is None" not in source and "_t" not in source, source
    assert source.count("is not None") == 1, source
    assert ACCEPT["closed_strings"]({"a": "abc", "b": 1}) is True
    assert ACCEPT["closed_strings"]({"a": "abc", "b": 1, "d": 0}) is False
    assert ACCEPT["closed_strings"]({"a": "abc", "b": True}) is False  # true is not 1
    assert ACCEPT["closed_strings"]({"a": "abc"}) is False
    # a value it rejects still gets every error from the validator
    assert [e.constraint.rule for e in COMPILED["closed_strings"]({"a": "b", "c": "x"}) or []] == [
        "args_valid/required", "args_valid/pattern", "args_valid/min_length",
        "args_valid/const"]


def test_fast_test_of_a_deep_schema_calls_its_inner_nodes() -> None:
    compiler = COMPILERS["deep"]
    source = compiler.test_of(COMPILED["deep"]).source("v")
    assert "_t" in source  # an inner node's test called, not inlined
    assert ACCEPT["deep"]({"a": {"b": {"c": {"x": 3}}}}) is True
    assert ACCEPT["deep"]({"a": {"b": {"c": {"x": 4}}}}) is False
    assert ACCEPT["deep"]({"a": {"b": {"c": {}}}}) is False
    assert where(COMPILED["deep"]({"a": {"b": {"c": {"x": 4}}}})) == [
        ("args_valid/maximum", ("a", "b", "c", "x"), 1, 1)]


def test_an_object_of_many_properties_keeps_its_closures() -> None:
    # over MAX_MEMBERS names, compiling a test would cost more than it saves: the node's
    # test calls the properties' validator instead of inlining each name
    names = [f"p{i}" for i in range(MAX_MEMBERS + 1)]
    schema = {"properties": {n: {"type": "integer"} for n in names}, "required": names[:2]}
    compiler = SchemaCompiler(schema, Positions("cross.json"))
    check = compiler.compile_root(schema, ())
    source = compiler.test_of(check).source("v")
    assert len(re.findall(r"_t\d+\(", source)) == 1  # the properties' test called;
    # required (2 names) inline
    assert check(dict.fromkeys(names, 1)) is None
    assert where(check({"p0": 1, "p64": "x"})) == [
        ("args_valid/type", ("p64",), 1, 1), ("args_valid/required", ("p1",), 1, 1)]
    small = {"properties": {n: {"type": "integer"} for n in names[:MAX_MEMBERS]}}
    inlined = SchemaCompiler(small, Positions("cross.json"))
    assert "_t" not in inlined.test_of(inlined.compile_root(small, ())).source("v")


def test_names_in_a_schema_never_become_source_text() -> None:
    name = "x') or __import__('os').system('false') or ('"
    schema = {"properties": {name: {"const": name}}, "required": [name]}
    compiler = SchemaCompiler(schema, Positions("cross.json"))
    check = compiler.compile_root(schema, ())
    assert "__import__" not in compiler.test_of(check).source("v")
    assert check({name: name}) is None
    assert where(check({name: 1})) == [("args_valid/const", (name,), 1, 1)]


@pytest.mark.parametrize(("name", "value", "valid"), [
    # examples that must stay in the generated space (guard against a vacuous property)
    ("unique", [1, 1.0], False),
    ("unique", [1, True], True),
    ("all_of_bools", 1, True),
    ("all_of_bools", True, False),
    ("enum", [1.0, 2], True),
    ("ref_tree", {"b": {"b": {"a": 1.5}}}, False),
    ("one_of", 3, False),
    ("int_step", 6.0, True),
])
def test_cross_examples(name: str, value: Any, valid: bool) -> None:
    assert REFERENCE[name].is_valid(value) is valid
    assert (COMPILED[name](value) is None) is valid


def test_known_difference_is_decimal_versus_binary() -> None:
    # 3 * 2**60 is a multiple of 3 as a binary float, but its shortest decimal form (what a
    # JSON file holds) has 17 significant digits and is a different integer.
    # 3 * 2**55 = 108086391056891904 prints as 1.080863910568919e+17 = 108086391056891900,
    # whose digit sum is 74: not a multiple of 3.
    big = 3.0 * 2**55
    assert int(big) % 3 == 0
    assert repr(big) == "1.080863910568919e+17"
    written = Fraction(repr(big))
    assert written.denominator == 1 and written.numerator % 3 != 0
    assert Draft202012Validator({"multipleOf": 3}).is_valid(big)
    assert compile_yaml("multipleOf: 3\n")(big) is not None
    assert _known_difference("int_step", big)
    assert not _known_difference("int_step", 1.5)
    # 1.0000000001 / 0.5 = 2.0000000002 (within 1e-9 of a whole number): neither accepts it
    assert COMPILED["float_step"](1.0000000001) is not None
    assert not REFERENCE["float_step"].is_valid(1.0000000001)


def test_sample_regexes_compile() -> None:
    # the cross-check's pattern is a search in both engines
    assert re.search("[ab]", "xxa")
