"""The judgement store (docs/judge.md "The store"): one JSON line per judgement, keyed by
a hash of everything that determines it, sorted by key.

A line starts with its key (``{"key":"<sha256>",...}``, the other fields in sorted
order), so the file sorts by key as text, every judgement is one line, and two branches
that recorded different judgements merge line by line (``merge=union`` in
``.gitattributes`` keeps both sides' lines; the store is read in any order). Two lines
with the same key and different content (the same judgement recorded twice) resolve to
the one that sorts first, on every machine, and are reported so that ``agent-eval judge
tidy`` can rewrite the file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from agent_eval.jsonutil import loads, open_regular, repeated_name
from agent_eval.judge.prompts import Prompt
from agent_eval.paths import not_utf8

MAX_STORE_BYTES = 64 << 20  # a larger store is refused (a config error): split the suite
MAX_REASONING = 4000  # characters of a verdict's reasoning that are kept
KEY_LENGTH = 64
# the most tokens one judgement may have taken, as for a trace's figures (readers/base.py
# FIGURE_MAX): a larger count cannot be written (orjson: 64 bits) or priced (a float)
MAX_TOKENS = 10**15


def judgement_key(provider: str, model: str, prompt: Prompt) -> str:
    """The key of a judgement: SHA-256 of the provider, the model, the prompt template's
    version and the exact prompt (which holds the rubric and every input) and verdict
    schema. A threshold is not part of it: changing one re-grades from the stored score."""
    doc = [provider, model, prompt.template, prompt.system, prompt.user, prompt.schema]
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict of the judge model, as stored."""

    key: str
    kind: str  # rubric | quality | safety | hallucination | pairwise
    provider: str
    model: str  # the configured model (part of the key)
    template: str
    reasoning: str  # model output: untrusted text, escaped wherever it is shown
    score: int | None = None  # graded kinds
    winner: str | None = None  # pairwise: A | B | tie
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    response_model: str | None = None  # the model the API said answered
    # where it was first needed (for the reviewer of the store; not part of the key)
    check: str = ""
    trace: str = ""

    def to_line(self) -> str:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "key"}
        body = orjson.dumps({k: v for k, v in data.items() if v is not None
                             and not (k in ("check", "trace") and not v)},
                            option=orjson.OPT_SORT_KEYS).decode()
        return '{"key":"' + self.key + '",' + body[1:] if body != "{}" else \
            '{"key":"' + self.key + '"}'

    @classmethod
    def from_obj(cls, obj: Any) -> Judgement | str:
        """A stored line's object as a judgement, or why it is not one."""
        if not isinstance(obj, dict):
            return "a judgement is a JSON object"
        key = obj.get("key")
        if not isinstance(key, str) or len(key) != KEY_LENGTH or any(
                c not in "0123456789abcdef" for c in key):
            return "'key' must be a SHA-256 in lowercase hex"
        for name in ("kind", "provider", "model", "template", "reasoning"):
            if not isinstance(obj.get(name), str):
                return f"'{name}' must be a string"
        score, winner = obj.get("score"), obj.get("winner")
        if obj["kind"] == "pairwise":
            if winner not in ("A", "B", "tie"):
                return "'winner' of a pairwise judgement must be A, B or tie"
            if score is not None:
                return "a pairwise judgement has a 'winner', not a 'score'"
        elif isinstance(score, bool) or not isinstance(score, int):
            return "'score' must be an integer"
        elif winner is not None:
            return f"a {obj['kind'][:40]} judgement has a 'score', not a 'winner'"
        for name in ("response_model", "check", "trace"):  # shown to the reviewer
            if obj.get(name) is not None and not isinstance(obj[name], str):
                return f"'{name}' must be a string"
        ints = {}
        for name in ("input_tokens", "output_tokens"):
            v = obj.get(name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                                  or not 0 <= v <= MAX_TOKENS):
                return f"'{name}' must be a whole number of at most 10^15"
            ints[name] = v
        cost = obj.get("cost_usd")
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)
                                 or cost < 0):
            return "'cost_usd' must be a number"
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            return f"unknown field '{unknown[0]}' (a store written by a newer agent-eval?)"
        return cls(key=key, kind=obj["kind"], provider=obj["provider"], model=obj["model"],
                   template=obj["template"], reasoning=obj["reasoning"][:MAX_REASONING],
                   score=score if obj["kind"] != "pairwise" else None,
                   winner=winner if obj["kind"] == "pairwise" else None,
                   input_tokens=ints["input_tokens"], output_tokens=ints["output_tokens"],
                   cost_usd=None if cost is None else float(cost),
                   response_model=obj.get("response_model"),
                   check=obj.get("check") or "", trace=obj.get("trace") or "")


@dataclass
class Store:
    """The judgements of one store file, by key."""

    file: str  # repo-relative path (for messages)
    entries: dict[str, Judgement] = field(default_factory=dict)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    conflicts: list[str] = field(default_factory=list)  # keys stored twice, differently
    conflict_line: int = 0  # the first line giving a key stored before another verdict
    # the lines of the problems, as they are: saving keeps them (after the judgements), so
    # that recording never deletes a line of a newer agent-eval or one to be fixed by hand
    unread: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, file: str) -> Store:
        """Parse a store's text; bad lines are kept as problems, the rest is read."""
        store = cls(file)
        lines: dict[str, str] = {}
        # lines end at "\n" only, as git and editors count them: str.splitlines() also
        # ends one at U+2028, U+0085 ..., which JSON strings hold unescaped (a reasoning
        # holding one made the line agent-eval wrote unreadable, three broken lines)
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                obj = loads(line)  # bounded: the store is in the pull request too
            except orjson.JSONDecodeError as exc:
                why = ("not UTF-8 text" if not_utf8(line)
                       else f"not valid JSON ({exc})")
                store.problems.append((number, f"{why}; remove the line or record it again"))
                store.unread.append(line)
                continue
            got = Judgement.from_obj(obj)
            canonical = "" if isinstance(got, str) else got.to_line()
            if not isinstance(got, str) and line.strip() != canonical:
                # (a line as agent-eval writes it gives each name once: only others are
                # looked into) a field given twice is read as its last value, which a
                # reviewer of the diff may not see: "score": 1 ... "score": 5
                got = repeated_name(line) or got
            if isinstance(got, str):
                store.problems.append((number, f"not a judgement: {got}"))
                store.unread.append(line)
                continue
            have = lines.get(got.key)
            if have is not None and have != canonical:
                if got.key not in store.conflicts:
                    store.conflicts.append(got.key)
                    store.conflict_line = store.conflict_line or number
                if canonical > have:
                    continue
            lines[got.key] = canonical
            store.entries[got.key] = got
        return store

    def get(self, key: str) -> Judgement | None:
        return self.entries.get(key)

    def put(self, judgement: Judgement) -> None:
        self.entries[judgement.key] = judgement

    def merge(self, other: Store) -> None:
        """Add ``other``'s judgements; a key both have keeps the line that sorts first
        (as reading a union-merged file does)."""
        for key, j in other.entries.items():
            have = self.entries.get(key)
            if have is None or j.to_line() < have.to_line():
                self.entries[key] = j

    def render(self) -> str:
        """The file's text: one line per key, sorted by key, and then the lines that are
        not judgements as they were (``judge tidy`` refuses a store that has any)."""
        return "".join([*(self.entries[k].to_line() + "\n" for k in sorted(self.entries)),
                        *(line + "\n" for line in self.unread)])

    def save(self, path: Path) -> None:
        """Write the store (atomically: a reader never sees half a file). The problems
        then name the lines where their lines now are."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".judgements-", dir=path.parent)
        try:
            # surrogateescape: a line that is not UTF-8 is written back byte for byte
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape",
                           newline="\n") as fh:
                fh.write(self.render())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        first = len(self.entries) + 1
        self.problems = [(first + i, message) for i, (_, message) in enumerate(self.problems)]


def read_store(path: Path, file: str) -> Store | str:
    """The store at ``path`` (empty when there is none yet), or why it cannot be read.
    It is read on its own, not as one of the suite's sources: it is no part of the
    config (the config digest and the policy comparison leave it out)."""
    try:
        with open_regular(path) as fh:  # a link to a FIFO or a pipe: never waited on
            size = os.fstat(fh.fileno()).st_size
            # what the file holds (plus one, to see it grow), never the limit itself
            data = fh.read(min(size, MAX_STORE_BYTES) + 1)
    except FileNotFoundError:
        return Store(file)
    except OSError as exc:
        return f"cannot read the judgement store {file}: {exc.strerror or exc}"
    if len(data) > MAX_STORE_BYTES:
        return (f"the judgement store {file} is larger than {MAX_STORE_BYTES} bytes; split the "
                "suite, or give each suite its own judge.store")
    # a line that is not UTF-8 is a broken line like any other (Store.parse says which)
    return Store.parse(data.decode("utf-8", errors="surrogateescape"), file)
