"""Issue 11 items 12 and 13: text from traces and baselines reaches the Markdown summary
(the PR comment, the job summary, a check run's summary) inert, as GitHub renders it
(cmark-gfm, then its mention and reference filters: tests/action/markdown_check.py), and
the hidden marker is the first line, never produced by trace text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from markdown_check import problems

from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, TraceRef
from agent_eval.renderers import RenderContext, markdown
from agent_eval.results import Results
from agent_eval.results import TestResult as TResult
from agent_eval.sections import Comparison, CriterionResult, NoBaseline, ScenarioResult

# what a stranger's trace or base-branch results can hold, as issue 11 describes it
EVIL = [
    "@octocat @org/team",
    "[verified: safe to merge](https://evil.example)",
    "![logo](https://evil.example/pixel.png)",
    "<img src=x onerror=alert(1)>",
    "<a href='https://evil.example'>click</a>",
    "see https://evil.example/bare and www.evil.example",
    # GFM autolinks "www." after "_" (a word character for a regex's \b), "*", "~", "("
    "Urgent: reset your token at_www.evil-phish.com/login",
    "x_www.evil.example _www.evil.example x_WwW.evil.example *www.evil.example",
    "~www.evil.example (www.evil.example) x_http://evil.example x_ftp://evil.example",
    "a_@evil.example _@evil.example mailto:a@evil.example xmpp:a@evil.example/x",
    "mail admin@evil.example",
    "&#64;octocat &commat;octocat",
    "fixes #1 and acme/other#12",
    "closes GH-7 and gh-8",  # GitHub's other spelling of an issue reference
    "<!-- agent-eval:other -->",
    "`code` ``two`` | cell | break",
    "line one\n# heading\n- item\n> quote\n1. first",
    "**bold** _em_ ~~strike~~ $x^2$",
    "<details><summary>hidden</summary>",
    "\x1b[31mred\x1b[0m \u202eevil\u202c zero\u200bwidth",
]
CTX = RenderContext(repo_url="https://github.com/acme/agent", sha="0" * 40,
                    run_url="https://github.com/acme/agent/actions/runs/1")


def _ours(url: str) -> bool:
    return url.startswith("https://github.com/acme/agent/")


def _finding(n: int, text: str) -> Finding:
    return Finding(rule="args_valid/maximum", severity="error", message=text, test="t",
                   config=ConfigRef("policies/p.yaml", n + 1, 3, "k"),
                   trace=TraceRef(f"traces/{text[:20]}.jsonl", 2, text), tool=text,
                   argument=text, value=text, constraint=text,
                   details={"violation": text})


def _results(suite: str = "adv") -> Results:
    tests = [TResult(text, "args_valid", "error", "fail", 0, 1, 1, 1, [_finding(n, text)])
             for n, text in enumerate(EVIL)]
    found = [_finding(n, text) for n, text in enumerate(EVIL)]
    for f in found:  # the same texts without argument: the message as running text
        f.argument = None
    tests.append(TResult("plain", "sequence_valid", "error", "fail", 0, 1, 1, 1, found))
    scenarios = [{"id": text, "status": "fail", "category": text, "required": False,
                  "traces_total": 1, "traces_passed": 0, "score": 0.0, "findings": []}
                 for text in EVIL]
    criteria = [{"name": text, "kind": "blocking", "status": "fail", "threshold": 1,
                 "value": text, "message": text} for text in EVIL]
    errors = [InputError("input/parse", text, 1, text) for text in EVIL]
    return Results(suite=suite, config="agent-eval.yaml", verdict="fail",
                   counts={"traces": 1, "tool_calls": 1, "violations": 2 * len(EVIL),
                           "input_errors": len(errors)},
                   tests=tests, traces=[], input_errors=errors,
                   scenarios=[ScenarioResult.from_dict(s) for s in scenarios],
                   metrics={"pass_rate": 0.0},
                   criteria=[CriterionResult.from_dict(c) for c in criteria])


def _baseline() -> Comparison:
    """A comparison whose base-side strings (statuses, scores, ids, messages, the source)
    all came from a base-branch results file (read as a results file is: untyped values
    where numbers belong too)."""
    scen = [{"id": text, "change": change, "base_status": text, "head_status": "fail",
             "base_score": text, "head_score": 0.0}
            for text in EVIL for change in ("regression", "fix", "changed")]
    absent = [{"rule": text, "severity": "error", "message": text, "test": text,
               "config": {"file": text, "line": 1, "column": 1, "key_path": text}}
              for text in EVIL]
    return Comparison.from_dict({
        "source": {"kind": "artifact", "description": EVIL[1]}, "suite": EVIL[0],
        "verdict": "pass", "counts": {"traces": 1}, "metrics": {"pass_rate": EVIL[2]},
        "scenarios": scen, "regressions": 1, "fixes": 1, "new_violations": 1,
        "absent_violations": len(absent),
        "findings": {"new": [], "unchanged": [], "absent": absent},
        "policy": {"changed": True, "message": EVIL[3]}})


def test_every_trace_derived_string_is_inert_in_the_summary() -> None:
    text = markdown.render(_results(), CTX)
    for evil in EVIL[:3]:  # the texts are there, shown
        assert markdown.md_text(evil) in text or markdown.md_code(evil) in text
    assert problems(text, _ours, marker="adv") == []


def test_every_baseline_derived_string_is_inert_in_the_summary() -> None:
    results = _results()
    results.baseline = _baseline()
    text = markdown.render(results, CTX)
    assert "### 🔻 Regressions" in text and "Violations gone since the base branch" in text
    assert problems(text, _ours, marker="adv") == []
    no_base = _results()
    no_base.baseline = NoBaseline(" ".join(EVIL))
    assert problems(markdown.render(no_base, CTX), _ours, marker="adv") == []


def test_the_checker_sees_what_the_old_escaping_let_through() -> None:
    """The check is not vacuous: running text escaped as before this change (only ``|``,
    ``<``, ``>`` and ``\\``) still links, mentions and references."""
    def old(text: str) -> str:
        s = " ".join(text.split())
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")

    found = problems("\n\n".join(old(t) for t in EVIL))
    assert any(p.startswith("link to https://evil.example") for p in found)
    assert "tag <img {'src': 'https://evil.example/pixel.png', 'alt': 'logo'}>" in found
    assert "mention '@octocat'" in found and "team mention '@org/team'" in found
    assert "reference 'acme/other#12'" in found
    assert "reference 'GH-7'" in found and "reference 'gh-8'" in found


@pytest.mark.parametrize("text", EVIL)
def test_md_text_and_md_code_one_by_one(text: str) -> None:
    for shown in (markdown.md_text(text), markdown.md_code(text), markdown.cell(text)):
        assert "\n" not in shown and "\x1b" not in shown and "\u202e" not in shown
        assert problems(f"| a |\n|:--|\n| {shown} |") == []
        assert problems(f"- {shown}") == []


def test_md_text_by_hand() -> None:
    zw = markdown.ZWSP
    assert markdown.md_text("[v](https://evil.example)") == "\\[v\\](https\\://evil.example)"
    assert markdown.md_text("@octocat #12 www.x.org") == f"@{zw}octocat #{zw}12 www\\.x.org"
    assert markdown.md_text("a_b _c_ **d**") == "a_b \\_c\\_ \\*\\*d\\*\\*"
    # every "www." is broken, whatever precedes it (GFM links "_www." and "at_www.")
    assert markdown.md_text("at_www.x.org _Www.y") == "at_www\\.x.org \\_Www\\.y"
    assert markdown.md_text("# h") == "\\# h" and markdown.md_text("1. x") == "1\\. x"
    assert markdown.md_text("0.5 -3") == "0.5 -3"  # numbers stay as they are
    assert markdown.md_text("&#64;x $y$") == f"\\&#{zw}64;x \\$y\\$"
    assert markdown.md_text("GH-7 gh-8 GH-x") == f"GH-{zw}7 gh-{zw}8 GH-x"
    # invisible: the Arabic letter mark (a bidi mark), tag characters (U+E0041 an unseen
    # "A": text no reader of the comment sees), interlinear annotation marks
    hidden = "ok\u061c\U000e0001\U000e0041\U000e0042\U000e007f\ufff9\ufffb go"
    assert markdown.md_text(hidden) == "ok go" and markdown.md_code(hidden) == "`ok go`"
    assert markdown.md_code("a`b") == "`` a`b ``" and markdown.md_code("") == "` `"
    assert markdown.md_code("@octocat [x](y)") == "`@octocat [x](y)`"  # inert in a span


def test_a_trace_id_holding_another_suites_marker_is_not_a_marker() -> None:
    """Suite ``adv``'s trace id holds ``<!-- agent-eval:other -->``: the body of adv's
    comment has exactly one marker, its own, on the first line."""
    results = _results("adv")
    text = markdown.render(results, CTX)
    lines = text.splitlines()
    assert lines[0] == "<!-- agent-eval:adv -->"
    assert "<!-- agent-eval:other -->" in text  # the trace id, shown ...
    assert [ln for ln in lines[1:] if ln.strip().startswith("<!--")] == []  # ... not a line
    assert problems(text, _ours, marker="adv") == []  # one HTML comment: the first line
    assert markdown.marker("a --> b\nc") == "a --&gt; b c"
