"""servers:/probes:/tool_lock: config errors, each at its line; a suite with servers but
without the MCP SDK is a config error (never a silent pass); loading never imports it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError


def problems(tmp_path: Path, body: str) -> list[str]:
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\n' + textwrap.dedent(body).lstrip("\n"))
    with pytest.raises(ConfigError) as exc:
        load_suite(tmp_path / "agent-eval.yaml")
    return exc.value.problems


SERVER = "servers:\n  a: {command: x}\n"


@pytest.mark.parametrize(("body", "where", "message"), [
    ("servers:\n  a: {command: x, url: 'http://h'}\n", 4, "exactly one of 'command'"),
    ("servers:\n  a: {url: 'http://h', headers: {X: 'literal'}}\n", 4, "valid dictionary"),
    ("servers:\n  a: {url: 'ftp://h'}\n", 4, "should match pattern"),
    ("servers:\n  a: {command: x, cwd: nowhere}\n", 4, "is not a folder"),
    ("servers:\n  'a b': {command: x}\n", 4, "must be letters, digits"),
    (SERVER + "probes:\n  - {id: p, tool: t, resource: r}\n", 6, "exactly one of tool"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_mime_type: x}\n", 6,
     "'expect_mime_type' goes with resource or resource_template, not tool"),
    (SERVER + "probes:\n  - {id: p, tool: t, server: b}\n", 6, "unknown server 'b'"),
    (SERVER + "probes:\n  - {id: p, tool: t, repeats: 0}\n", 6, "greater than or equal"),
    # a wait without end (`.inf`, 1e300) is no deadline: at most 10 minutes
    ("servers:\n  a: {command: x, startup_timeout_ms: .inf}\n", 4,
     "startup_timeout_ms: Input should be less than or equal to 600000"),
    ("servers:\n  a: {command: x, call_timeout_ms: 1e300}\n", 4,
     "call_timeout_ms: Input should be less than or equal to 600000"),
    (SERVER + "probes:\n  - {id: p, tool: t, timeout_ms: 600001}\n", 6,
     "timeout_ms: Input should be less than or equal to 600000"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_reslt: {contains: a}}\n", 6,
     "did you mean 'expect_result'"),
    (SERVER + "probes:\n  - {id: p, tool: t}\n  - {id: p, tool: u}\n", 7, "duplicate id 'p'"),
    (SERVER + "probes:\n  - {id: p, resource_template: 'x://{a}/{b}', parameters: {a: '1'}}\n",
     6, "missing b"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_result: {regex: '('}}\n", 6,
     "invalid regular expression"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_result: {json_schema: no.json}}\n", 6,
     "cannot be read"),
    # before: each checked nothing, and the probe passed on any answer (exit 0)
    (SERVER + "probes:\n  - {id: p, tool: t, expect_result: {contains: []}}\n", 6,
     "'contains' is an empty list, so it checks nothing"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_result: {contains: null}}\n", 6,
     "'contains' is written without a value (null)"),
    (SERVER + "probes:\n  - {id: p, tool: t, expect_result: {regex: ''}}\n", 6,
     "an empty regular expression"),
    (SERVER + "probes:\n  - id: p\n    tool: t\n    expect_result:\n", 8,
     "'expect_result' is written without a value (null)"),
    ("probes:\n  - {id: p, tool: t}\n", 3, "probes need servers"),
    ("servers:\n  a: {command: x}\n  b: {command: y}\nprobes:\n  - {id: p, tool: t}\n", 7,
     "name its 'server'"),
    ("tests:\n  - {id: server:a, metric: tool_blocklist, blocklist: [x]}\n" + SERVER, 6,
     "is also a test or probe id"),
])
def test_problem_at_its_line(tmp_path: Path, body: str, where: int, message: str) -> None:
    found = problems(tmp_path, body)
    assert any(f"agent-eval.yaml:{where}:" in p and message in p for p in found), found


def test_a_suite_with_servers_needs_the_sdk(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "mcp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    [problem] = problems(tmp_path, SERVER + "probes:\n  - {id: p, tool: t}\n")
    assert problem.startswith("agent-eval.yaml:3:1: ")
    assert "pip install 'agent-eval-ci[mcp]'" in problem


def test_loading_a_suite_with_servers_does_not_import_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\n' + SERVER + "probes:\n  - {id: p, tool: t}\n")
    code = ("import sys; from agent_eval.api import load_suite\n"
            f"s = load_suite({str(tmp_path / 'agent-eval.yaml')!r})\n"
            "assert s.live is not None and len(s.live.probes) == 1\n"
            "assert 'mcp' not in sys.modules and 'anyio' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
