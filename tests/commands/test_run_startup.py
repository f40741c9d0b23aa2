"""Start-up of ``agent-eval run`` (docs/performance.md): a run imports what it uses, no
more. Each check runs the command in a fresh interpreter and lists its modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from tests.conftest import copy_example

PROBE = """
import sys
from agent_eval._cli import main
code = main(sys.argv[1:])
import json
from agent_eval.lazyre import LazyPattern
lazy = {}  # "module.NAME" of each module-level LazyPattern (alone, in a tuple, in Marks)
for name, module in list(sys.modules.items()):
    if name.startswith("agent_eval"):
        for key, value in vars(module).items():
            parts = getattr(value, "patterns", None)
            if not isinstance(parts, tuple):
                parts = value if isinstance(value, tuple) else (value,)
            for p in parts:
                if isinstance(p, LazyPattern):
                    lazy[f"{name}.{key}"] = lazy.get(f"{name}.{key}") or p.compiled is not None
import dataclasses
# dataclasses makes the docstring of a class that has none from inspect.signature
undocumented = sorted(f"{name}.{key}" for name, module in list(sys.modules.items())
                      if name.startswith("agent_eval") for key, value in vars(module).items()
                      if dataclasses.is_dataclass(value) and isinstance(value, type)
                      and value.__module__ == name
                      and (value.__doc__ or "").startswith(value.__name__ + "("))
print(json.dumps({"code": code, "modules": sorted(sys.modules), "lazy": lazy,
                  "undocumented": undocumented}))
"""
# what only other output formats, a baseline or judge checks need
NOT_FOR_JSON = ("sarif_om", "jinja2", "agent_eval.renderers.sarif", "agent_eval.renderers.html",
                "agent_eval.renderers.junit", "agent_eval.renderers.markdown",
                "agent_eval.baseline", "agent_eval.compare", "agent_eval.sections.baseline",
                "agent_eval.judge.run",
                "agent_eval.importers.assay", "agent_eval.importers.ciagent",
                "agent_eval.importers.evalview")
# what the example (native traces, format auto; no tool_results test) does not need: the
# checks of metrics it does not name, the readers that cannot take a native file, the
# processes of a large run (and pickle, which they and a spill use), shards, judge checks,
# the description of a config error, the names of the signals that killed a worker
NOT_FOR_THE_EXAMPLE = (
    "agent_eval.checks.tool_results", "agent_eval.live.checks", "agent_eval.live.compile",
    "agent_eval.live.models", "multiprocessing", "pickle", "signal", "agent_eval.sharding",
    "agent_eval.sections.shard", "agent_eval.sections.judge", "agent_eval.judge.compile",
    "agent_eval.judge.config", "agent_eval.judge.evaluate", "agent_eval.judge.summary",
    "agent_eval.judge.store", "agent_eval.renderers._judge", "agent_eval.config.describe",
    *(f"agent_eval.readers.{name}" for name in (
        "langsmith", "langchain", "codex", "openai_agents", "anthropic_agents", "claude_code",
        "mcp", "atif", "gemini_cli", "openhands", "vercel_ai")),
)


def _modules(tmp_path: Path, *args: str) -> set[str]:
    return set(_probe(tmp_path, *args)["modules"])


def _probe(tmp_path: Path, *args: str) -> dict[str, Any]:
    work = tmp_path / "suite"
    copy_example(work)
    (work / ".git").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "--config", "agent-eval.yaml", "--output-dir",
         str(tmp_path / "out"), "--fail-on", "never", "--quiet", *args],
        cwd=work, capture_output=True, text=True, check=True, timeout=120)
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["code"] == 0
    return cast(dict[str, Any], last)


def test_a_json_run_imports_no_other_renderer(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "--format", "json")
    assert (tmp_path / "out" / "results.json").is_file()
    assert not modules & set(NOT_FOR_JSON)
    assert not modules & set(NOT_FOR_THE_EXAMPLE)
    assert "agent_eval.renderers.json" in modules
    assert {"agent_eval.checks.args_valid", "agent_eval.readers.native"} <= modules


# the sniffs' patterns of readers that never take a native file (the example's traces)
NOT_ASKED = ("LANGSMITH", "CLAUDE_CODE", "ATIF", "GEMINI_CLI", "OPENHANDS", "VERCEL_AI",
             "ANTHROPIC_AGENTS", "_LC", "_CODEX", "_AGENTS_SPANS", "_JSONRPC", "_TOOL_USE")


def test_a_json_run_compiles_only_the_patterns_it_searches_with(tmp_path: Path) -> None:
    """The module-level regular expressions of the sniffs, the schema formats and the
    JSON line finder are compiled when first used (lazyre.py): the example's run compiles
    a few of the sniffs' (those asked of a native file) and of its policy's formats."""
    lazy = _probe(tmp_path, "--format", "json")["lazy"]
    assert len(lazy) >= 60  # names (a tuple or a Marks of patterns is one)
    compiled = {name for name, done in lazy.items() if done}
    assert 0 < len(compiled) <= 10, compiled
    assert not {f"agent_eval.readers.sniffs.{n}" for n in NOT_ASKED} & compiled
    assert "agent_eval.config.schema_compiler._HOSTNAME" not in compiled


def test_every_dataclass_a_json_run_makes_has_a_docstring(tmp_path: Path) -> None:
    """``dataclasses`` gives a class without a docstring one made from
    ``inspect.signature`` of the class (about 45 µs each, at import)."""
    assert _probe(tmp_path, "--format", "json")["undocumented"] == []


COMPILES = """
import json, re, sys
compile, seen = re.compile, set()
def counted(*args, **kwargs):
    seen.add(sys._getframe(1).f_globals.get("__name__"))
    return compile(*args, **kwargs)
re.compile = counted
import agent_eval.readers.sniffs, agent_eval.config.schema_compiler, agent_eval.readers.jsonpos
print(json.dumps(sorted(str(name) for name in seen)))
"""


def test_importing_the_sniffs_the_schema_compiler_and_jsonpos_compiles_no_pattern() -> None:
    done = subprocess.run([sys.executable, "-c", COMPILES], capture_output=True, text=True,
                          check=True, timeout=120)
    compiled_by = set(json.loads(done.stdout))
    assert "yaml.reader" in compiled_by  # the probe sees the compiles of an import
    assert not compiled_by & {"agent_eval.readers.sniffs", "agent_eval.config.schema_compiler",
                              "agent_eval.readers.jsonpos"}


@pytest.mark.parametrize(("fmt", "module"), [("sarif", "sarif_om"), ("html", "jinja2"),
                                              ("junit", "agent_eval.renderers.junit"),
                                              ("markdown", "agent_eval.renderers.markdown")])
def test_a_format_that_is_written_is_imported(tmp_path: Path, fmt: str, module: str) -> None:
    modules = _modules(tmp_path, "--format", fmt)
    assert module in modules
    assert len(list((tmp_path / "out").iterdir())) == 2  # results.json and the format's file


def test_the_renderers_package_still_names_every_format() -> None:
    from agent_eval import renderers

    for name in ("html", "junit", "markdown", "sarif"):
        assert getattr(renderers, name).__name__ == f"agent_eval.renderers.{name}"
    with pytest.raises(AttributeError):
        renderers.nothing  # noqa: B018


def test_the_sections_package_still_names_every_section() -> None:
    """The sections a run may not make live in modules of their own, imported on first
    use; ``agent_eval.sections`` still names each (the library's API, docs/library.md)."""
    from agent_eval import sections
    from agent_eval.sections import baseline, judge, shard

    for name in sections.__all__:
        assert getattr(sections, name) is not None
    assert sections.Comparison is baseline.Comparison
    assert sections.baseline_from is baseline.baseline_from
    assert sections.JudgeSummary is judge.JudgeSummary
    assert sections.ShardInfo is shard.ShardInfo
    with pytest.raises(AttributeError):
        sections.nothing  # noqa: B018


def test_the_collector_is_enabled_again_after_a_run_and_after_a_config_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_cli`` disables the cyclic garbage collector for the start-up of ``run``; the run
    enables it once the suite is loaded, and ``main`` on every way out."""
    import gc

    from agent_eval._cli import main

    work = copy_example(tmp_path / "suite")
    (work / ".git").mkdir()
    monkeypatch.chdir(work)
    seen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: seen.append(gc.isenabled()))
    assert main(["run", "--output-dir", str(tmp_path / "out"), "--quiet",
                 "--fail-on", "never"]) == 0
    assert seen == [False]  # frozen while still disabled, once
    assert gc.isenabled()
    (work / "broken.yaml").write_text("suite: x\ntests: 1\n", encoding="utf-8")
    assert main(["run", "--config", "broken.yaml", "--output-dir", str(tmp_path / "out2"),
                 "--quiet"]) == 2
    assert gc.isenabled()


def test_a_run_leaves_nothing_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run freezes what its start-up made (``gc.freeze``); ``main`` unfreezes it on the way
    out, so a program that calls ``main`` again and again does not keep each run's objects
    out of the collector's reach for good."""
    import gc

    from agent_eval._cli import main

    work = copy_example(tmp_path / "suite")
    (work / ".git").mkdir()
    monkeypatch.chdir(work)
    gc.unfreeze()
    assert main(["run", "--output-dir", str(tmp_path / "out"), "--quiet",
                 "--fail-on", "never"]) == 0
    assert gc.get_freeze_count() == 0


def test_no_default_factory_of_a_config_model_has_a_text_signature() -> None:
    """pydantic asks each default factory's signature when it builds a validator; for a
    builtin such as ``list`` that means parsing its text signature with tokenize (about
    2 ms of start-up): the models' list fields use ``config.models.no_items``."""
    import importlib

    from pydantic import BaseModel

    from agent_eval.checks import REGISTRY

    names = ["agent_eval.config.models", "agent_eval.scenarios.models",
             "agent_eval.judge.models", "agent_eval.live.models",
             *(REGISTRY.module_of(metric) for metric in REGISTRY)]
    factories = 0
    for name in names:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and (
                    value.__module__ == name):
                for field, info in value.model_fields.items():
                    if info.default_factory is not None:
                        factories += 1
                        assert getattr(info.default_factory, "__text_signature__", None) is None, (
                            value.__name__, field)
    assert factories >= 5
