"""LangGraph node transitions as handoffs (readers/_langgraph.py): only the top-level nodes
that are graphs themselves (agents) hand off; a single agent's model / tools nodes and
plain function nodes are steps of one agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, shared_path

from agent_eval.model import Location, Trace
from agent_eval.readers import READERS, SourceFile, read_file
from agent_eval.readers._langgraph import node_transitions


def traces_of(path: Path, reader: str = "langsmith") -> list[Trace]:
    """The traces ``reader`` reads from ``path``."""
    source = SourceFile(str(path), path.name, path.name)
    return [t for t in read_file(READERS[reader], source) if isinstance(t, Trace)]


def at(n: int) -> Location:
    return Location("f.json", n)


def handoffs(*ns: str) -> list[tuple[str | None, str, int]]:
    return [(h.from_agent, h.to_agent, h.location.line)
            for h in node_transitions((s, at(i + 1)) for i, s in enumerate(ns))]


def test_a_single_agent_never_hands_off() -> None:
    # create_react_agent / create_agent: "model" and "tools" nodes, no subgraph
    assert handoffs("model:a", "model:a", "tools:b", "model:c", "tools:d", "model:e") == []


def test_supervisor_and_back() -> None:
    assert handoffs("supervisor:1", "supervisor:1|agent:2", "supervisor:1|tools:3",
                    "research:4", "research:4|agent:5", "research:4|tools:6",
                    "supervisor:7", "supervisor:7|agent:8") == [
        ("supervisor", "research", 4), ("research", "supervisor", 7)]


def test_swarm_and_function_nodes() -> None:
    """Agents hand off to each other directly; a routing function node between them is
    not an agent; re-entering the same agent is no handoff."""
    assert handoffs("alice:1|agent:a", "route:2", "alice:3|agent:b", "bob:4",
                    "bob:4|agent:c", "route:5", "alice:6|tools:d") == [
        ("alice", "bob", 4), ("bob", "alice", 7)]


@pytest.mark.parametrize("ns", ["", "|", ":x", "|agent:1", ":1|agent:2"])
def test_odd_namespaces_are_ignored(ns: str) -> None:
    assert handoffs(ns, "a:1|agent:2", ns) == []


def test_fixture_supervisor_trace() -> None:
    (trace,) = traces_of(FIXTURES / "langsmith" / "langgraph-supervisor.json")
    assert [(h.from_agent, h.to_agent, h.location.line) for h in trace.handoffs] == [
        ("supervisor", "research_expert", 6), ("research_expert", "supervisor", 10)]
    assert trace.handoffs_recorded  # a LangGraph app: none more would mean none
    # the handoff tools are ordinary tool calls too
    assert [c.name for c in trace.tool_calls] == [
        "transfer_to_research_expert", "web_search", "transfer_back_to_supervisor"]


def test_stream_with_subgraphs() -> None:
    """A LangGraph ``stream(..., stream_mode="messages", subgraphs=True)`` recording: the
    namespaces are in each message's metadata."""
    (trace,) = traces_of(FIXTURES / "langchain" / "supervisor-stream.json", "langchain")
    assert [(h.from_agent, h.to_agent, h.location.line) for h in trace.handoffs] == [
        ("supervisor", "math_expert", 4), ("math_expert", "supervisor", 7)]
    assert trace.handoffs_recorded


def test_single_agent_stream_has_no_handoff() -> None:
    (trace,) = traces_of(FIXTURES / "langchain" / "stream.json", "langchain")
    assert trace.handoffs == []
    # no checkpoint namespaces: not a LangGraph run, so no handoff would have been seen
    assert not trace.handoffs_recorded


def test_real_single_agent_langgraph_run() -> None:
    """CIAgent's recorded LangSmith export of a LangGraph agent ("model" and "tools"
    nodes): no handoff."""
    path = shared_path("samples", "peers", "ciagent", "tests", "fixtures",
                       "langsmith_runs_real.json")
    runs = json.loads(path.read_text(encoding="utf-8"))
    assert {r["extra"]["metadata"].get("langgraph_node") for r in runs
            if r.get("extra", {}).get("metadata")} >= {"model", "tools"}
    traces = traces_of(path)
    assert traces and all(t.handoffs == [] for t in traces)
    assert all(t.handoffs_recorded for t in traces)  # a graph run: it had none
    assert sum(len(t.tool_calls) for t in traces) == 1  # lookup_invoice
