"""Run a suite's probes against its servers (docs/mcp.md).

One session per server, in suite order: start, initialise, list the tools, run the
server's probes in order, stop. Every session is recorded as an MCP trace under
``OUTPUT/mcp-sessions/SERVER.jsonl`` (evaluated afterwards by the suite's tests and
scenarios like any trace). Each probe becomes one test entry of the results; each
server one more (``server:NAME``: the lock, shadowing and its tools' descriptions).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.live import checks as c
from agent_eval.live import pinning
from agent_eval.live.compile import CompiledLive, ProbeSpec, ServerSpec
from agent_eval.live.outcome import LiveOutcome
from agent_eval.live.session import Recorder, Session, StartError, describe, open_session
from agent_eval.matching import normalize_name
from agent_eval.paths import rel
from agent_eval.readers.base import SourceFile
from agent_eval.results import TestResult, assign_fingerprints, sort_key
from agent_eval.rule_ids import (
    INPUT_LOCK_INVALID,
    INPUT_LOCK_MISSING,
    INPUT_SERVER_START,
    PROBE_CALL_FAILED,
    PROBE_LATENCY,
    PROBE_LISTING,
)
from agent_eval.suite import Suite

SESSIONS = "mcp-sessions"
PROBE_METRIC = "mcp_probe"
SERVER_METRIC = "mcp_tools"


class _Probed:
    """What one probe produced while running."""

    def __init__(self) -> None:
        self.failures: list[list[c.Failure]] = []  # per repeat
        self.once: list[c.Failure] = []  # one-off checks
        self.calls = 0
        self.seconds = 0.0
        self.ran = False
        self.stopped: str | None = None  # why the probe stopped before its end


def run_live(suite: Suite, out_dir: Path, *, timings: bool = True,
             servers: list[str] | None = None, probes: bool = True) -> LiveOutcome:
    """Start the servers, run the probes, check the tools; see the module text."""
    live = suite.live
    assert live is not None
    return anyio.run(_run, suite, live, out_dir, timings, servers, probes)


async def _run(suite: Suite, live: CompiledLive, out_dir: Path, timings: bool,
               only: list[str] | None, with_probes: bool) -> LiveOutcome:
    outcome = LiveOutcome()
    results: dict[str, _Probed] = {p.id: _Probed() for p in live.probes}
    started: dict[str, SourceFile] = {}  # server -> its session trace
    folder = out_dir / SESSIONS
    for name, spec in live.servers.items():
        if only is not None and name not in only:
            continue
        path = folder / f"{name}.jsonl"
        recorder = Recorder(path)
        # an MCP log, read as one whatever the suite's format: (a suite of native traces
        # read it as native: an input error a line and none of the probes' calls checked)
        source = SourceFile(str(path.resolve()), rel(path, suite.root), f"mcp:{name}",
                            format="mcp")
        mine = [p for p in live.probes if p.server == name] if with_probes else []
        said = False  # its start error is reported (once: closing may fail again)
        try:
            async with AsyncExitStack() as stack:
                announce = spec.model.sampling is not None or any(
                    p.model.sampling is not None for p in mine)
                try:
                    session = await open_session(spec, recorder, stack, announce)
                except StartError as exc:
                    outcome.errors.append(_start_error(live, spec, str(exc)))
                    said = True
                    continue
                tools, answer = await session.list_all("tools/list", "tools",
                                                       spec.model.call_timeout_ms)
                if answer.ok:
                    outcome.listings[name] = tools
                else:
                    outcome.errors.append(_start_error(
                        live, spec, f"tools/list failed: {answer.error}"))
                started[name] = source
                for p in mine:
                    try:
                        await _probe(p, session, results[p.id])
                    except Exception as exc:  # what the server did, that no check expected
                        results[p.id].stopped = describe(exc)
        except Exception as exc:  # a transport that fails while closing
            if name not in started and not said:
                outcome.errors.append(_start_error(live, spec, describe(exc)))
        finally:
            recorder.close()
        if name in started and recorder.lines:
            outcome.sessions.append(source)
    if with_probes:
        outcome.tests.extend(_probe_result(p, results[p.id], started, timings)
                             for p in live.probes)
        outcome.tests.extend(_server_results(suite, live, outcome))
    return outcome


def _start_error(live: CompiledLive, spec: ServerSpec, why: str) -> InputError:
    return INPUT_SERVER_START.input_error(live.file, spec.ref.line,
                                          f"server '{spec.name}' could not be used: {why}")


# ------------------------------------------------------------------------- probes
async def _probe(p: ProbeSpec, s: Session, out: _Probed) -> None:
    m = p.model
    timeout = m.timeout_ms or s.spec.model.call_timeout_ms
    start = time.perf_counter()
    out.ran = True
    if m.sampling is not None and m.sampling.respond is not None:
        s.respond = m.sampling.respond
    try:
        if p.kind == "tool":
            for _ in range(m.repeats):
                a = await s.request("tools/call", {"name": m.tool,
                                                   "arguments": m.arguments or {}}, timeout)
                out.failures.append(c.check_tool(p, a, s.sampling_announced))
                out.calls += 1
        elif p.kind in ("resource", "resource_template"):
            uri = m.resource or ""
            if m.resource_template is not None:
                templates, a = await s.list_all("resources/templates/list",
                                                "resourceTemplates", timeout)
                out.calls += 1
                listed = [str(t.get("uriTemplate")) for t in templates]
                if m.resource_template not in listed:
                    out.once.append(c.Failure(
                        PROBE_LISTING.id, p.at("resource_template"),
                        f"resources/templates/list does not list {m.resource_template!r}"
                        + ("" if a.ok else f" ({a.error})"), None, None, a.line, False))
                elif not a.ok:  # listed, but the listing was not read whole (docs/mcp.md)
                    out.once.append(c.Failure(
                        PROBE_CALL_FAILED.id, p.at("resource_template"),
                        f"resources/templates/list failed: {a.error}", None, a.error,
                        a.line, False))
                uri = c.expand_template(m.resource_template, m.parameters or {})
            for _ in range(m.repeats):
                a = await s.request("resources/read", {"uri": uri}, timeout)
                out.failures.append(c.check_resource(p, a, uri))
                out.calls += 1
        elif p.kind == "prompt":
            await _prompt(p, s, out, timeout)
        elif p.kind == "list":
            method, key = c.LIST_METHOD[str(m.list_)]
            items, a = await s.list_all(method, key, timeout)
            out.calls += 1
            out.once.extend(c.check_listing(p, items, a))
        else:  # capabilities
            out.once.extend(c.check_capabilities(p, s.init, s.sampling_announced,
                                                 _init_line(s)))
    finally:
        s.respond = s.spec.model.sampling
        out.seconds += time.perf_counter() - start


async def _prompt(p: ProbeSpec, s: Session, out: _Probed, timeout: float) -> None:
    m = p.model
    arguments = {k: v if isinstance(v, str) else str(v)
                 for k, v in (m.arguments or {}).items()}
    declared: dict[str, Any] | None = None
    if m.expect_arguments is not None or m.reject_missing_required:
        prompts, a = await s.list_all("prompts/list", "prompts", timeout)
        out.calls += 1
        declared = next((x for x in prompts if x.get("name") == m.prompt), None)
        if not a.ok:
            out.once.append(c.Failure(PROBE_CALL_FAILED.id, p.at("prompt"),
                                      f"prompts/list failed: {a.error}", None, a.error,
                                      a.line, False))
        else:
            out.once.extend(c.check_prompt_declaration(p, declared, a.line))
            if declared is None and m.expect_arguments is None:
                out.once.append(c.Failure(PROBE_LISTING.id, p.at("prompt"),
                                          f"prompt '{m.prompt}' is not in prompts/list",
                                          None, None, a.line, False))
    for _ in range(m.repeats):
        a = await s.request("prompts/get", {"name": m.prompt, "arguments": arguments},
                            timeout)
        out.failures.append(c.check_prompt(p, a))
        out.calls += 1
    if m.reject_missing_required and declared is not None:
        for arg in declared.get("arguments") or ():
            if not isinstance(arg, dict) or arg.get("required") is not True:
                continue
            name = str(arg.get("name"))
            rest = {k: v for k, v in arguments.items() if k != name}
            a = await s.request("prompts/get", {"name": m.prompt, "arguments": rest},
                                timeout)
            out.calls += 1
            out.once.extend(c.check_missing_required(p, name, a))


def _init_line(s: Session) -> int:
    return s.recorder.requests[0][0] if s.recorder.requests else 0


def _probe_result(p: ProbeSpec, r: _Probed, started: dict[str, SourceFile],
                  timings: bool) -> TestResult:
    session = started.get(p.server)
    if not r.ran or session is None:
        return TestResult(p.id, PROBE_METRIC, p.model.severity, "error", 0, 0, 0, 0, [])
    once = list(r.once)
    if r.stopped is not None:  # its checks did not all run: never a pass
        once.append(c.Failure(PROBE_CALL_FAILED.id, p.at(p.kind),
                              f"the probe stopped before its checks ran: {r.stopped}",
                              f"{p.kind}: {c.probe_target(p)}", None, 0, False))
    n = len(r.failures)
    passed = sum(1 for f in r.failures if not f)
    tolerated = n > 0 and passed / n >= p.model.min_pass_ratio
    groups: dict[tuple[str, str], list[c.Failure]] = {}
    for failures in r.failures:
        for f in _first_each(failures):
            groups.setdefault((f.rule, f.ref.key_path), []).append(f)
    findings: list[Finding] = []
    for fs in groups.values():
        f = fs[0]
        # a call the server gave no usable answer to (it died, it broke the protocol) is
        # no sample of what it answers: never tolerated by min_pass_ratio
        sev: Severity = "note" if tolerated and f.rule != PROBE_CALL_FAILED.id \
            else p.model.severity
        message = f.message
        if n > 1:
            message += f" ({len(fs)} of {n} calls; {passed} passed, min_pass_ratio " \
                       f"{p.model.min_pass_ratio:g})"
        value = max((x.value for x in fs), default=None) if f.rule == PROBE_LATENCY.id \
            else f.value
        findings.append(_finding(f, sev, message, p, value, session,
                                 {"server": p.server, "failed": len(fs), "calls": n}))
    for f in once:
        findings.append(_finding(f, p.model.severity, f.message, p, f.value, session,
                                 {"server": p.server}))
    findings.sort(key=sort_key)
    assign_fingerprints(findings)
    return TestResult(p.id, PROBE_METRIC, p.model.severity, _status(findings),
                      round(r.seconds * 1000) if timings else 0, 1,
                      1 if any(f.severity == "error" for f in findings) else 0, r.calls,
                      findings)


def _first_each(failures: list[c.Failure]) -> list[c.Failure]:
    """One failure per (rule, key) within one call."""
    seen: set[tuple[str, str]] = set()
    out = []
    for f in failures:
        if (f.rule, f.ref.key_path) not in seen:
            seen.add((f.rule, f.ref.key_path))
            out.append(f)
    return out


def _finding(f: c.Failure, sev: Severity, message: str, p: ProbeSpec, value: Any,
             session: SourceFile, details: dict[str, Any]) -> Finding:
    return Finding(
        rule=f.rule, severity=sev, message=message, test=p.id, config=f.ref,
        trace=TraceRef(session.file, f.line, session.trace_id) if f.line else None,
        tool=p.model.tool,
        value=value, constraint=f.constraint, details=details)


def _status(findings: list[Finding]) -> Any:
    if any(f.severity == "error" for f in findings):
        return "fail"
    if any(f.severity == "warning" for f in findings):
        return "warn"
    return "pass"


# ------------------------------------------------------------------------ servers
def _server_results(suite: Suite, live: CompiledLive, outcome: LiveOutcome
                    ) -> list[TestResult]:
    mode = suite.model.tool_match
    normalize: Callable[[str], str] = (normalize_name if mode == "normalized"
                                       else (lambda s: s))
    shadowed = pinning.shadowing(outcome.listings, normalize)
    locked: dict[str, Any] | None = None
    if live.lock is not None and any(s.model.pin for s in live.servers.values()):
        assert live.lock_ref is not None
        try:
            locked = pinning.read_lock(live.lock)
        except FileNotFoundError:
            outcome.errors.append(INPUT_LOCK_MISSING.input_error(
                live.file, live.lock_ref.line,
                f"the tool lock {live.lock_file} does not exist; write it with `agent-eval "
                "lock` and commit it"))
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            outcome.errors.append(INPUT_LOCK_INVALID.input_error(
                live.file, live.lock_ref.line,
                f"the tool lock {live.lock_file} cannot be used: {reason}; write it again "
                "with `agent-eval lock`"))
    out = []
    for name, spec in live.servers.items():
        tools = outcome.listings.get(name)
        if tools is None:
            out.append(TestResult(f"server:{name}", SERVER_METRIC, spec.model.severity,
                                  "error", 0, 0, 0, 0, []))
            continue
        issues = pinning.scan(name, tools) + shadowed.get(name, [])
        ref = spec.ref
        if locked is not None and spec.model.pin:
            entry = (locked.get("servers") or {}).get(name)
            if entry is None:
                outcome.errors.append(INPUT_LOCK_MISSING.input_error(
                    live.file, spec.ref.line,
                    f"server '{name}' is not in the tool lock {live.lock_file}; run "
                    "`agent-eval lock` to pin its tools"))
            else:
                issues += pinning.compare(name, tools, entry)
        findings = [Finding(
            rule=i.rule, severity=spec.model.severity, message=i.message,
            test=f"server:{name}", config=ConfigRef(ref.file, ref.line, ref.col,
                                                    ref.key_path),
            trace=None, tool=i.tool, value=i.value, constraint=i.constraint,
            details={"server": name}) for i in issues]
        findings.sort(key=lambda f: (f.rule, f.tool or "", f.message))
        assign_fingerprints(findings)
        out.append(TestResult(f"server:{name}", SERVER_METRIC, spec.model.severity,
                              _status(findings), 0, 1, 1 if findings else 0, len(tools),
                              findings))
    return out
