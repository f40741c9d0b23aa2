from __future__ import annotations

import re
from pathlib import Path

from agent_eval import rules
from agent_eval._cli import main
from agent_eval.checks import REGISTRY
from agent_eval.coverage import RULE as COVERAGE_RULE
from agent_eval.judge.summary import RULES as JUDGE_RULES
from agent_eval.live import INPUT_RULES as LIVE_INPUT_RULES
from agent_eval.live import PROBE_RULES, SERVER_RULES
from agent_eval.rule_ids import IMPORT_UNSUPPORTED
from agent_eval.scenarios.evaluate import RULES as SCENARIO_RULES
from agent_eval.sections import CRITERION_RULES

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "How to fix"]
INPUT_RULES = {"input/parse_error", "input/invalid_event", "input/unmatched_result",
               "input/unreadable_file", "input/no_traces", "input/event_after_end",
               "input/unknown_format", "input/outside_root", "input/limit_exceeded",
               "input/reader_error"}


def test_every_rule_a_check_can_report_is_documented() -> None:
    documented = set(rules.catalogue())
    produced = ({r for spec in REGISTRY.values() for r in spec.rules} | INPUT_RULES
                | set(SCENARIO_RULES) | {COVERAGE_RULE} | set(JUDGE_RULES)
                | {*PROBE_RULES, *SERVER_RULES, *LIVE_INPUT_RULES}
                | {r.id for r in CRITERION_RULES.values()} | {IMPORT_UNSUPPORTED.id})
    assert produced - documented == set()
    assert documented - produced == set()


def test_pages_have_the_five_sections() -> None:
    for doc in rules.catalogue().values():
        for title in SECTIONS:  # none empty
            assert doc.section(title), f"{doc.id}: no '{title}' section"
        assert doc.level in ("error", "warning", "note")
        # ruff's sections and order; "Use instead" is the corrected example
        assert re.findall(r"^## (.*)$", doc.markdown, re.M) == SECTIONS, doc.id


def test_docs_rules_index_is_current() -> None:
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules.index_markdown()


def test_explain_prints_the_page(capsys: object) -> None:
    import pytest

    assert isinstance(capsys, pytest.CaptureFixture)
    assert main(["explain", "tool_blocklist"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tool_blocklist: ")
    assert "WHAT IT DOES" in out and "HOW TO FIX" in out
    # the corrected example, as plain text, between the example and the advice
    assert out.index("EXAMPLE") < out.index("USE INSTEAD") < out.index("HOW TO FIX")
    assert '"tool":"request_account_closure"' in out.split("USE INSTEAD")[1]
