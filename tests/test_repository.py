"""The repository stands on its own: nothing in it cites a document that is not in it, or a
path of the machine it was written on.

- The product's specification (a set of pages outside the repository) must not be cited by
  page name: a docstring saying "see the metrics page, section 3" points nowhere for a reader
  of the repository. Cite the project's own pages instead (``docs/scenarios.md "Suite
  metrics"``); a bare page name is fine only for a sibling that exists (a link between
  ``docs/`` pages).
- Every ``docs/….md`` path mentioned anywhere exists, and a quoted name after it
  (``docs/outputs.md "SARIF 2.1.0"``, also after ``README.md``) is one of its headings or
  is in its text (a rule id of a table, a paragraph's lead word).
- Every relative link of a Markdown file resolves.
- No file names an absolute path of the development machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

SCANNED = ["src", "schemas", "docs", "tests", "bench", "scripts", "examples", ".github", ".ci",
           "README.md", "action.yml", "Dockerfile", "pyproject.toml", "package.json"]
SKIPPED_DIRS = {"__pycache__", "node_modules", ".venv", ".git", ".mypy_cache", ".ruff_cache",
                ".pytest_cache", ".hypothesis"}
# The specification's page names (its pages live outside the repository).
SPEC_PAGE = re.compile(r"(?<![\w/.-])(action|config|metrics|outputs|product|testing|traces)"
                       r"\.md\b")
# The documents the product was written from (not in the repository either), as the user
# docs once cited them: "the seed's line", "seed 5.5", "the metrics guide".
SOURCE_DOC = re.compile(r"\b(?:the seeds?\b|seeds?'s?(?=\s)|seeds? [0-9]|seed (?:metrics?|"
                        r"documents?)\b|(?:both|every|scenario)\s+seeds?\b|(?:the )?metrics guide|"
                        r"the product's specification|where the spec is silent)", re.I)
DOCS_PATH = re.compile(r"(?<![\w/.-])((?:docs/[\w./-]+|README)\.md)(?:\s+(?:\"([^\"\n]+)\"|"
                       r"'([^'\n]+)'|\\\"([^\"\\\n]+)\\\"))?")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
# an absolute path starting at this machine's /work or /root (not /home/runner/work/…)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:" + "work|root" + r")/")


def text_files() -> Iterator[tuple[Path, str]]:
    for name in SCANNED:
        top = ROOT / name
        paths = [top] if top.is_file() else sorted(
            Path(d, f) for d, dirs, files in os.walk(top)
            if not dirs.__setitem__(slice(None), sorted(set(dirs) - SKIPPED_DIRS))
            for f in files)
        for path in paths:
            try:
                yield path, path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary (a .eval archive, an image)


def sections(path: Path) -> tuple[list[str], str]:
    """The page's headings and its whole text, in lower case."""
    text = path.read_text(encoding="utf-8").lower()
    return [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")], text


def where(path: Path, text: str, offset: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, offset) + 1}"


def test_there_is_something_to_scan() -> None:
    files = dict(text_files())
    assert ROOT / "docs" / "outputs.md" in files
    assert ROOT / "src" / "agent_eval" / "renderers" / "sarif.py" in files
    assert len(files) > 200


def test_no_spec_page_is_cited() -> None:
    bad = []
    for path, text in text_files():
        for m in SPEC_PAGE.finditer(text):
            before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
            if before == after == '"' and path.suffix == ".py":
                continue  # a string of code (a page name compared), not a citation
            if (path.parent / m.group(0)).is_file():
                continue  # a link to a sibling page
            bad.append(f"{where(path, text, m.start())}: {m.group(0)}")
    assert bad == [], "cites the specification's pages, which are not in the repository " \
                      "(cite docs/… instead):\n" + "\n".join(bad)


def test_no_source_document_is_cited_in_the_user_docs() -> None:
    """What users read (README.md, docs/, the rule pages `agent-eval explain` shows) states
    each rule itself, never "as the seed says": those documents are not in the
    repository. A random seed (`seed: 0`, "there is no seed") is not such a citation."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "src" / "agent_eval" / "rules" / "docs").rglob("*.md"))]
    bad = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        bad += [f"{where(path, text, m.start())}: {m.group(0)}"
                for m in SOURCE_DOC.finditer(text)]
    assert bad == [], "cites a document that is not in the repository (state the rule " \
                      "itself):\n" + "\n".join(bad)


def test_every_cited_docs_page_and_heading_exists() -> None:
    bad = []
    seen = 0
    for path, text in text_files():
        for m in DOCS_PATH.finditer(text):
            page = ROOT / m.group(1)
            seen += 1
            if not page.is_file():
                bad.append(f"{where(path, text, m.start())}: {m.group(1)} does not exist")
                continue
            name = next((h for h in m.groups()[1:] if h), None)
            if name is None:
                continue
            heads, body = sections(page)
            if not any(name.lower() in h for h in heads) and name.lower() not in body:
                bad.append(f"{where(path, text, m.start())}: {m.group(1)} has no heading "
                           f"or text {name!r}")
    assert seen > 50
    assert bad == [], "\n".join(bad)


def test_relative_markdown_links_resolve() -> None:
    bad = []
    for path, text in text_files():
        if path.suffix != ".md":
            continue
        for m in MD_LINK.finditer(text):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # an anchor on the same page, or a URL
            if not (path.parent / target).exists():
                bad.append(f"{where(path, text, m.start())}: {m.group(1)}")
    assert bad == [], "\n".join(bad)


def test_no_absolute_path_of_the_development_machine() -> None:
    bad = [where(path, text, m.start()) for path, text in text_files()
           for m in MACHINE_PATH.finditer(text)]
    assert bad == [], "\n".join(bad)


def test_the_license_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_bytes()
    # the Apache Software Foundation's LICENSE-2.0.txt, unchanged
    assert hashlib.sha256(text).hexdigest() == (
        "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30")
    assert b"Apache License\n                           Version 2.0, January 2004" in text


def test_every_third_party_import_of_the_package_is_declared() -> None:
    """What ``src`` imports by name is in pyproject's dependencies (or the extra that the
    importing code documents: ``mcp``, ``judge``), not merely installed because a declared
    package needs it: attrs, requests and markupsafe are imported directly."""
    import ast
    import sys
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["mcp"],
                *project["optional-dependencies"]["judge"]]

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    names = {norm(Requirement(r).name) for r in declared}
    dists = packages_distributions()
    imported: dict[str, str] = {}
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top != "agent_eval" and top not in sys.stdlib_module_names:
                    imported.setdefault(top, path.relative_to(ROOT).as_posix())
    assert {"attr", "requests", "markupsafe", "yaml"} <= set(imported)  # the check sees them
    undeclared = {top: where for top, where in imported.items()
                  if not {norm(d) for d in dists.get(top, [top])} & names}
    assert undeclared == {}, undeclared
