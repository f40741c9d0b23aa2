"""Peer configs, read as they are: Assay, EvalView and CIAgent (docs/migrating.md).

An importer translates a peer's config into the native suite (plain data, as if it had been
read from an ``agent-eval.yaml``) whose every key remembers the line of the peer file it came
from, so findings point at *their* files. ``agent-eval run --config`` detects the dialect by
content (or takes ``--dialect``); ``agent-eval import`` writes the same translation as a
native suite file, with comments saying where each key came from.
"""

from __future__ import annotations

import importlib
from pathlib import Path as FsPath
from typing import Any

from agent_eval.importers.base import Builder, Translate, Translation

__all__ = ["DIALECTS", "Builder", "Translate", "Translation", "detect", "detect_folder",
           "translator"]

DIALECTS = ("native", "assay", "evalview", "ciagent")


def detect(data: Any) -> str:
    """The dialect of a config document, by its keys."""
    if not isinstance(data, dict):
        return "native"
    if "queries" in data or ("agent" in data and "scenarios" in data
                             and "suite" not in data):
        return "ciagent"
    if "input" in data and "expected" in data and "name" in data:
        return "evalview"
    tests = data.get("tests")
    if isinstance(tests, list) and tests and all(  # CIAgent's legacy agentci.yaml
            isinstance(t, dict) and "name" in t and not {"id", "metric", "expected"} & t.keys()
            for t in tests):
        return "ciagent"
    if isinstance(tests, list) and any(isinstance(t, dict) and "expected" in t for t in tests):
        return "assay"
    if "model" in data and "suite" in data and "scenarios" not in data:
        return "assay"
    return "native"


def detect_folder(folder: FsPath) -> str | None:
    """A folder of EvalView test cases is EvalView."""
    return "evalview" if folder.is_dir() else None


# each peer's module is imported when a config of its dialect is read (start-up time)
PEERS = ("assay", "evalview", "ciagent")


def translator(dialect: str) -> Translate:
    """The translator of a peer's config (``ValueError`` for another dialect)."""
    if dialect not in PEERS:
        raise ValueError(dialect)
    found: Translate = importlib.import_module(f"{__name__}.{dialect}").translate
    return found
