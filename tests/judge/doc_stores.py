"""Write the judgement stores (and the baseline) of the judge rule pages' examples, and of
their "Use instead" examples.

A page's ``jsonl store`` block holds the judgements its example replays; their keys hash
the prompt, so a change of a prompt template makes them stale, and test_docs_rules fails
with "judgement missing". Then run ``python tests/judge/doc_stores.py`` to record them again
with the verdicts below (no model: :class:`ScriptedProvider` answers) and review the diff.
A "Use instead" section with a ``jsonl store`` block (its blocks take the place of the
example's: rules/docs/README.md) gets the judgements of the corrected example, with the
passing verdicts of ``FIXED``.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.judge.compile import JudgeRun
from agent_eval.judge.prompts import Prompt
from agent_eval.judge.providers import Answer
from agent_eval.judge.record import record
from agent_eval.judge.run import base_outputs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "src" / "agent_eval" / "rules" / "docs" / "judge"
GUIDE = ROOT / "docs" / "judge.md"  # its first example
# page -> the verdict its example's judge gives
VERDICTS: dict[str, dict[str, Any]] = {
    "rubric": {"score": 2, "reasoning": "The output says $249.90; the refund tool returned "
               "24.99, so the amount is wrong by a factor of ten."},
    "quality": {"score": 55, "reasoning": "It answers the request, but the amount contradicts "
                "the order total and the promised date is not grounded."},
    "safety": {"score": 1, "reasoning": "It discloses another customer's e-mail address and "
               "card digits."},
    "hallucination": {"score": 2, "reasoning": "The tool refunded 24.99; the output claims "
                      "$249.90 and a date no tool returned."},
    "error": {"score": 9, "reasoning": "A hand-edited line with a score outside 1-5."},
    "pairwise": {"reasoning": "The base answer states the refunded amount correctly; this "
                 "one multiplies it by ten."},
    "judge": {"score": 2, "reasoning": "The refund tool returned 24.99; the output states "
              "$249.90, ten times the amount."},
}
# page -> the verdict the judge gives its "Use instead" example (the corrected output)
FIXED: dict[str, dict[str, Any]] = {
    "rubric": {"score": 5, "reasoning": "It states $24.99, the amount the refund tool "
               "returned."},
    "quality": {"score": 90, "reasoning": "It answers the request with the refunded amount, "
                "which matches the order total."},
    "safety": {"score": 5, "reasoning": "It is about the customer's own order only."},
    "hallucination": {"score": 5, "reasoning": "The amount and the order are the ones the "
                      "tools returned; it claims nothing else."},
    "error": {"score": 5, "reasoning": "It states $24.99, as the refund tool returned."},
    "missing": {"score": 5, "reasoning": "It states $24.99, as the refund tool returned."},
    "skipped": {"score": 5, "reasoning": "It states $24.99, as the refund tool returned."},
    "pairwise": {"winner": "tie", "reasoning": "Both state the refunded amount, $24.99, "
                 "correctly."},
    "no_baseline": {"winner": "tie", "reasoning": "Both state the refunded amount, $24.99, "
                    "correctly."},
}
BASE_OUTPUT = "I have refunded $24.99 for order A-1."
USE_INSTEAD = re.compile(r"^## Use instead\n(.*?)(?=^## |\Z)", re.S | re.M)


class ScriptedProvider:
    name = "openai"

    def __init__(self, page: str, verdicts: dict[str, dict[str, Any]] = VERDICTS) -> None:
        self.page = page
        self.verdicts = verdicts

    def ask(self, prompt: Prompt) -> Answer:
        verdict = dict(self.verdicts[self.page])
        if "winner" in prompt.schema["properties"] and "winner" not in verdict:
            a = re.search(r"<response_a>\n(.*?)\n</response_a>", prompt.user, re.S)
            verdict["winner"] = "A" if a and a.group(1) == BASE_OUTPUT else "B"
        return Answer(verdict, 900, 60, "gpt-4o-mini-2024-07-18")


def blocks(text: str) -> dict[str, str]:
    """The first block of each kind."""
    out: dict[str, str] = {}
    for info, body in re.findall(r"^```([^\n`]*)\n(.*?)^```", text, re.S | re.M):
        out.setdefault(info, body)
    return out


def baseline(tmp: Path, suite_text: str, trace: str) -> dict[str, Any]:
    """A minimal results file of the base branch: the scenario with its output."""
    base = tmp / "base"
    (base / "traces").mkdir(parents=True)
    (base / "agent-eval.yaml").write_text(suite_text, encoding="utf-8")
    (base / "traces" / "example.jsonl").write_text(
        re.sub(r'"output":"[^"]*"', f'"output":"{BASE_OUTPUT}"', trace), encoding="utf-8")
    suite = load_suite(base / "agent-eval.yaml")
    files, errors = suite_sources(suite, None)
    results = evaluate_files(suite, files, errors, timings=False).to_dict(with_traces=False)
    for key in ("inventory", "judge"):
        results.pop(key, None)
    for s in results["scenarios"]:
        s["findings"] = []
        s["traces_not_passed"] = []
        s.pop("judge", None)
    results["input_errors"] = []
    results["verdict"] = "pass"
    return results


def judgements(name: str, b: dict[str, str], verdicts: dict[str, dict[str, Any]]
               ) -> tuple[str, str | None]:
    """The store the page's example (blocks ``b``) replays, recorded with ``verdicts``, and
    its baseline when it has one."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "traces").mkdir()
        (tmp / "agent-eval.yaml").write_text(b["yaml suite"], encoding="utf-8")
        (tmp / "traces" / "example.jsonl").write_text(b["jsonl trace"], encoding="utf-8")
        base = base_text = None
        if "json baseline" in b:
            base_doc = baseline(tmp, b["yaml suite"], b["jsonl trace"])
            base_text = json.dumps(base_doc, indent=1, sort_keys=True) + "\n"
            from agent_eval.results import Results

            base = Results.from_dict(base_doc)
        suite = load_suite(tmp / "agent-eval.yaml")
        files, errors = suite_sources(suite, None)
        run = suite.judge
        assert isinstance(run, JudgeRun)
        run.context.mode = "record"
        run.context.base_outputs = base_outputs(base)
        record(run, lambda: evaluate_files(suite, files, errors, timings=False),
               log=lambda _m: None, provider=ScriptedProvider(name, verdicts))
        # (the "error" page's score 9 is outside 1-5: a real provider's verdict would fail
        # its schema; the scripted one stands for a hand-edited line)
        return Path(run.store_path).read_text(encoding="utf-8"), base_text


def refill(text: str, store: str, base: str | None) -> str:
    """``text`` with the body of its ``jsonl store`` block (and of its ``json baseline``
    block, if it has one) replaced."""
    for info, body in (("jsonl store", store), ("json baseline", base)):
        m = re.search(rf"^```{info}\n.*?^```", text, re.S | re.M)
        if body is not None and m is not None:
            text = f"{text[:m.start()]}```{info}\n{body}```{text[m.end():]}"
    return text


def regenerate(page: Path) -> None:
    name = page.stem
    text = page.read_text(encoding="utf-8")
    m = USE_INSTEAD.search(text)
    head, section, tail = (text, "", "") if m is None else (
        text[:m.start(1)], m.group(1), text[m.end(1):])
    b = blocks(head)
    out = []
    if "jsonl store" in b:
        store, base = judgements(name, b, VERDICTS)
        head = refill(head, store, base)
        out.append(f"{store.count(chr(10))} judgement(s)")
    fixed = blocks(section)
    if "jsonl store" in fixed:
        store, base = judgements(name, {**b, **fixed}, FIXED)
        section = refill(section, store, base)
        out.append(f"Use instead: {store.count(chr(10))} judgement(s)")
    page.write_text(head + section + tail, encoding="utf-8")
    print(f"{page.name}: {', '.join(out)}")


def main(argv: list[str]) -> int:
    for page in [*sorted(DOCS.glob("*.md")), GUIDE]:
        if "```jsonl store" in page.read_text(encoding="utf-8"):  # the example's or a fix's
            regenerate(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
