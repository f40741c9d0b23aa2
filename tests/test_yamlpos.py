"""yamlpos: plain data plus the 1-based line/column of every key and list item."""

from __future__ import annotations

import datetime
import re

import pytest
import yaml

from agent_eval.errors import ConfigError
from agent_eval.yamlpos import Pos, load_yaml, safe_load

DOC = """\
suite: demo
tests:
  - id: first
    metric: args_valid
  - id: second
    rules:
      - type: require
        tool: a
      -   type: count
"""


def test_positions_of_keys_and_items_nested() -> None:
    data, pos = load_yaml(DOC, "s.yaml")
    assert data["tests"][1]["rules"][1] == {"type": "count"}
    assert pos.get(("suite",)) == Pos(1, 1)
    assert pos.get(("tests",)) == Pos(2, 1)
    # a list item is where its node starts: after "  - "
    assert pos.get(("tests", 0)) == Pos(3, 5)
    assert pos.get(("tests", 0, "id")) == Pos(3, 5)
    assert pos.get(("tests", 0, "metric")) == Pos(4, 5)
    assert pos.get(("tests", 1)) == Pos(5, 5)
    assert pos.get(("tests", 1, "rules")) == Pos(6, 5)
    assert pos.get(("tests", 1, "rules", 0)) == Pos(7, 9)
    assert pos.get(("tests", 1, "rules", 0, "tool")) == Pos(8, 9)
    # "      -   type: count": the item starts at column 11
    assert pos.get(("tests", 1, "rules", 1)) == Pos(9, 11)
    assert pos.get(("tests", 1, "rules", 1, "type")) == Pos(9, 11)


def test_missing_path_falls_back_to_nearest_ancestor() -> None:
    _, pos = load_yaml(DOC, "s.yaml")
    assert not pos.has(("tests", 0, "policy"))
    assert pos.get(("tests", 0, "policy")) == Pos(3, 5)
    assert pos.where(("tests", 1, "rules", 0, "nosuch")) == "s.yaml:7:9"
    err = pos.error(("tests", 0, "metric"), "bad metric")
    assert err.problems == ["s.yaml:4:5: bad metric"]


def test_flow_style_positions() -> None:
    text = "tools:\n  t: {a: {max: 3}, b: [1, 2]}\n"
    data, pos = load_yaml(text, "p.yaml")
    assert data == {"tools": {"t": {"a": {"max": 3}, "b": [1, 2]}}}
    assert pos.get(("tools", "t")) == Pos(2, 3)
    assert pos.get(("tools", "t", "a")) == Pos(2, 7)
    assert pos.get(("tools", "t", "a", "max")) == Pos(2, 11)
    assert pos.get(("tools", "t", "b")) == Pos(2, 20)
    assert pos.get(("tools", "t", "b", 1)) == Pos(2, 27)


def test_duplicate_key_names_both_lines() -> None:
    text = "suite: a\ntests: []\nsuite: b\n"
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "s.yaml")
    (problem,) = exc.value.problems
    assert problem.startswith("s.yaml:3:1: ")
    assert "duplicate key 'suite'" in problem
    assert "line 1" in problem


def test_duplicate_key_nested_and_quoted() -> None:
    text = "tools:\n  t:\n    max: 1\n    'max': 2\n"
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "p.yaml")
    (problem,) = exc.value.problems
    assert problem.startswith("p.yaml:4:5: ")
    assert "'max'" in problem and "line 3" in problem


@pytest.mark.parametrize(
    ("text", "line", "col"),
    [
        ("a: [1, 2\nb: 3\n", 2, 2),  # unclosed flow list: found at "b:" (col 2 of line 2)
        ("a: b: c\n", 1, 5),  # "mapping values are not allowed here", at the second ":"
        ("a:\n  - x\n - y\n", 3, 2),  # bad indentation
    ],
)
def test_invalid_yaml_is_file_line_col(text: str, line: int, col: int) -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "dir/s.yaml")
    (problem,) = exc.value.problems
    m = re.match(r"^dir/s\.yaml:(\d+):(\d+): invalid YAML: .+", problem)
    assert m is not None, problem
    assert (int(m.group(1)), int(m.group(2))) == (line, col)


@pytest.mark.parametrize(
    ("text", "line", "col", "char", "escape"),
    [
        # "  b: [x" is 7 characters: the NUL is column 8 of line 3
        ("a: 1\nc: 2\n  b: [x\x00]\n", 3, 8, "U+0000", "\\x00"),
        # two-byte characters before it: libyaml's offset (in bytes) is not the column
        ("a: 1\nb: [\u00e9\u00e9\x07]\n", 2, 7, "U+0007", "\\x07"),
        ("a: \ufffe\n", 1, 4, "U+FFFE", "\\uFFFE"),
    ],
)
def test_a_character_yaml_refuses_is_an_error_at_its_line_and_column(
        text: str, line: int, col: int, char: str, escape: str) -> None:
    """The YAML reader's error has no line, only an offset: it was reported at 1:1 with
    libyaml's 'in "<unicode string>", position N' (a NUL on line 40 too)."""
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "s.yaml")
    (problem,) = exc.value.problems
    # the reason in brackets is the reader's: libyaml's "control characters are not
    # allowed", PyYAML's own (without libyaml) "special characters are not allowed"
    head, reason = problem.split(" (", 1)
    assert head == f"s.yaml:{line}:{col}: invalid YAML: the character {char} is not " \
        "allowed in a YAML file"
    assert reason.endswith(f'characters are not allowed); remove it, or write it as the '
                           f'escape "{escape}" in a double-quoted string')


def test_tab_indentation_is_an_invalid_yaml_error() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml("a:\n\tb: 1\n", "s.yaml")
    assert re.match(r"^s\.yaml:2:\d+: invalid YAML", exc.value.problems[0])


def test_yaml11_boolean_words_as_keys_stay_strings() -> None:
    text = "on: push\nyes: 1\nno: 2\noff: 3\ny: 4\nn: 5\n"
    data, _ = load_yaml(text, "s.yaml")
    assert list(data) == ["on", "yes", "no", "off", "y", "n"]
    assert all(isinstance(k, str) for k in data)


def test_other_scalar_keys_stay_text_as_written() -> None:
    data, _ = load_yaml("1: a\n1.5: b\nnull: c\n~: d\n", "s.yaml")
    assert list(data) == ["1", "1.5", "null", "~"]


def test_timestamps_stay_strings() -> None:
    text = "day: 2024-01-02\nwhen: 2024-01-02 10:30:00\nlist: [2001-12-14t21:59:43.10-05:00]\n"
    data, _ = load_yaml(text, "s.yaml")
    assert data == {
        "day": "2024-01-02",
        "when": "2024-01-02 10:30:00",
        "list": ["2001-12-14t21:59:43.10-05:00"],
    }


def test_a_value_yaml_cannot_build_is_an_error_at_its_line() -> None:
    """An integer of 5,000 digits made PyYAML's int() raise ValueError (an internal error);
    it is a config error at the value, saying how to keep it."""
    with pytest.raises(ConfigError) as exc:
        load_yaml("a: 1\nb: " + "1" * 5000 + "\n", "s.yaml")
    [problem] = exc.value.problems
    assert problem.startswith("s.yaml:2:4: cannot read this value: Exceeds the limit (4300 ")
    assert "; quote the value to keep it as text" in problem


@pytest.mark.parametrize(("text", "at", "tag"), [
    # a node starts at its tag: column 4 of "b: !!set {x, y}", column 5 of "  - !!omap"
    ("a: 1\nb: !!set {x, y}\n", (2, 4), "!!set"),
    ("a:\n  - !!omap [x: 1]\n", (2, 5), "!!omap"),
    ("a: !!python/object:os.system\n  x: 1\n", (1, 4), "!!python/object:os.system"),
    ("a: !local [1]\n", (1, 4), "!local"),
])
def test_a_tag_on_a_mapping_or_list_is_an_error_at_its_line(
        text: str, at: tuple[int, int], tag: str) -> None:
    """A tagged mapping or list was read as a plain one, its tag silently dropped: a
    ``!!set {x, y}`` became ``{x: None, y: None}``. (A tagged value is refused by the
    constructor already.)"""
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "s.yaml")
    assert exc.value.problems == [
        f"s.yaml:{at[0]}:{at[1]}: the YAML tag '{tag}' is not supported: agent-eval reads "
        "plain mappings, lists and values; remove the tag"]
    # the tags a mapping and a list have anyway are fine
    assert load_yaml("a: !!map {x: !!seq [1]}\nb: ! {y: 2}\n", "s.yaml")[0] == {
        "a": {"x": [1]}, "b": {"y": 2}}


def test_safe_load_raises_only_yaml_errors() -> None:
    """``safe_load`` (the rule inventory, JSON Schema files) builds dates: one that does not
    exist made datetime raise ValueError, which its callers, catching YAMLError, did not
    expect (`run` stopped with an internal error on ``suite: 2001-02-30``)."""
    with pytest.raises(yaml.YAMLError, match="day is out of range for month"):
        safe_load("a: 1\nb: 2001-02-30\n")
    assert safe_load("b: 2001-02-03\n") == {"b": datetime.date(2001, 2, 3)}  # as before


def test_ordinary_scalars_are_typed() -> None:
    data, _ = load_yaml("a: 1\nb: 1.5\nc: true\nd: null\ne: '1'\nf: abc\n", "s.yaml")
    assert data == {"a": 1, "b": 1.5, "c": True, "d": None, "e": "1", "f": "abc"}


def test_merge_keys_are_rejected_at_their_line() -> None:
    text = "base: &b\n  max: 3\ntools:\n  t:\n    <<: *b\n    min: 1\n"
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "p.yaml")
    (problem,) = exc.value.problems
    assert problem.startswith("p.yaml:5:5: ")
    assert "merge" in problem and "<<" in problem


def test_anchor_and_alias_without_merge_are_fine() -> None:
    data, _ = load_yaml("a: &x [1, 2]\nb: *x\n", "s.yaml")
    assert data == {"a": [1, 2], "b": [1, 2]}


def test_complex_key_is_an_error() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml("? [a, b]\n: 1\n", "s.yaml")
    assert exc.value.problems[0].startswith("s.yaml:1:3: ")


def test_empty_document() -> None:
    data, pos = load_yaml("", "s.yaml")
    assert data is None
    assert pos.get(("anything",)) == Pos(1, 1)


def test_recursive_alias_is_an_error() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml("a: &a\n  b: *a\n", "s.yaml")
    # PyYAML keeps no position for an alias: the error points at the anchor (&a)
    assert exc.value.problems[0].startswith("s.yaml:1:4: ")
    assert "recursive" in exc.value.problems[0]


def test_alias_bomb_is_an_error_not_a_hang() -> None:
    # each level repeats the previous one ten times: 10**8 values in all
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]")
    with pytest.raises(ConfigError) as exc:
        load_yaml("\n".join(lines) + "\n", "s.yaml")
    assert "aliases" in exc.value.problems[0]


def test_very_deep_nesting_is_an_error() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml("x: " + "[" * 5000 + "]" * 5000 + "\n", "s.yaml")
    assert exc.value.problems[0].startswith("s.yaml:")


# --------------------------------------------------------------- guard (issue 11)
def test_nesting_deeper_than_the_limit_is_an_error_at_its_line() -> None:
    from agent_eval.limits import Limits
    from agent_eval.yamlpos import YamlLimitError, guard_yaml, safe_load

    text = "a:\n  b: " + "[" * 101 + "]" * 101 + "\n"
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "s.yaml")
    assert exc.value.problems[0].startswith("s.yaml:2:")
    assert "nested more than 100 levels deep" in exc.value.problems[0]
    guard_yaml(text, Limits(max_depth=103))  # two mappings and 101 lists
    block = "".join("  " * i + "- \n" for i in range(3))  # block nesting counts too
    with pytest.raises(YamlLimitError):
        safe_load(block + "  " * 3 + "- x\n", Limits(max_depth=3))
    assert safe_load(block + "  " * 3 + "- x\n", Limits(max_depth=4)) == [[[[ "x"]]]]


def test_deep_flow_nesting_does_not_crash() -> None:
    with pytest.raises(ConfigError) as exc:
        load_yaml("x: " + "[" * 120_000 + "\n", "s.yaml")
    assert exc.value.problems[0].startswith("s.yaml:1:")


def test_aliases_count_what_they_stand_for() -> None:
    from agent_eval.limits import Limits
    from agent_eval.yamlpos import YamlLimitError, safe_load

    text = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n"  # each *a stands for 4 values
    assert safe_load(text, Limits(max_alias_nodes=12)) == {"a": [1, 2, 3],
                                                           "b": [[1, 2, 3]] * 3}
    with pytest.raises(YamlLimitError) as exc:
        safe_load(text, Limits(max_alias_nodes=11))
    assert (exc.value.line, exc.value.col) == (2, 13)  # the third *a
    with pytest.raises(YamlLimitError, match="recursive"):
        safe_load("a: &a [1, *a]\n")


def test_aliases_count_the_characters_they_repeat() -> None:
    """One long string aliased a thousand times is few values but megabytes to read: what
    aliases repeat is held to as many characters as the file holds (1 MiB at least,
    limits.max_file_bytes at most)."""
    from agent_eval.limits import Limits
    from agent_eval.yamlpos import YamlLimitError, safe_load

    big = "a" * 100_000
    ten = f"k: &s {big}\nl: [{', '.join(['*s'] * 10)}]\n"  # 1,000,000 <= 1,048,576
    assert safe_load(ten)["l"] == [big] * 10
    with pytest.raises(YamlLimitError) as exc:  # the 11th *s: 1,100,000 characters
        safe_load(f"k: &s {big}\nl: [{', '.join(['*s'] * 11)}]\n")
    assert (exc.value.line, exc.value.col) == (2, 5 + 4 * 10)
    assert "repeat more than 1048576 characters" in exc.value.message
    assert "limits.max_file_bytes" in exc.value.message
    # only the alias's first reading is free, even far below max_alias_nodes (100,000)
    with pytest.raises(ConfigError) as cfg:
        load_yaml(f"k: &s {big}\nl: [{', '.join(['*s'] * 11)}]\n", "s.yaml")
    assert cfg.value.problems[0].startswith("s.yaml:2:45: YAML aliases repeat more than")
    # a collection costs its scalars (keys too): 'k' + 999 'x' = 1,000 a repeat
    coll = "m: &m {k: " + "x" * 999 + "}\nl: [" + ", ".join(["*m"] * 6) + "]\n"
    assert len(safe_load(coll, Limits(max_file_bytes=6000))["l"]) == 6
    with pytest.raises(YamlLimitError) as exc:
        safe_load(coll, Limits(max_file_bytes=5999))  # never more than max_file_bytes
    assert (exc.value.line, exc.value.col) == (2, 5 + 4 * 5)  # the sixth *m
    # a file larger than 1 MiB may repeat as much as it holds (here a 2 MiB comment)
    pad = "#" + "p" * 2 * 1024 * 1024 + "\n"
    assert len(safe_load(pad + f"k: &s {big}\nl: [{', '.join(['*s'] * 20)}]\n")["l"]) == 20
    with pytest.raises(YamlLimitError):
        safe_load(pad + f"k: &s {big}\nl: [{', '.join(['*s'] * 22)}]\n")


def test_yaml11_boolean_words_as_values_are_noted_where_written() -> None:
    text = "a: off\nb: [true, 'off', \"no\", false]\nc:\n  d: {e: Yes}\n"
    data, positions = load_yaml(text, "s.yaml")
    assert data == {"a": False, "b": [True, "off", "no", False], "c": {"d": {"e": True}}}
    assert positions.misread(("a",)) == (
        "s.yaml:1:4: 'off' is read by YAML as the boolean false, not as the text 'off'; "
        "quote it (\"off\") to compare with the text, or write false for the boolean")
    assert positions.misread(("b",)) is None  # true, false and quoted words
    assert positions.misread(("c",)) == (
        "s.yaml:4:10: 'Yes' is read by YAML as the boolean true, not as the text 'Yes'; "
        "quote it (\"Yes\") to compare with the text, or write true for the boolean")
    assert positions.misread(("c", "x")) is None


def test_yaml11_octal_and_base_60_numbers_as_values_are_noted_where_written() -> None:
    text = "a: 0777\nb: [1:30, '0777', 0x1F, 1_000, 0, 10, 0.5]\nc: 0b101\n"
    data, positions = load_yaml(text, "s.yaml")
    assert data == {"a": 511, "b": [90, "0777", 31, 1000, 0, 10, 0.5], "c": 5}
    assert positions.misread(("a",)) == (
        "s.yaml:1:4: '0777' is read by YAML as the number 511, not as the text '0777'; "
        "quote it (\"0777\") to compare with the text, or write 511 for the number")
    assert positions.misread(("b",)) == (
        "s.yaml:2:5: '1:30' is read by YAML as the number 90, not as the text '1:30'; "
        "quote it (\"1:30\") to compare with the text, or write 90 for the number")
    assert positions.misread(("b", 1)) is None  # quoted; 0x1F, 1_000, 0, 10, 0.5 are numbers
    assert [positions.misread(("b", k)) for k in range(2, 7)] == [None] * 5
    binary = positions.misread(("c",))
    assert binary is not None and "'0b101' is read by YAML as the number 5," in binary


@pytest.mark.parametrize(("text", "at", "tag"), [
    # a scalar starts at its tag: column 4 of "a: !!python/object:os.system x"
    ("a: !!python/object:os.system x\n", (1, 4), "!!python/object:os.system"),
    ("a: 1\nb: !local 3\n", (2, 4), "!local"),
])
def test_a_tag_on_a_value_is_said_as_on_a_mapping(text: str, at: tuple[int, int],
                                                  tag: str) -> None:
    """A tagged value was refused with PyYAML's own text: "could not determine a
    constructor for the tag 'tag:yaml.org,2002:python/object:os.system'" and, on a line of
    its own (shown as \\x0a), 'in "<unicode string>", line 1, column 8'."""
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "s.yaml")
    assert exc.value.problems == [
        f"s.yaml:{at[0]}:{at[1]}: the YAML tag '{tag}' is not supported: agent-eval reads "
        "plain mappings, lists and values; remove the tag"]
