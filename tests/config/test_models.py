"""The suite file's models (config/models.py): a YAML boolean is no number."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BeforeValidator

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError

SUITE = """\
version: "1"
suite: s
traces: t/*.jsonl
{limits}tests:
  - id: o
    metric: sequence_valid
    rules:
      - {rule}
"""


@pytest.mark.parametrize(("rule", "limits", "where", "key"), [
    # before: read as 1 (at most one call), as 1 (the very next call), as 0 (no call)
    ("{type: count, tool: x, max: true}", "", (8, 32), "rules[0].max"),
    ("{type: after, tool: x, then: y, within: on}", "", (8, 41), "rules[0].within"),
    ("{type: count, tool: x, min: no}", "", (8, 32), "rules[0].min"),
    ("{type: eventually, tool: x, within: yes}", "", (8, 37), "rules[0].within"),
    # a limit of 1 character: every name cut
    ("{type: require, tool: x}", "limits: {max_name_chars: true}\n", (4, 10),
     "limits.max_name_chars"),
])
def test_a_yaml_boolean_for_a_number_is_a_config_error_at_its_key(
        tmp_path: Path, rule: str, limits: str, where: tuple[int, int], key: str) -> None:
    (tmp_path / ".git").mkdir()
    text = SUITE.format(rule=rule, limits=limits)
    (tmp_path / "agent-eval.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "agent-eval.yaml")
    line, col = where
    [problem] = info.value.problems
    assert problem == (f"agent-eval.yaml:{line}:{col}: {key}: a boolean (YAML reads true, "
                       "false, yes, no, on and off as booleans), not a number: write the "
                       "number")
    # the line and column are the key's (counted by hand in the lines above)
    assert text.splitlines()[line - 1][col - 1:].startswith(key.split(".")[-1] + ":")


def test_which_types_take_a_number_and_no_boolean() -> None:
    from agent_eval.config.models import number_not_bool

    assert number_not_bool(int) and number_not_bool(float | None)
    assert number_not_bool(Annotated[int, "x"] | str)
    assert not number_not_bool(bool) and not number_not_bool(int | bool)
    assert not number_not_bool(Any) and not number_not_bool(str | None)
    assert not number_not_bool(int | Literal[True])
    # a type with a before-validator of its own judges a boolean itself
    assert not number_not_bool(Annotated[float, BeforeValidator(float)] | None)


def test_every_yaml_boolean_for_a_number_is_said_and_in_a_list_of_numbers_too(
        tmp_path: Path) -> None:
    """Each boolean of a model is a problem of its own (the model validator stopped at the
    first), and one in a list of numbers too: ``range: [1, yes]`` of a recorded score was
    read as [1, 1.0]; [false, true] as the default [0, 1], without a word."""
    (tmp_path / ".git").mkdir()
    text = ('version: "1"\nsuite: s\ntraces: t/*.jsonl\n'
            "limits: {max_name_chars: true, max_depth: off}\n"
            "scenarios:\n  - id: A\n    expect:\n"
            "      judge: [{recorded: q, range: [1, yes]}]\n")
    (tmp_path / "agent-eval.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "agent-eval.yaml")
    said = ("a boolean (YAML reads true, false, yes, no, on and off as booleans), not a "
            "number: write the number")
    # line 4: max_name_chars at column 10, max_depth at 32; line 8: 'yes' at column 40
    assert sorted(info.value.problems) == [
        f"agent-eval.yaml:4:10: limits.max_name_chars: {said}",
        f"agent-eval.yaml:4:32: limits.max_depth: {said}",
        f"agent-eval.yaml:8:40: expect.judge[0].range[1]: {said}",
    ]


def test_which_types_are_lists_of_numbers() -> None:
    from pydantic import Field

    from agent_eval.config.models import _numbers_field

    def field(annotation: Any) -> Any:
        from pydantic.fields import FieldInfo
        return FieldInfo.from_annotated_attribute(annotation, Field(None))

    assert _numbers_field(field(tuple[float, float] | None))
    assert _numbers_field(field(list[int])) and _numbers_field(field(tuple[int, ...]))
    assert not _numbers_field(field(list[str])) and not _numbers_field(field(list[int | bool]))
    assert not _numbers_field(field(float)) and not _numbers_field(field(tuple[int, str]))
