"""LangGraph node transitions as handoffs (docs/formats/langsmith.md, langchain.md).

LangGraph tags what runs inside a graph with ``langgraph_checkpoint_ns``: ``node:task``
for a node of the top-level graph, ``node:task|inner:task`` inside a node that is itself a
graph. A multi-agent graph (langgraph-supervisor, langgraph-swarm, hand-built) makes each
agent such a subgraph node; control passing from one agent node to another is a handoff.
Nodes that are not graphs ("model", "tools" of a single agent, routing functions) are steps
of one agent, never handoffs.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_eval.model import Handoff, Location

__all__ = ["node_transitions"]


def node_transitions(steps: Iterable[tuple[str, Location]]) -> list[Handoff]:
    """The handoffs of one graph run, from the checkpoint namespaces of what ran in it
    (``(namespace, location)`` in the order it ran): each change from one agent node's
    task to another agent node's task is a handoff, located where the new one starts."""
    tasks: list[tuple[str, str, Location]] = []  # (task, node, first location)
    seen: set[str] = set()
    agents: set[str] = set()  # top-level nodes that ran a subgraph
    for ns, loc in steps:
        segments = [s for s in ns.split("|") if s]
        if not segments:
            continue
        task = segments[0]
        node = task.split(":", 1)[0]
        if not node:
            continue
        if len(segments) > 1:
            agents.add(node)
        if task not in seen:
            seen.add(task)
            tasks.append((task, node, loc))
    out: list[Handoff] = []
    current: str | None = None
    for _task, node, loc in tasks:
        if node not in agents:
            continue
        if current is not None and node != current:
            out.append(Handoff(node, loc, current))
        current = node
    return out
