"""Tool pinning: the lock file, rug pulls, shadowing, instructions in descriptions.

Pure functions of the servers' tool listings (``tools/list`` entries as on the wire) and
the lock file's data; the runner gives them the listings and turns the results into
findings at the server's line. The lock is deterministic JSON: names and sha-256 hashes
of each tool's description and input schema (no timestamps), so it diffs well in review.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.limits import CONFIG
from agent_eval.rule_ids import (
    MCP_HIDDEN_CHARACTERS,
    MCP_INJECTED_INSTRUCTIONS,
    MCP_TOOL_ADDED,
    MCP_TOOL_CHANGED,
    MCP_TOOL_REMOVED,
    MCP_TOOL_SHADOWING,
)

LOCK_VERSION = 1
MAX_LOCK_BYTES = 8 * 1024 * 1024
SCAN_CHUNK = 4096  # characters of a text checked at once for invisible characters


@dataclass(frozen=True, slots=True)
class ToolIssue:
    """One finding about a server's tools, before it gets a location."""

    rule: str
    tool: str
    message: str
    constraint: str | None = None
    value: Any = None


# ---------------------------------------------------------------------- hashing
def canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def digest(value: Any) -> str:
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) \
        else canonical(value)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tool_entry(tool: dict[str, Any]) -> dict[str, str]:
    return {"description": digest(str(tool.get("description") or "")),
            "input_schema": digest(tool.get("inputSchema") or {})}


def lock_data(listings: dict[str, list[dict[str, Any]]],
              old: dict[str, Any] | None = None) -> dict[str, Any]:
    """The lock for ``listings`` (server -> tools); servers not listed keep their old
    entries."""
    servers: dict[str, Any] = dict((old or {}).get("servers") or {})
    for server, tools in listings.items():
        servers[server] = {"tools": {str(t.get("name")): tool_entry(t)
                                     for t in sorted(tools, key=lambda t: str(t.get("name")))}}
    return {"version": LOCK_VERSION, "servers": dict(sorted(servers.items()))}


def render_lock(data: dict[str, Any]) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def read_lock(path: Path) -> dict[str, Any]:
    """The lock file's data; ValueError (with the reason) when it is not a lock (a FIFO
    or a device is one: opening it never waits for a writer)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(str(path)) from None
    with open(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_LOCK_BYTES:
            raise ValueError(f"larger than {MAX_LOCK_BYTES // (1024 * 1024)} MiB")
        raw = fh.read(MAX_LOCK_BYTES + 1)
    if len(raw) > MAX_LOCK_BYTES:
        raise ValueError(f"larger than {MAX_LOCK_BYTES // (1024 * 1024)} MiB")
    try:
        data = bounded_loads(raw, CONFIG)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != LOCK_VERSION or not isinstance(
            data.get("servers"), dict):
        raise ValueError(f"not an agent-eval tool lock (expected {{\"version\": "
                         f"{LOCK_VERSION}, \"servers\": {{...}}}})")
    for name, entry in data["servers"].items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if not isinstance(tools, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("description"), str)
                and isinstance(v.get("input_schema"), str) for v in tools.values()):
            raise ValueError(f"server '{name}': expected tools: {{NAME: {{description, "
                             "input_schema}}}}")
    return data


# ------------------------------------------------------------------ comparison
def compare(server: str, tools: list[dict[str, Any]], locked: dict[str, Any]
            ) -> list[ToolIssue]:
    """Rug pulls (changed hashes), tools that appeared and tools that vanished."""
    pinned: dict[str, dict[str, str]] = locked.get("tools") or {}
    now: dict[str, list[dict[str, str]]] = {}  # every entry of a name listed twice
    for t in tools:
        now.setdefault(str(t.get("name")), []).append(tool_entry(t))
    out: list[ToolIssue] = []
    for name in sorted(now.keys() | pinned.keys()):
        if name not in pinned:
            out.append(ToolIssue(MCP_TOOL_ADDED.id, name, f"server '{server}' has a tool "
                                 f"'{name}' that is not in the lock file; review it and run "
                                 "`agent-eval lock`", "tool_lock"))
        elif name not in now:
            out.append(ToolIssue(MCP_TOOL_REMOVED.id, name, f"server '{server}' no longer has "
                                 f"the locked tool '{name}'", "tool_lock"))
        else:
            # the first entry that differs: a second entry of the name must not hide it
            entry, changed = next(((e, c) for e in now[name] if (c := [
                k for k in ("description", "input_schema") if e[k] != pinned[name].get(k)])),
                (now[name][0], []))
            if changed:
                what = " and ".join("description" if k == "description" else "input schema"
                                    for k in changed)
                out.append(ToolIssue(MCP_TOOL_CHANGED.id, name, f"the {what} of tool '{name}' "
                                     f"on server '{server}' changed since it was locked "
                                     "(a possible rug pull); review it and run `agent-eval "
                                     "lock`", "tool_lock", {k: {"locked": pinned[name].get(k),
                                                                "now": entry[k]}
                                                            for k in changed}))
    return out


def shadowing(listings: dict[str, list[dict[str, Any]]], normalize: Any
              ) -> dict[str, list[ToolIssue]]:
    """Tool names (after the suite's name matching) exposed by more than one server, or
    twice by one server: reported on each later server (at each later entry), naming the
    first."""
    first: dict[str, tuple[str, str]] = {}
    out: dict[str, list[ToolIssue]] = {}
    for server, tools in listings.items():
        for tool in tools:
            name = str(tool.get("name"))
            key = normalize(name)
            owner = first.get(key)
            if owner is None:
                first[key] = (server, name)
            elif owner[0] != server:
                out.setdefault(server, []).append(ToolIssue(
                    MCP_TOOL_SHADOWING.id, name, f"tool '{name}' of server '{server}' has the "
                    f"same name as tool '{owner[1]}' of server '{owner[0]}': a client that "
                    "merges the servers' tools may call the wrong one",
                    f"shadows: {owner[0]}.{owner[1]}", owner[0]))
            else:  # one server lists the name twice: the client, the lock and the checks
                # may each take another of the two
                out.setdefault(server, []).append(ToolIssue(
                    MCP_TOOL_SHADOWING.id, name, f"server '{server}' lists tool '{name}' "
                    f"again (as '{owner[1]}' before): a client may call either of the two, "
                    "whatever the other describes", f"shadows: {owner[0]}.{owner[1]}",
                    owner[0]))
    return out


# ---------------------------------------------------------------------- scanning
# Characters a reader does not see but a model does: Unicode format controls
# (zero-width, bidirectional overrides, tag characters U+E0000–U+E007F), private-use
# and unassigned code points, and control characters other than tab and newline.
_VISIBLE_CONTROLS = {"\t", "\n", "\r"}
# Phrasings that address the model rather than describe the tool. Compiled once.
# Each is scanned over the whole text, in time linear in its length: every pattern but
# the first spans a bounded number of characters, and the first (a tag: its opening
# then, anywhere later, a ``>``) is matched as its opening and a ``>`` after it
# (``[^>]*>`` retried at each opening of a long text took time quadratic in its length).
_TAG = re.compile(r"<\s*/?\s*(important|system|instructions?|secret|hidden|admin)\b", re.I)
_INSTRUCTIONS = [(re.compile(p, re.I), why) for p, why in (
    (r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
     r"all|other|system)\b[^.\n]{0,20}\b(instructions?|rules|prompts?|directions|guidelines)",
     "text telling the model to ignore its instructions"),
    (r"\b(do not|don't|never)\s+(tell|inform|mention|reveal|notify|show)\b[^.\n]{0,30}\b"
     r"(the )?user\b", "text telling the model to hide something from the user"),
    (r"\b(before|after|instead of)\s+(using|calling|invoking|running)\s+(this|any|the|"
     r"other)\b[^.\n]{0,40}\b(you\s+)?must\b", "text ordering the model around other tools"),
    (r"\b(read|cat|send|upload|include|pass)\b[^.\n]{0,40}(~/\.ssh|id_rsa|\.env\b|"
     r"mcp\.json|credentials|private key|api[_ ]key)", "text asking for secrets or keys"),
    (r"\byou are now\b|\bnew instructions\s*:|\bsystem prompt\s*:",
     "text that tries to re-prompt the model"),
)]


def hidden_characters(text: str) -> list[str]:
    """The invisible characters of ``text`` as ``U+XXXX NAME`` (each once)."""
    seen: dict[str, None] = {}
    for start in range(0, len(text), SCAN_CHUNK):
        chunk = text[start:start + SCAN_CHUNK]
        if chunk.replace("\t", "").replace("\n", "").replace("\r", "").isprintable():
            continue  # none here (str.isprintable is false for each of them)
        for ch in chunk:
            if ch in _VISIBLE_CONTROLS:
                continue
            cat = unicodedata.category(ch)
            if cat in ("Cf", "Co", "Cn", "Cc"):
                seen[f"U+{ord(ch):04X} {unicodedata.name(ch, cat)}"] = None
    return list(seen)


def instructions(text: str) -> list[str]:
    """Why ``text`` reads as instructions to the model (each reason once)."""
    found: list[str] = []
    closing = text.rfind(">")
    tag = next((m for m in _TAG.finditer(text) if m.end() <= closing), None)
    if tag is not None:
        block = text[tag.start():text.index(">", tag.end()) + 1]
        found.append(f"an <{tag.group(1).upper()}> block: {block[:80]!r}")
    for rx, why in _INSTRUCTIONS:
        m = rx.search(text)
        if m is not None:
            reason = why.format(m.group(1).upper() if m.groups() else "")
            found.append(f"{reason}: {m.group(0)[:80]!r}")
    return found


def _texts(tool: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) of every description-like string a model reads for this tool."""
    out: list[tuple[str, str]] = []
    for key in ("description", "title"):
        if isinstance(tool.get(key), str):
            out.append((key, tool[key]))
    stack: list[tuple[str, Any]] = [("inputSchema", tool.get("inputSchema"))]
    while stack:  # the whole schema: a description deep in a large one is read too
        where, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("description", "title") and isinstance(v, str):
                    out.append((f"{where}.{k}", v))
                elif isinstance(v, dict | list):
                    stack.append((f"{where}.{k}", v))
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(node))
    return out


def scan(server: str, tools: list[dict[str, Any]]) -> list[ToolIssue]:
    """Hidden characters and instruction-like text in the tools' descriptions."""
    out: list[ToolIssue] = []
    for tool in tools:
        name = str(tool.get("name"))
        chars: dict[str, None] = {}
        said: dict[str, str] = {}
        for where, text in [*_texts(tool), ("name", name)]:
            for c in hidden_characters(text):
                chars.setdefault(c, None)
            if where != "name":
                for reason in instructions(text):
                    said.setdefault(reason, where)
        if chars:
            out.append(ToolIssue(MCP_HIDDEN_CHARACTERS.id, name, f"the description of tool "
                                 f"'{name}' on server '{server}' holds invisible characters "
                                 f"({', '.join(list(chars)[:5])}) that a model reads and a "
                                 "reviewer does not see", None, list(chars)))
        for reason, where in said.items():
            out.append(ToolIssue(MCP_INJECTED_INSTRUCTIONS.id, name, f"the {where} of tool "
                                 f"'{name}' on server '{server}' carries instructions to the "
                                 f"model: {reason}", None, reason))
    return out
