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
under that name). Besides the skips, they are the small things many tests do alike: write a
folder of files, turn events into JSONL, evaluate a suite as ``run --no-timings`` does (the
bundled example among them), and compare an output with its reviewed golden file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import zlib
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.results import Results

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "customer-service"
# Resolved from this file, never absolute: the folder beside the repository's root.
SHARED = ROOT.parent / "shared"
SAMPLES = SHARED / "samples" / "traces"

GOLDEN = ROOT / "tests" / "renderers" / "golden"
UPDATE_GOLDEN = "AGENT_EVAL_UPDATE_GOLDEN"  # =1: rewrite the golden files, review the diff
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


def pytest_sessionstart(session: pytest.Session) -> None:
    """The tests expect the repository's root to be a git work tree: results name files
    relative to the enclosing one (docs/results.md "Paths"), and the bundled example's expected
    outputs say ``examples/customer-service/...``. Elsewhere (an unpacked sdist) say so once,
    with what to do, instead of failing tests one by one on their paths."""
    if not (ROOT / ".git").exists():
        found = next((f for f in ROOT.parents if (f / ".git").exists()), None)
        where = "in no git work tree" if found is None else f"inside the git work tree {found}"
        pytest.exit(f"{ROOT} is {where}, but the tests need it to be the root of one (the "
                    "paths results show are relative to it): run `git init -q` there first "
                    "(for an unpacked sdist), then the tests again",
                    returncode=pytest.ExitCode.USAGE_ERROR)


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


def write_files(folder: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path relative to ``folder`` -> text) as UTF-8, making folders."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def retyped_fixture(dest: Path, fixture: str, old: str, new: str) -> tuple[Path, list[Any]]:
    """A copy of ``tests/fixtures/<fixture>`` at ``dest`` with the one occurrence of
    ``old`` written ``new`` (a value of another JSON type: every line stays where it is),
    and what a run reads from it (``read_file``: a reader that stops is an
    ``input/reader_error`` there)."""
    from agent_eval.readers import READERS, SourceFile, read_file

    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = dest / Path(fixture).name
    path.write_text(text.replace(old, new), encoding="utf-8")
    reader = READERS[Path(fixture).parent.name]
    return path, list(read_file(reader, SourceFile(str(path), path.name, path.name)))


def events(*items: dict[str, Any]) -> str:
    """The events as native JSONL: one object per line."""
    return "".join(json.dumps(e) + "\n" for e in items)


def read_results(folder: Path) -> dict[str, Any]:
    """The results.json that a run wrote into ``folder``."""
    data: dict[str, Any] = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return data


def evaluate_config(config: Path) -> Results:
    """The suite at ``config`` with its own traces, evaluated as ``run --no-timings`` does."""
    suite = load_suite(config)
    files, errors = suite_sources(suite)
    return evaluate_files(suite, files, errors, timings=False)


def example_results() -> Results:
    """The bundled example, evaluated as ``run --no-timings`` does."""
    return evaluate_config(EXAMPLE / "agent-eval.yaml")


def assert_golden(text: str, name: str) -> None:
    """``text`` is the reviewed golden file ``tests/renderers/golden/NAME``, byte for byte
    (with AGENT_EVAL_UPDATE_GOLDEN=1 it is written there first: review the diff)."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_GOLDEN) == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


USE_INSTEAD = re.compile(r"^## Use instead\n(.*?)(?=^## |\Z)", re.S | re.M)


def rule_page_parts(page: Path) -> tuple[str, str]:
    """A rule page (src/agent_eval/rules/docs/) without its "Use instead" section, and that
    section (or ""): the example's blocks are in the first, the corrected ones in the
    second (rules/docs/README.md)."""
    text = page.read_text(encoding="utf-8")
    m = USE_INSTEAD.search(text)
    return (text, "") if m is None else (text[:m.start()] + text[m.end():], m.group(1))


# O_BINARY's value on Windows (other systems' os has none)
O_BINARY = 0x8000


@pytest.fixture
def windows_open(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``os.O_BINARY`` as Windows has it, and the flags of every ``os.open`` (which opens
    the file without it, as the system here needs), for the tests that files are read as
    bytes there."""
    monkeypatch.setattr(os, "O_BINARY", O_BINARY, raising=False)
    flags: list[int] = []
    real = os.open

    def os_open(path: str, flag: int, *args: int) -> int:
        flags.append(flag)
        return real(path, flag & ~O_BINARY, *args)

    monkeypatch.setattr(os, "open", os_open)
    return flags


def raw_zip(path: Path, members: dict[str, bytes], *, declared: int | None = None,
            zip64: bool = False) -> None:
    """A zip of stored members, written by hand: its end record declares ``declared``
    members (default: as many as there are), in a zip64 end record too when ``zip64``."""
    local, central = bytearray(), bytearray()
    for name, data in members.items():
        raw, crc, offset = name.encode(), zlib.crc32(data), len(local)
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(data),
                             len(data), len(raw), 0) + raw + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, crc,
                               len(data), len(data), len(raw), 0, 0, 0, 0, 0, offset) + raw
    n = len(members) if declared is None else declared
    tail = b""
    if zip64:
        tail = (struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central),
                            len(local))
                + struct.pack("<IIQI", 0x07064B50, 0, len(local) + len(central), 1))
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF if zip64 else n,
                      0xFFFF if zip64 else n, len(central), len(local), 0)
    path.write_bytes(bytes(local + central) + tail + end)


@contextmanager
def within(seconds: int, what: str = "the block") -> Iterator[None]:
    """Fail with TimeoutError when the block runs longer than ``seconds`` (SIGALRM: the
    main thread only), so that a test of a hang fails instead of hanging."""
    def late(signum: int, frame: Any) -> None:
        raise TimeoutError(f"{what} ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
