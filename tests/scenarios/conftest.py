"""Fixtures of the scenario tests; the helpers are in ``scenario_harness.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from .scenario_harness import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)
