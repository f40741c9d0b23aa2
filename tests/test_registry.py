"""The lazy registries (registry.py): names listed without importing, an entry imported
when looked up, and each registry's lines agreeing with the entries they name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_eval.checks import REGISTRY
from agent_eval.readers import READERS
from agent_eval.registry import LazyRegistry

PROBE = """
import json, sys
from agent_eval.checks import REGISTRY
from agent_eval.readers import READERS
before = set(sys.modules)
names = (list(READERS), len(READERS), "otlp" in READERS, "nothing" in READERS,
         sorted(REGISTRY), "tool_results" in REGISTRY)
listed = sorted(set(sys.modules) - before)
spec = REGISTRY["args_valid"]
reader = READERS.get("otlp")
looked_up = sorted(set(sys.modules) - before)
print(json.dumps({"listed": listed, "looked_up": looked_up, "names": names,
                  "got": [spec.metric, reader.name if reader else None]}))
"""


def test_listing_a_registry_imports_nothing_and_a_lookup_imports_its_module() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True, timeout=60)
    got = json.loads(done.stdout)
    assert got["listed"] == []
    assert got["names"][0] == list(READERS)
    assert got["names"][1:] == [len(READERS), True, False, sorted(REGISTRY), True]
    assert got["got"] == ["args_valid", "otlp"]
    assert "agent_eval.checks.args_valid" in got["looked_up"]
    assert "agent_eval.readers.otlp" in got["looked_up"]
    for module in ("agent_eval.checks.tool_results", "agent_eval.checks.sequence_valid",
                   "agent_eval.readers.claude_code", "agent_eval.readers.inspect"):
        assert module not in got["looked_up"]


def test_each_line_names_the_entry_of_its_name() -> None:
    assert [spec.metric for spec in REGISTRY.values()] == list(REGISTRY)
    assert [reader.name for reader in READERS.values()] == list(READERS)
    assert list(REGISTRY.items()) == [(name, REGISTRY[name]) for name in REGISTRY]
    for name in READERS:
        assert READERS.module_of(name).startswith("agent_eval.readers.")
        assert READERS.module_of(name) in sys.modules  # imported when looked up


def test_an_unknown_name_is_a_key_error_and_get_gives_the_default() -> None:
    registry: LazyRegistry[object] = LazyRegistry("agent_eval", {"x": "limits:DEFAULT"})
    with pytest.raises(KeyError):
        registry["y"]
    assert registry.get("y", 1) == 1
    assert "y" not in registry
    assert "x" in registry
    from agent_eval.limits import DEFAULT

    assert registry["x"] is DEFAULT
    assert registry.get("x") is DEFAULT
    assert dict(registry) == {"x": DEFAULT}
    assert repr(registry) == "LazyRegistry('agent_eval', {'x': 'limits:DEFAULT'})"
