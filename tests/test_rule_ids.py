"""rule_ids.py declares every rule once: each declaration has its page, each page is declared,
and no rule-id string is written anywhere else in src."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import agent_eval
from agent_eval import rule_ids
from agent_eval.errors import InputError
from agent_eval.rule_ids import Rule, UndeclaredRule, member, rule

SRC = Path(agent_eval.__file__).parent
DOCS = SRC / "rules" / "docs"

# Folders and files of src whose rule-id literals are not converted yet (none now: every
# module builds its rule ids from rule_ids.py).
NOT_YET_CONVERTED: tuple[str, ...] = ()

# Strings of the rule-id shape that are not rule ids, with the reason.
NOT_RULE_IDS = {
    # the JUnit error type of a scenario that could not be checked and has no finding
    ("renderers/junit.py", "scenario/error"),
}


def _front_matter(page: Path) -> dict[str, Any]:
    m = re.match(r"\A---\n(.*?)\n---\n", page.read_text(encoding="utf-8"), re.S)
    assert m, f"{page}: no front matter"
    meta: dict[str, Any] = yaml.safe_load(m.group(1))
    return meta


def _pages() -> dict[str, Path]:
    return {p.relative_to(DOCS).as_posix(): p for p in sorted(DOCS.rglob("*.md"))
            if p.name != "README.md"}


def test_every_declared_rule_has_a_page_that_agrees() -> None:
    declared = rule_ids.declared()
    assert len(declared) > 100
    for r in declared:
        page = DOCS / r.page
        assert page.is_file(), f"{r.id}: no page {r.page}"
        meta = _front_matter(page)
        assert (meta["id"], meta["name"], meta.get("level", "error")) == (r.id, r.name, r.level)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name


def test_every_page_is_declared() -> None:
    pages = _pages()
    assert len(pages) > 100
    for rel in pages:
        declared = rule(rel.removesuffix(".md"))
        assert declared.page == rel


def test_every_declaration_is_a_module_constant_named_after_its_id() -> None:
    constants = {name: value for name, value in vars(rule_ids).items()
                 if isinstance(value, Rule)}
    assert sorted(constants) == sorted(r.id.upper().replace("/", "_")
                                       for r in rule_ids.declared())
    for name, value in constants.items():
        assert name in rule_ids.__all__
        assert name == value.id.upper().replace("/", "_")


def test_lookups() -> None:
    assert rule("args_valid/maximum") is rule_ids.ARGS_VALID_MAXIMUM
    assert member("sequence_valid", "count") is rule_ids.SEQUENCE_VALID_COUNT
    assert rule("tool_blocklist").group == "tool_blocklist"
    assert rule("tool_blocklist").key == "tool_blocklist"
    assert rule_ids.ARGS_VALID_NOT.key == "not"
    assert rule_ids.PROBE_TIMEOUT.group == "probe"
    for bad in ("args_valid/maxium", "input/parse-error", "", "tool_blocklist/x"):
        with pytest.raises(UndeclaredRule, match="not declared"):
            rule(bad)
    with pytest.raises(UndeclaredRule):
        member("judge", "nope")


def test_input_error_is_built_from_the_declaration() -> None:
    err = rule_ids.INPUT_PARSE_ERROR.input_error("t.jsonl", 3, "bad")
    assert err == InputError("input/parse_error", "t.jsonl", 3, "bad")


# ------------------------------------------------------------------ no literals elsewhere
_GROUPS = sorted({r.group for r in rule_ids.declared() if "/" in r.id})
_ID = re.compile(r"[a-z][a-z_]*(/[a-z_]+)?")  # what a rule id compared with may look like
_SHAPE = re.compile(rf"(?:{'|'.join(map(re.escape, _GROUPS))})/[A-Za-z0-9_.{{}}]*")


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every rule-id-like string written in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _SHAPE.fullmatch(node.value):
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.keyword) and node.arg == "rule":
            if isinstance(node.value, ast.Constant | ast.JoinedStr):
                found.append((node.value.lineno, f"rule={ast.unparse(node.value)}"))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if (any(isinstance(s, ast.Attribute) and s.attr == "rule" for s in sides)
                    and any(isinstance(s, ast.Constant) and isinstance(s.value, str)
                            and _ID.fullmatch(s.value) for s in sides)):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_finds_each_kind_of_literal() -> None:
    code = '\n'.join([
        'InputError("input/parse_error", f, 1, m)',
        'x = f"args_valid/{kind}"',
        'Finding(rule="tool_blocklist")',
        'if v.rule == "tool_blocklist": pass',
        'if "/" in v.rule: pass',
        'doc = "input/parse_error is a rule"  # prose is not an id',
        'metric = "tool_blocklist"',
    ])
    lines = [line for line, _ in _literals(ast.parse(code))]
    assert sorted(lines) == [1, 2, 3, 4]


def test_no_rule_id_is_written_outside_rule_ids() -> None:
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "rule_ids.py" or rel.startswith(NOT_YET_CONVERTED):
            continue
        for line, text in _literals(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, text) not in NOT_RULE_IDS:
                bad.append(f"src/agent_eval/{rel}:{line}: {text}")
    assert not bad, "use the declarations of agent_eval/rule_ids.py:\n" + "\n".join(bad)


def test_a_criterion_reports_the_rule_of_its_kind() -> None:
    from agent_eval.sections import CRITERION_RULES, CriterionResult

    assert sorted(CRITERION_RULES) == ["blocking", "by_category", "composite", "regression",
                                       "required", "warning"]
    c = CriterionResult.from_dict({"kind": "regression"})
    assert c.rule is rule_ids.CRITERIA_REGRESSION
    assert CriterionResult.from_dict({}).rule is rule_ids.CRITERIA_BLOCKING
    with pytest.raises(ValueError, match="unknown criterion kind 'nope'"):
        CriterionResult.from_dict({"kind": "nope"})
