"""Regular expressions matched in linear time (RE2), for patterns from configs.

A policy's ``pattern: "^(a+)+$"`` is matched against argument values that a pull request
may choose; with a backtracking engine (Python's ``re``) 35 characters take minutes. RE2
(the ``google-re2`` package) runs every pattern in time linear in the text and bounded
memory, so no value can hang a run. What it gives up: lookahead, lookbehind and
backreferences, which are refused when the suite is loaded, at the pattern's line.

:func:`compile_ecma` compiles a JSON Schema ``pattern`` (ECMA-262 semantics: ``\\d``,
``\\w`` and ``\\b`` ASCII, ``\\s`` ECMA's whitespace and ``\\S`` the rest (in a class
too), ``$`` only at the very end, ``.`` no line terminator); :func:`compile_python` a
scenario ``regex:`` written in Python's syntax. Both return a :class:`SafeRegex`, or raise
:class:`RegexError`.

Each pattern may take :data:`PATTERN_MAX_MEM` of RE2 memory (its program and its match
caches); while a suite is loaded (:func:`regex_budget`) identical patterns share one
program and all of them together compile to at most :data:`SUITE_PROGRAM_BUDGET`
instructions, so no suite can make loading take minutes or gigabytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from re2 import Options, _re2  # type: ignore[import-untyped]

# ECMA-262 whitespace (what \s means in a JSON Schema pattern), as an RE2 class body.
ECMA_SPACE = (r"\t\n\x0b\x0c\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
              r"\x{205f}\x{3000}\x{feff}")
# Everything else (what \S means), as an RE2 class body: in a class, RE2's own \S would
# take \v, U+00A0, U+2028, U+3000 and ECMA's other spaces for non-space
ECMA_NOT_SPACE = (r"\x00-\x08\x0e-\x1f\x21-\x9f\x{a1}-\x{167f}\x{1681}-\x{1fff}"
                  r"\x{200b}-\x{2027}\x{202a}-\x{202e}\x{2030}-\x{205e}\x{2060}-\x{2fff}"
                  r"\x{3001}-\x{fefe}\x{ff00}-\x{10ffff}")
# ECMA-262 "." matches anything but a line terminator
_ECMA_DOT = r"[^\n\r\x{2028}\x{2029}]"

# The memory one pattern may take: its program and the caches RE2 fills while matching
# (RE2's max_mem; its default, 8 MiB, let one pattern compile for 0.3 s to ~4 MB, and 300
# of them take 77 s and 1.15 GB). 1 MiB holds `.{1000}` (21,000 instructions, 10 ms).
PATTERN_MAX_MEM = 1024 * 1024
# The instructions (RE2's program size) all the distinct patterns of one suite may compile
# to together, each counted at least PATTERN_MIN_COST (what RE2 may cache for a small
# one): about 0.5 s of compiling and tens of MB at most.
SUITE_PROGRAM_BUDGET = 1_000_000
PATTERN_MIN_COST = 1000
TOO_LARGE_COST = 50_000  # what a pattern refused as too large counts (its compiling did)

_OPTIONS = Options()
_OPTIONS.log_errors = False  # errors are returned, not printed to stderr
_OPTIONS.never_capture = True  # only "does it match" is asked
_OPTIONS.max_mem = PATTERN_MAX_MEM
_TOO_LARGE = "pattern too large"
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_NO_MATCH = (-1, -1)
_UNSUPPORTED = ("invalid perl operator", "invalid escape sequence: \\1",
                "invalid escape sequence: \\2", "invalid escape sequence: \\3",
                "invalid escape sequence: \\4", "invalid escape sequence: \\5",
                "invalid escape sequence: \\6", "invalid escape sequence: \\7",
                "invalid escape sequence: \\8", "invalid escape sequence: \\9",
                "invalid named capture group")


class RegexError(ValueError):
    """A pattern that cannot be compiled, or not run in linear time."""


class _Budget:
    """The patterns compiled while one suite is loaded: each distinct one compiled once,
    and their programs' sizes added up against SUITE_PROGRAM_BUDGET."""

    __slots__ = ("compiled", "used")

    def __init__(self) -> None:
        self.compiled: dict[str, Any] = {}  # translated pattern -> its RE2 object
        self.used = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("agent_eval_regex_budget", default=None)


@contextmanager
def regex_budget() -> Iterator[None]:
    """While a suite is loaded: identical patterns share one compiled program, and all of
    them together are held to :data:`SUITE_PROGRAM_BUDGET` (a pattern past it raises
    :class:`RegexError`, reported at its line). Nested, the outer budget counts."""
    if _BUDGET.get() is not None:
        yield
        return
    token = _BUDGET.set(_Budget())
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _compile(translated: str) -> Any:
    """The RE2 object of a translated pattern, within the suite's budget (if any)."""
    budget = _BUDGET.get()
    if budget is not None:
        if (known := budget.compiled.get(translated)) is not None:
            return known
        if budget.used > SUITE_PROGRAM_BUDGET:  # spent: nothing more is compiled
            raise RegexError(_over_budget("the patterns before this one"))
    regex = _re2.RE2(translated.encode("utf-8", "surrogatepass"), _OPTIONS)
    if not regex.ok():
        raw = regex.error()
        error = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if error.startswith(_UNSUPPORTED):
            hint = ("; patterns run in linear time (RE2), which has no lookahead, "
                    "lookbehind or backreferences: rewrite it without them")
        elif error.startswith(_TOO_LARGE):
            hint = (f" (a pattern may take {PATTERN_MAX_MEM // 1024} KiB of RE2 memory); "
                    "use smaller repetition counts (a length is maxLength's to check)")
            if budget is not None:  # compiling it up to the limit took as long as one so big
                budget.used += TOO_LARGE_COST
        else:
            hint = ""
        raise RegexError(f"{error}{hint}")
    if budget is not None:
        size = regex.ProgramSize()
        budget.used += max(size, PATTERN_MIN_COST)
        if budget.used > SUITE_PROGRAM_BUDGET:
            raise RegexError(_over_budget(f"with this one ({size:,})"))
        budget.compiled[translated] = regex
    return regex


def _over_budget(what: str) -> str:
    return (f"the suite's regular expressions compile to more than "
            f"{SUITE_PROGRAM_BUDGET:,} instructions together ({what}; RE2's program size, "
            f"each distinct pattern counted once and at least {PATTERN_MIN_COST:,}); use "
            "fewer or simpler patterns (smaller repetition counts; a length is maxLength's "
            "to check)")


class SafeRegex:
    """A compiled pattern; ``search(text)`` is ``True`` when it matches anywhere in
    ``text``, else ``None`` (as ``re.Pattern.search`` is truthy or ``None``)."""

    __slots__ = ("pattern", "search", "translated")

    def __init__(self, pattern: str, translated: str) -> None:
        regex = _compile(translated)
        self.pattern = pattern
        self.translated = translated
        self.search: Callable[[str], bool | None] = _searcher(regex)

    def __reduce__(self) -> tuple[type[SafeRegex], tuple[str, str]]:
        return SafeRegex, (self.pattern, self.translated)  # compiled again


_MEMO_SIZE = 16384  # answers remembered per pattern (values repeat: ids, enums)
_MEMO_CHARS = 64  # for values up to this long (at most ~2 MB a pattern)
_MISS = object()


def _searcher(regex: Any) -> Callable[[str], bool | None]:
    """The search function: RE2 through its binding costs ~0.5 µs a call, Python's
    ``re`` ~0.1 µs, so answers for short values are remembered (bounded)."""
    match = regex.Match
    memo: dict[str, bool | None] = {}

    def search(text: str) -> bool | None:
        hit = memo.get(text, _MISS)
        if hit is not _MISS:
            return hit  # type: ignore[return-value]
        data = text.encode("utf-8", "surrogatepass")
        found = True if match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH else None
        if len(text) <= _MEMO_CHARS:
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[text] = found
        return found

    return search


def compile_ecma(pattern: str) -> SafeRegex:
    """A JSON Schema ``pattern`` (ECMA-262), searched anywhere in a string."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append(ECMA_SPACE if in_class else f"[{ECMA_SPACE}]")
            elif nxt == "S":
                out.append(ECMA_NOT_SPACE if in_class else f"[^{ECMA_SPACE}]")
            elif nxt == "u" and pattern[i + 2:i + 3] == "{":  # \u{1F600}
                end = pattern.find("}", i + 3)
                if end < 0:
                    raise RegexError("invalid escape sequence: \\u{ without }")
                out.append(f"\\x{{{pattern[i + 3:end]}}}")
                i = end + 1
                continue
            elif nxt == "u" and len(pattern[i + 2:i + 6]) == 4:  # \u2028
                out.append(f"\\x{{{pattern[i + 2:i + 6]}}}")
                i += 6
                continue
            elif nxt == "c" and i + 2 < n and pattern[i + 2].isascii() and (
                    pattern[i + 2].isalpha()):  # \cJ: a control character
                out.append(f"\\x{{{ord(pattern[i + 2].upper()) - 64:02x}}}")
                i += 3
                continue
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
        elif ch == "[":
            # a ']' first in the class (after an optional '^') is literal, as in RE2
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            out.append(pattern[i:j])
            i = j
            in_class = True
            continue
        elif ch == ".":
            out.append(_ECMA_DOT)
        else:
            out.append(ch)  # RE2's "$" is already the very end of the text
        i += 1
    return SafeRegex(pattern, "".join(out))


def compile_python(pattern: str) -> SafeRegex:
    """A pattern in Python's ``re`` syntax (a scenario's ``regex:``), searched anywhere.
    ``\\Z`` (Python's end of text) is RE2's ``\\z``; the rest of the syntax is shared."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "\\" and i + 1 < n:
            out.append("\\z" if pattern[i + 1] == "Z" else pattern[i:i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return SafeRegex(pattern, "".join(out))


# ------------------------------------------------------------------ JSON Schema files
# what is not a subschema: a value of one of these keywords holds data, not keywords
_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})


def _schema_objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object of a JSON Schema that may hold keywords, in no particular order (walked
    without recursion; the values of ``const``, ``enum``, ``examples`` and ``default`` are
    data, not schemas)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(v for k, v in node.items() if k not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend(node)


def schema_patterns(schema: Any) -> list[str]:
    """Every regex of a JSON Schema: ``pattern`` values and ``patternProperties`` keys."""
    found: list[str] = []
    for node in _schema_objects(schema):
        if isinstance(node.get("pattern"), str):
            found.append(node["pattern"])
        if isinstance(node.get("patternProperties"), dict):
            found.extend(str(k) for k in node["patternProperties"])
    return found


def jsonschema_validator(cls: Any, schema: Any, regexes: dict[str, SafeRegex],
                         own: dict[str, Callable[[str], bool]] | None = None) -> Any:
    """A ``jsonschema`` validator of ``cls`` whose ``pattern``, ``patternProperties`` and
    ``additionalProperties`` match with RE2 (``regexes``: every pattern of the schema,
    compiled by :func:`compile_ecma`) instead of Python's backtracking ``re``; ``own``:
    formats checked by these functions, not jsonschema's (:func:`format_checker`)."""
    from jsonschema import ValidationError, validators  # type: ignore[import-untyped]
    from referencing import Registry

    def search(pattern: str, text: str) -> bool | None:
        rx = regexes.get(pattern)
        return (rx or compile_ecma(pattern)).search(text)

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, pats: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for pat, subschema in pats.items():
            for k, v in instance.items():
                if search(pat, k):
                    yield from validator.descend(v, subschema, path=k, schema_path=pat)

    def additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        props = schema.get("properties", {})
        pats = list(schema.get("patternProperties", {}))
        extras = [k for k in instance if k not in props and not any(
            search(p, k) for p in pats)]
        if validator.is_type(ap, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], ap, path=extra)
        elif not ap and extras:
            joined = ", ".join(repr(e) for e in sorted(extras, key=str))
            yield ValidationError(f"Additional properties are not allowed ({joined} "
                                  f"{'was' if len(extras) == 1 else 'were'} unexpected)")

    extended = validators.extend(cls, {"pattern": pattern,
                                       "patternProperties": pattern_properties,
                                       "additionalProperties": additional_properties})
    # an empty registry, which jsonschema completes with the meta-schemas: a $ref to
    # anything else is never fetched (jsonschema's default registry retrieves http(s):// and
    # file:// references, which would read the network and files outside the repository)
    return extended(schema, format_checker=format_checker(cls, own), registry=Registry())


# ------------------------------------------------- JSON Schema formats (of trace values)
# A "format: regex" value longer than this is not a valid regex: RE2 compiles ~2 MB a
# second, and a trace value may be 64 MiB (limits.max_file_bytes)
FORMAT_REGEX_CHARS = 65_536
# Formats checked in time linear in the value by jsonschema's own code or by a library it
# uses that agent-eval installs (idna; rfc3339-validator's one anchored regex)
_LINEAR_FORMATS = frozenset({"date", "date-time", "time", "email", "idn-email", "ipv4",
                             "ipv6", "ip-address", "uuid", "idn-hostname"})
# Any other format jsonschema checks (uri, iri, hostname, json-pointer, uri-template,
# duration, color: with optional libraries of their own, when installed): a longer value is
# not valid for it, never handed to the library
FORMAT_OTHER_CHARS = 8_192
_CHECKERS: dict[Any, Any] = {}


def _is_regex(instance: object) -> bool:
    """``format: regex``: the value compiles as a JSON Schema pattern for RE2, as a policy's
    ``pattern:`` would (jsonschema's own check runs Python's ``re.compile`` on the value: a
    RecursionError on 1,000 nested groups, 46 s on 30 KB of character classes). A pattern
    RE2 cannot run (lookaround, backreferences), too large, or that fails in any other way
    is not a valid regex."""
    if not isinstance(instance, str):
        return True
    if len(instance) > FORMAT_REGEX_CHARS:
        return False
    try:
        compile_ecma(instance)
    except Exception:  # every failure is "not a regex", never a crash of the run
        return False
    return True


def _bounded(check: Callable[[object], Any], chars: int | None) -> Callable[[object], bool]:
    def bounded(instance: object) -> bool:
        if chars is not None and isinstance(instance, str) and len(instance) > chars:
            return False
        try:
            return bool(check(instance))
        except Exception:  # the library's "invalid" (or its crash): not valid, never a crash
            return False

    return bounded


def format_checker(cls: Any, own: dict[str, Callable[[str], bool]] | None = None) -> Any:
    """The ``FormatChecker`` of a JSON Schema validated against trace values: the formats
    jsonschema's checker for ``cls`` knows, each answering in bounded time and never
    raising; ``regex`` by :func:`_is_regex`; the formats of ``own`` by its functions
    (strings only; linear: the policy's own checks), in place of jsonschema's or beside
    them. A format the checker lacks is one jsonschema would let every value pass: the
    loader refuses a schema that names one (:func:`schema_formats`)."""
    key = (cls, id(own))
    checker = _CHECKERS.get(key)
    if checker is None:
        from jsonschema import FormatChecker

        checker = FormatChecker(())
        for name, (check, _raises) in cls.FORMAT_CHECKER.checkers.items():
            checker.checks(name)(_is_regex if name == "regex" else _bounded(
                check, None if name in _LINEAR_FORMATS else FORMAT_OTHER_CHARS))
        for name, test in (own or {}).items():
            checker.checks(name)(_own(test))
        _CHECKERS[key] = checker
    return checker


def _own(test: Callable[[str], bool]) -> Callable[[object], bool]:
    def check(instance: object) -> bool:
        return not isinstance(instance, str) or test(instance)

    return check


def schema_formats(schema: Any) -> list[str]:
    """Every ``format`` a JSON Schema names, in no particular order."""
    return [node["format"] for node in _schema_objects(schema)
            if isinstance(node.get("format"), str)]
