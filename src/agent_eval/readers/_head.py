"""The quoted tokens of a file's head, shared by the format sniffs (``format: auto``).

A sniff's pattern that needs the text ``"X"`` (X holding no quote) cannot match a head
whose tokens lack X: the head's pieces between its quotes are exactly the X of every
``"X"`` it holds. One split of the head answers, by set membership, what took a search
of the whole head per literal and per sniff (docs/performance.md, "Detection").
"""

from __future__ import annotations

from agent_eval.lazyre import LazyPattern

# A \u escape: how a JSON string can write a name's letters without the name's own bytes
# (one search of the head: quicker with a pattern than with `in` for these two bytes)
ESCAPE = LazyPattern(rb"\\u")
_last: tuple[bytes, frozenset[bytes]] = (b"", frozenset((b"",)))


def head_tokens(head: bytes) -> frozenset[bytes]:
    """The pieces of ``head`` between its quotes (with the piece before the first and the
    one after the last: never fewer than the head holds in quotes). The answer for the
    last head is kept: every sniff asks it of the same bytes while one file's format is
    detected (as :func:`agent_eval.readers._foreign.is_native` keeps its own)."""
    global _last
    last, tokens = _last
    if head is not last:
        tokens = frozenset(head.split(b'"'))
        _last = (head, tokens)
    return tokens
