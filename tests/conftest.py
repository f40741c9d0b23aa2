"""Helpers shared by every test: where the repository's own fixtures are, the real-world
samples that may sit beside the repository, and the one rule for a test whose tools or
files are missing.

The suite passes in a fresh clone with nothing beside it. Two kinds of tests need more:

- **Real-world samples** (``../shared/samples/traces`` next to the repository root): trace
  files written by other projects, an extra conformance layer on top of the hand-made
  fixtures in ``tests/fixtures/``; and the product's seed documents (``../shared/seeds``).
  Without the folder their tests skip with one line; with ``AGENT_EVAL_REQUIRE_SAMPLES=1``
  (set by ``.ci/run``) they fail instead.
- **System packages and test tools** (Chromium, podman, debootstrap, root, shellcheck, the
  npm test tools): without them their tests skip with one line saying how to get them; with
  ``AGENT_EVAL_REQUIRE_SYSTEM=1`` (set by ``.ci/run`` and the CI workflow) they fail.

Import the helpers with ``from tests.conftest import ...`` (pytest loads this file first,
under that name).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "customer-service"
# Resolved from this file, never absolute: the folder beside the repository's root.
SHARED = ROOT.parent / "shared"
SAMPLES = SHARED / "samples" / "traces"

REQUIRE_SAMPLES = "AGENT_EVAL_REQUIRE_SAMPLES"
REQUIRE_SYSTEM = "AGENT_EVAL_REQUIRE_SYSTEM"


def required(variable: str) -> bool:
    return os.environ.get(variable, "") not in ("", "0")


NOT_RUN = "NOT RUN"


def not_run(reason: str, variable: str) -> NoReturn:
    """Skip the test with ``reason`` (which starts with ``NOT RUN``), or fail it when
    ``variable`` says this run must not skip it."""
    if required(variable):
        pytest.fail(f"{reason} ({variable} is set: this run must not skip it)", pytrace=False)
    pytest.skip(reason)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """One summary line per reason, however many tests it skipped: pytest places the skip
    of a fixture or a helper at each test, so give ours this file's location, and the
    summary folds skips of one location and reason together."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        _, _, reason = report.longrepr
        if NOT_RUN in reason:
            report.longrepr = (__file__, not_run.__code__.co_firstlineno, reason)
    return report


def missing_system(what: str, how: str) -> NoReturn:
    """A system package, tool or privilege the test needs is not there: ``what`` is
    missing, ``how`` says how to get it."""
    not_run(f"NOT RUN, missing {what}: {how} ({REQUIRE_SYSTEM}=1 makes this a failure)",
            REQUIRE_SYSTEM)


def shared_path(*parts: str) -> Path:
    """``../shared/PARTS`` beside the repository, or the test is skipped (failed when
    required): every such skip is the same one line."""
    path = SHARED.joinpath(*parts)
    if path.exists():
        return path
    not_run("NOT RUN: real-world samples not found (../shared beside the repository): an "
            f"extra conformance layer on top of tests/fixtures/; {REQUIRE_SAMPLES}=1 requires "
            "it", REQUIRE_SAMPLES)


def copy_example(dest: Path, source: Path = EXAMPLE) -> Path:
    """A copy of the bundled example at ``dest`` (merged into it when it exists), without
    what runs wrote into the example: the README's first command leaves its outputs in
    examples/customer-service/agent-eval-results/."""
    shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
        "agent-eval-results", ".agent-eval", "__pycache__"))
    return dest


@pytest.fixture(scope="session")
def samples() -> Path:
    """``../shared/samples/traces`` (see the module's docstring)."""
    return shared_path("samples", "traces")
