"""The quoted tokens of a file's head, shared by the format sniffs (``format: auto``).

A sniff's pattern that needs the text ``"X"`` (X holding no quote) cannot match a head
that does not hold ``"X"``. Each such X a sniff asks about is declared once, at import
(:func:`asked`); one pass of RE2's set matcher over the head finds every declared token
the head holds in quotes, and a sniff asks by set membership what took a search of the
whole head per literal and per sniff (docs/performance.md, "Detection").

Only declared tokens are ever found: a token asked without being declared would never
be there, so ``tests/readers/test_detection.py`` checks, in the sniffs' code, that
every token asked is declared.
"""

from __future__ import annotations

from typing import Any

from re2 import _re2  # type: ignore[import-untyped]

from agent_eval.lazyre import LazyPattern

# A \u escape: how a JSON string can write a name's letters without the name's own bytes
# (one search of the head: quicker with a pattern than with `in` for these two bytes)
ESCAPE = LazyPattern(rb"\\u")

_declared: list[bytes] = []  # the tokens, in the order declared (a match gives an index)
_matcher: Any = None  # the compiled set of the declared tokens, once asked
_last: tuple[bytes, frozenset[bytes]] = (b"", frozenset())


def asked(*tokens: bytes) -> frozenset[bytes]:
    """Declare ``tokens`` (texts without a quote) as ones a sniff asks
    :func:`head_tokens` about; returns them as a set."""
    global _last, _matcher
    for token in tokens:
        if b'"' in token or not token:
            raise ValueError(f"a token is a text without a quote, not {token!r}")
        if token not in _declared:  # (at import: a few dozen tokens)
            _declared.append(token)
            _matcher = None  # compiled again, with it, when next asked
            _last = (b"", frozenset())  # and no answer kept that lacks it
    return frozenset(tokens)


def declared() -> frozenset[bytes]:
    """Every token declared so far."""
    return frozenset(_declared)


def _compile() -> Any:
    global _matcher
    options = _re2.RE2.Options()
    options.literal = True  # the tokens are texts, not patterns
    options.encoding = _re2.RE2.Options.Encoding.LATIN1  # bytes as they are
    options.case_sensitive = True
    matcher = _re2.Set(_re2.RE2.Anchor.UNANCHORED, options)
    for token in _declared:
        if matcher.Add(b'"' + token + b'"') < 0:  # pragma: no cover - a literal compiles
            raise ValueError(f"cannot look for the token {token!r}")
    if not matcher.Compile():  # pragma: no cover - a few literals fit RE2's memory
        raise ValueError("cannot compile the set of the sniffs' tokens")
    _matcher = matcher  # (two threads compiling at once: either one, both right)
    return matcher


def head_tokens(head: bytes) -> frozenset[bytes]:
    """The declared tokens that ``head`` holds in quotes (``"X"``). The answer for the
    last head is kept: every sniff asks it of the same bytes while one file's format is
    detected (as :func:`agent_eval.readers._foreign.is_native` keeps its own)."""
    global _last
    last, tokens = _last
    if head is not last:
        matcher = _matcher or _compile()
        names = _declared
        tokens = frozenset([names[i] for i in matcher.Match(head)])
        _last = (head, tokens)
    return tokens
