"""What GitHub makes of a Markdown text agent-eval posted (a comment, a job summary, a check
run's summary), to check that text from traces and baselines stays inert.

The Markdown goes through cmark-gfm, GitHub's own parser (the ``cmarkgfm`` binding), with
GitHub's extensions (tables, autolinks, strikethrough) and raw HTML kept, so an injected
tag shows. Then the two things GitHub's pipeline adds afterwards on the HTML's text outside
``code``, ``pre`` and links are looked for: ``@user`` / ``@org/team`` mentions and
``#123`` / ``owner/repo#123`` / ``GH-123`` references (the patterns of html-pipeline's
MentionFilter and of GitHub's issue reference syntax).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import cmarkgfm  # type: ignore[import-untyped]
from cmarkgfm.cmark import Options  # type: ignore[import-untyped]

MENTION = re.compile(r"(?:^|\W)@((?>[a-z0-9][a-z0-9-]*))(?!/)"
                     r"(?=\.+[ \t\W]|\.+$|[^0-9a-zA-Z_.]|$)", re.I)
TEAM = re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)/([a-z0-9][a-z0-9_-]*)", re.I)
REFERENCE = re.compile(r"(?:^|[^\w/#])(?:[\w.-]+/[\w.-]+)?#\d+\b"
                       r"|(?:^|\W)GH-\d+\b", re.I)  # "GH-26" refers to issue 26 too
# what agent-eval's own Markdown makes; anything else came from the input
TAGS = {"p", "h2", "h3", "h4", "ul", "li", "code", "table", "thead", "tbody", "tr", "th",
        "td", "details", "summary", "strong", "hr", "blockquote", "a", "br"}
INERT = {"code", "pre", "a"}  # GitHub adds no mention or reference inside these


def to_html(markdown: str) -> str:
    html: str = cmarkgfm.github_flavored_markdown_to_html(markdown,
                                                          options=Options.CMARK_OPT_UNSAFE)
    return html


class _Walk(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.comments: list[str] = []
        self.live_text: list[str] = []  # text GitHub scans for mentions and references
        self._inert = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in INERT:
            self._inert += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in INERT:
            self._inert -= 1

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if not self._inert:
            self.live_text.append(data)


def problems(markdown: str, link_ok: Callable[[str], bool] = lambda _url: False,
             marker: str | None = None) -> list[str]:
    """Everything in ``markdown`` (as GitHub renders it) that is not inert: a tag
    agent-eval does not make, an image, a link to a URL ``link_ok`` refuses, an HTML
    comment other than the marker (which must be the first line), a mention or a
    reference."""
    walk = _Walk()
    walk.feed(to_html(markdown))
    found = []
    for tag, attrs in walk.tags:
        if tag not in TAGS:
            found.append(f"tag <{tag} {attrs}>")
        elif tag == "a" and not link_ok(str(attrs.get("href"))):
            found.append(f"link to {attrs.get('href')}")
    expected = [f" agent-eval:{marker} "] if marker is not None else []
    if walk.comments != expected:
        found.append(f"HTML comments {walk.comments} (expected {expected})")
    if marker is not None and markdown.split("\n", 1)[0] != f"<!-- agent-eval:{marker} -->":
        found.append(f"the first line is not the marker: {markdown.split(chr(10), 1)[0]!r}")
    text = "".join(walk.live_text)
    for name, pattern in (("mention", MENTION), ("team mention", TEAM),
                          ("reference", REFERENCE)):
        found += [f"{name} {m.group(0).strip()!r}" for m in pattern.finditer(text)]
    return found
