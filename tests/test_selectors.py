"""Call selectors (selectors.py) on calls whose arguments cannot be judged: not recorded in
the trace, or recorded but not a JSON object. An item with argument conditions neither
selects such a call nor lets it go unseen: :meth:`Selector.undecided` and the ``undecided``
list of :meth:`Selector.flags` name it (docs/config.md "Call selectors")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError
from agent_eval.model import Location, ToolCall
from agent_eval.selectors import Groups, Selector, SelectorCompiler
from agent_eval.yamlpos import Path as KeyPath
from agent_eval.yamlpos import Positions

F = "t.jsonl"
RM = {"tool": "bash", "args": {"command": {"pattern": "rm -rf"}}}


def selector(value: Any, groups: dict[str, Any] | None = None) -> Selector:
    defs: dict[str, tuple[Any, KeyPath]] = {name: (v, ("tool_groups", name))
                                         for name, v in (groups or {}).items()}
    compiler = SelectorCompiler(Groups(defs), Positions("s.yaml"), "exact")
    return compiler.selector(value, ("tests", 0, "blocklist"))


def call(name: str, args: Any, line: int = 1, **kw: Any) -> ToolCall:
    return ToolCall(name, args, Location(F, line), **kw)


def unrecorded(name: str, line: int = 1) -> ToolCall:
    return call(name, None, line, arguments_recorded=False)


def not_object(name: str, line: int = 1) -> ToolCall:
    # what the native reader makes of "arguments": "{'command': 'rm -rf /'}"
    return call(name, "{'command': 'rm -rf /'}", line,
                arguments_error="a string that is not valid JSON")


def test_conditions_cannot_judge_unreadable_arguments() -> None:
    sel = selector([RM])
    assert sel.which(call("bash", {"command": "rm -rf /"})) == 0
    for c in (unrecorded("bash"), not_object("bash"), call("bash", [1, 2])):
        assert sel.which(c) is None  # not selected ...
        assert sel.undecided(c) == 0  # ... and not a "no" either: item 0 could not judge it
    # decoded arguments give a real answer: no
    for c in (call("bash", {"command": "ls"}), call("bash", {}), call("bash", {"cmd": 1})):
        assert (sel.which(c), sel.undecided(c)) == (None, None)
    # another tool is not named by the item at all
    assert (sel.which(unrecorded("read")), sel.undecided(unrecorded("read"))) == (None, None)


def test_an_item_without_conditions_decides() -> None:
    """A call that a name, a glob or a group member without conditions selects is selected
    whatever its arguments: nothing is undecided."""
    for value, groups in (([RM, "bash"], None), (["ba*", RM], None),
                          (["@g"], {"g": [RM, "bash"]})):
        sel = selector(value, groups)
        c = unrecorded("bash")
        assert sel.which(c) is not None and sel.undecided(c) is None, value


def test_undecided_names_the_first_item_that_could_not_judge() -> None:
    sel = selector([{"tool": "curl", "args": {"url": {"pattern": "evil"}}}, "delete_*",
                    "@shell"], {"shell": [RM, {"tool": "sh", "args": {"c": "x"}}]})
    assert sel.undecided(unrecorded("bash")) == 2  # through the group
    assert sel.undecided(not_object("curl")) == 0
    assert sel.undecided(unrecorded("delete_user")) is None  # selected by name
    assert sel.which(unrecorded("delete_user")) == 1


def test_name_only_selectors_have_nothing_undecided() -> None:
    sel = selector(["bash", "delete_*"])
    assert not sel.conditional
    calls = [unrecorded("bash"), not_object("delete_x"), call("read", None)]
    undecided: list[int] = []
    assert list(sel.flags(calls, [c.name for c in calls], undecided)) == [1, 1, 0]
    assert undecided == []
    assert [sel.undecided(c) for c in calls] == [None, None, None]


def test_flags_lists_the_undecided_calls_unflagged() -> None:
    sel = selector([RM, "delete_*"])
    calls = [call("read", None, 1), call("bash", {"command": "rm -rf /"}, 2),
             unrecorded("bash", 3), call("bash", {"command": "ls"}, 4), not_object("bash", 5),
             unrecorded("delete_user", 6), unrecorded("read", 7)]
    names = [c.name for c in calls]
    undecided: list[int] = []
    assert list(sel.flags(calls, names, undecided)) == [0, 1, 0, 0, 0, 1, 0]
    assert undecided == [2, 4]  # calls 3 and 5: bash, arguments unreadable
    # without the list: the same flags
    assert list(sel.flags(calls, names)) == [0, 1, 0, 0, 0, 1, 0]


# ------------------------------------------------ arguments of another JSON type
BIG = {"tool": "refund", "args": {"amount": {"min": 500}, "currency": "USD"}}


def test_an_argument_of_a_type_the_constraint_cannot_judge_is_undecided() -> None:
    """{min: 500} judges numbers only: "900", [900], true or null is neither selected nor a
    "no" (JSON Schema would ignore `minimum` for them), unless another condition plainly
    fails."""
    sel = selector([BIG])
    assert sel.typed  # decided when compiled
    for amount in ("900", [900], True, None):
        c = call("refund", {"amount": amount, "currency": "USD"})
        assert (sel.which(c), sel.undecided(c)) == (None, 0), amount
        unfit = sel.unfit(c)
        assert unfit is not None and (unfit.key, unfit.shown) == ("amount", "{min: 500}")
    for args in ({"amount": "900", "currency": "EUR"}, {"amount": "900"},
                 {"amount": 20, "currency": "USD"}):
        c = call("refund", args)
        assert (sel.which(c), sel.undecided(c), sel.unfit(c)) == (None, None, None), args
    assert sel.which(call("refund", {"amount": 500.0, "currency": "USD"})) == 0


def test_an_explicit_type_or_no_typed_keyword_decides() -> None:
    for condition, value in (({"type": "number", "min": 500}, "900"),
                             ({"enum": [900]}, "900")):
        sel = selector([{"tool": "refund", "args": {"amount": condition}}])
        assert not sel.typed, condition
        c = call("refund", {"amount": value})
        assert (sel.which(c), sel.undecided(c)) == (None, None), condition


def test_a_literal_spelled_in_another_json_type_cannot_be_judged() -> None:
    """`{force: true}` against `"force": "true"` (or 1), `{amount: 900}` against
    `"amount": "900"`: JSON equality said no and the call passed a blocklist of it, but a
    tool that coerces its arguments takes them for the literal. Unknown, so reported; a
    value of another type that means something else is a plain no, as is text."""
    force = selector([{"tool": "delete_repo", "args": {"force": True}}])
    amount = selector([{"tool": "refund", "args": {"amount": 900}}])
    word = selector([{"tool": "refund", "args": {"mode": "fast"}}])
    assert force.typed and amount.typed and not word.typed
    unknown: tuple[tuple[Selector, object], ...] = (
        (force, "true"), (force, " TRUE "), (force, 1), (force, 1.0),
        (amount, "900"), (amount, "900.0"), (amount, " 9e2"))
    for sel, value in unknown:
        key = "force" if sel is force else "amount"
        c = call("delete_repo" if sel is force else "refund", {key: value})
        assert (sel.which(c), sel.undecided(c)) == (None, 0), (key, value)
        unfit = sel.unfit(c)
        assert unfit is not None and unfit.key == key, value
        assert sel.judge(c) == (None, (0, unfit)), value
    plain_noes: tuple[tuple[Selector, object], ...] = (
        (force, "false"), (force, 0), (force, "yes"), (force, None),
        (force, [True]), (amount, "901"), (amount, 900.5), (amount, True),
        (amount, "nine hundred"))
    for sel, value in plain_noes:
        key = "force" if sel is force else "amount"
        c = call("delete_repo" if sel is force else "refund", {key: value})
        assert (sel.which(c), sel.undecided(c), sel.unfit(c)) == (None, None, None), value
    # the literal itself, and a number written otherwise, is selected as before
    assert force.which(call("delete_repo", {"force": True})) == 0
    assert amount.which(call("refund", {"amount": 900.0})) == 0
    # a string literal and the boolean or number it spells
    spelled = selector([{"tool": "t", "args": {"flag": "true", "n": "5"}}])
    assert spelled.undecided(call("t", {"flag": True, "n": "5"})) == 0
    assert spelled.undecided(call("t", {"flag": "true", "n": 5})) == 0
    assert spelled.which(call("t", {"flag": "true", "n": "5"})) == 0


def test_a_literal_integer_past_the_floats_is_judged_by_equality() -> None:
    """A YAML integer has no bound: `{amount: 1000…0}` (401 digits) made the literal's
    spelling float() it, an OverflowError that stopped `run` and `validate` as an
    internal error. No string of 64 characters or fewer spells it, nor does a boolean:
    JSON equality alone, as for text."""
    big = 10 ** 400
    sel = selector([{"tool": "refund", "args": {"amount": big}}])
    assert sel.which(call("refund", {"amount": big})) == 0
    for value in (5, "5", "1e400", True, 1e308):
        c = call("refund", {"amount": value})
        assert (sel.which(c), sel.undecided(c), sel.unfit(c)) == (None, None, None), value


def test_flags_lists_the_calls_of_another_type() -> None:
    sel = selector([BIG, "delete_*"])
    calls = [call("refund", {"amount": 900, "currency": "USD"}, 1),
             call("refund", {"amount": "900", "currency": "USD"}, 2),
             call("refund", {"amount": "900", "currency": "EUR"}, 3),
             not_object("refund", 4), call("delete_x", {"a": "b"}, 5)]
    undecided: list[int] = []
    assert list(sel.flags(calls, [c.name for c in calls], undecided)) == [1, 0, 0, 0, 1]
    assert undecided == [1, 3]  # "900" in USD, and the arguments that are not an object
    # judge: which() and cannot_judge() in one pass, the same answers
    for c in calls:
        assert sel.judge(c) == (sel.which(c), sel.cannot_judge(c)), c
    assert [i for i, u in map(sel.judge, calls)] == [0, None, None, None, 1]


EMPTY_NAME = ("an empty tool name names no tool, so nothing would be checked; write the "
              "tool's name (a name, a glob or @group)")


@pytest.mark.parametrize(("field", "where"), [
    # the group's '' is at line 4, column 10 ("  g: [x, '']"); in
    # "    blocklist: [{tool: [x, '']}]" (line 8) the '' starts at column 28
    ("blocklist: ['@g']", "4:10"),
    ("blocklist: [{tool: [x, '']}]", "8:28"),
    ("blocklist: [{tool: '@g', args: {a: 1}}]", "4:10"),
])
def test_an_empty_tool_name_anywhere_in_a_field_is_a_config_error(
        tmp_path: Path, field: str, where: str) -> None:
    """``''`` in a group the field uses, or in a ``{tool: [...]}`` list, is no call's name
    either: such a blocklist blocked nothing and the run passed (exit 0), while ``''``
    written in the field itself was already an error."""
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntool_groups:\n'
        "  g: [x, '']\n"
        "tests:\n  - id: b\n    metric: tool_blocklist\n"
        f"    {field}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "agent-eval.yaml")
    assert info.value.problems == [f"agent-eval.yaml:{where}: {EMPTY_NAME}"]


@pytest.mark.parametrize(("key", "col"), [("''", 3), ("' '", 3), ("'@'", 3)])
def test_an_empty_group_name_says_so(tmp_path: Path, key: str, col: int) -> None:
    """A group named '' (or blank, or '@' alone): it said "write it without '@' (use it
    as '@')", which no group can be. The error is at the name (line 4, column 3)."""
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntool_groups:\n'
        f"  {key}: [x]\n"
        "tests:\n  - {id: b, metric: tool_blocklist, blocklist: [x]}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "agent-eval.yaml")
    name = key.strip("'")
    assert info.value.problems == [
        f"agent-eval.yaml:4:{col}: group name '{name}' is empty; give the group a name, "
        "and use it as '@NAME'"]
