"""Fixtures of the action's tests: prism (started once per session) and the recording
GitHub (one per test). The harness lives in ``action_harness.py`` beside this file."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from action_harness import PRISM_BIN, FakeGitHub, Prism, require_node_tools


@pytest.fixture(scope="session")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prism]:
    require_node_tools(PRISM_BIN)
    server = Prism(tmp_path_factory.mktemp("prism") / "prism.log")
    try:
        server.wait()
        yield server
    finally:
        server.stop()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    require_node_tools()
    with FakeGitHub() as fake:
        yield fake
