"""Every rule page's example really triggers its rule (rules/docs/README.md: "Each page's
`yaml suite`, `yaml policy` and `jsonl trace` blocks are a complete example").

The blocks are written to a temporary folder and run through the real command line
(``agent-eval run``); the page's front-matter ``id`` must be among the reported rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import agent_eval
from agent_eval._cli import main
from agent_eval.checks import REGISTRY
from agent_eval.rules import catalogue

DOCS = Path(agent_eval.__file__).parent / "rules" / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.name != "README.md")
EXAMPLE_PAGES = [p for p in PAGES if p.relative_to(DOCS).parts[0] != "input"]
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TARGETS = {
    "yaml suite": "agent-eval.yaml",
    "yaml policy": "policy.yaml",
    "jsonl trace": "traces/example.jsonl",
}


def front_matter(page: Path) -> dict[str, Any]:
    m = FRONT.match(page.read_text(encoding="utf-8"))
    assert m, f"{page}: no front matter"
    data = yaml.safe_load(m.group(1))
    assert isinstance(data, dict), f"{page}: front matter is not a mapping"
    return data


def machine_blocks(page: Path) -> dict[str, str]:
    """The page's example blocks by info string; each kind at most once."""
    blocks: dict[str, str] = {}
    for info, body in FENCE.findall(page.read_text(encoding="utf-8")):
        info = " ".join(info.split())
        if info in TARGETS:
            assert info not in blocks, f"{page}: two '{info}' blocks"
            blocks[info] = body
    return blocks


def page_id(page: Path) -> str:
    return page.relative_to(DOCS).with_suffix("").as_posix()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_front_matter_parses(page: Path) -> None:
    meta = front_matter(page)
    for key in ("id", "name", "short", "level", "tags"):
        assert key in meta, f"{page}: front matter lacks '{key}'"
    # The file's place in the tree is its id: args_valid/maximum.md is args_valid/maximum.
    assert meta["id"] == page_id(page)
    assert meta["level"] in ("error", "warning", "note")
    assert isinstance(meta["tags"], list)
    sev = meta.get("security_severity")
    assert sev is None or 0.0 <= float(sev) <= 10.0


def test_catalogue_reads_every_page() -> None:
    assert set(catalogue()) == {front_matter(p)["id"] for p in PAGES}


def test_every_rule_a_check_can_report_has_a_page() -> None:
    documented = {front_matter(p)["id"] for p in PAGES}
    reportable = {rule for spec in REGISTRY.values() for rule in spec.rules}
    assert reportable, "the registry lists no rules"
    assert sorted(reportable - documented) == []


def test_input_pages_have_no_machine_blocks() -> None:
    for page in PAGES:
        if page.relative_to(DOCS).parts[0] == "input":
            assert machine_blocks(page) == {}, page


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=page_id)
def test_example_triggers_its_rule(page: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    rule = front_matter(page)["id"]
    blocks = machine_blocks(page)
    assert "yaml suite" in blocks and "jsonl trace" in blocks, f"{page}: incomplete example"
    if rule.startswith("args_valid/"):
        assert "yaml policy" in blocks, f"{page}: an args_valid example needs a policy"
    for info, body in blocks.items():
        target = tmp_path / TARGETS[info]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"),
                 "--output-dir", str(out), "--fail-on", "never", "-q"])
    captured = capsys.readouterr()
    assert code == 0, f"{page}: exit {code}\n{captured.err}"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["input_errors"] == []
    reported = {v["rule"] for t in results["tests"] for v in t["violations"]}
    assert rule in reported, f"{page}: reported {sorted(reported)}"
