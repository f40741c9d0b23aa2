"""The rule catalogue: one Markdown page per rule id under ``rules/docs/``.

Each page has front matter (id, name, short, level, tags, security_severity) and the
sections "What it does / Why is this bad? / Example / Use instead / How to fix" ("Use
instead" is the corrected example: rules/docs/README.md). The same text is printed by
``agent-eval explain`` and embedded as SARIF rule help.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from agent_eval.yamlpos import safe_load

__all__ = ["RuleDoc", "catalogue", "get", "index_markdown"]

_FRONT = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)


@dataclass(frozen=True)
class RuleDoc:
    id: str
    name: str
    short: str
    level: str
    tags: tuple[str, ...]
    security_severity: str | None
    markdown: str  # the body: What it does / ... / Example / Use instead / How to fix

    def section(self, title: str) -> str:
        m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.markdown, re.S | re.M)
        return m.group(1).strip() if m else ""

    @property
    def full(self) -> str:
        """The first paragraph of "What it does"."""
        return self.section("What it does").split("\n\n")[0].replace("\n", " ")

    @property
    def text(self) -> str:
        """Plain text: fenced blocks kept, Markdown markers removed."""
        out = []
        for line in self.markdown.splitlines():
            if line.startswith("```"):
                continue
            if line.startswith("## "):
                line = line[3:].upper()
            out.append(line.replace("`", ""))
        return f"{self.id}: {self.short}\n\n" + "\n".join(out).strip() + "\n"


def _parse(text: str, origin: str) -> RuleDoc:
    m = _FRONT.match(text)
    if not m:
        raise ValueError(f"{origin}: rule page without front matter")
    meta: dict[str, Any] = safe_load(m.group(1))
    sev = meta.get("security_severity")
    return RuleDoc(
        id=str(meta["id"]), name=str(meta["name"]), short=str(meta["short"]),
        level=str(meta.get("level", "error")), tags=tuple(meta.get("tags") or ()),
        security_severity=None if sev is None else str(sev), markdown=m.group(2).strip() + "\n",
    )


@cache
def catalogue() -> dict[str, RuleDoc]:
    """Every documented rule, by id, sorted."""
    docs: dict[str, RuleDoc] = {}
    root = resources.files("agent_eval.rules") / "docs"
    stack = [root]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                stack.append(entry)
            elif entry.name.endswith(".md") and entry.name != "README.md":
                doc = _parse(entry.read_text(encoding="utf-8"), entry.name)
                docs[doc.id] = doc
    return dict(sorted(docs.items()))


def get(rule_id: str) -> RuleDoc | None:
    return catalogue().get(rule_id)


def index_markdown() -> str:
    """docs/rules.md: every rule id with its short description, grouped."""
    groups: dict[str, list[RuleDoc]] = {}
    for doc in catalogue().values():
        groups.setdefault(doc.id.split("/", 1)[0], []).append(doc)
    out = [
        "# Rules",
        "",
        "Every finding has one of these stable rule ids. `agent-eval explain RULE` prints the",
        "rule's page (What it does / Why is this bad? / Example / Use instead / How to fix); the",
        "pages live in [`src/agent_eval/rules/docs/`](../src/agent_eval/rules/docs/) and are",
        "embedded in the package. This index is generated from them (a test keeps it current).",
        "",
    ]
    for group, docs in groups.items():
        out += [f"## {group}", "", "| rule | level | security-severity | what |",
                "|---|---|---|---|"]
        for d in docs:
            path = f"../src/agent_eval/rules/docs/{d.id}.md"
            out.append(f"| [`{d.id}`]({path}) | {d.level} | {d.security_severity or ''} | "
                       f"{d.short} |")
        out.append("")
    return "\n".join(out)
