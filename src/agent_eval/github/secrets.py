"""The token never reaches a message: :class:`Redactor` replaces it in every line the
action prints, logs or writes to the job summary, the comment and the check run.

A token is redacted whole and piece by piece: a value with a line break or a space in it
(a pasted secret with a trailing newline inside, two secrets in one) is shown by Python and
``requests`` in ``repr`` form (``'ghp_abc\\nxyz'``), where the whole value does not occur
but each piece does.
"""

from __future__ import annotations

import re

MASK = "***"
MIN_PIECE = 4  # shorter pieces are not secret enough to hide everywhere they occur
_SPLIT = re.compile(r"[^\x21-\x7e]+")  # anything but printable ASCII without the space


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be sent in an HTTP header (None when it can). The text never
    holds the token."""
    if not token:
        return "the github-token is empty"
    bad = sorted({f"U+{ord(ch):04X}" for ch in token if not 0x21 <= ord(ch) <= 0x7E})
    if bad:
        shown = ", ".join(bad[:5]) + (" …" if len(bad) > 5 else "")
        return (f"the github-token holds characters a token cannot have ({shown}: a line "
                "break, a space or a control character, often from pasting a secret)")
    return None


class Redactor:
    """Replaces each secret given to :meth:`add`, and each piece of it, by ``***``."""

    def __init__(self, *secrets: str | None) -> None:
        self._pieces: list[str] = []
        for s in secrets:
            self.add(s)

    def add(self, secret: str | None) -> None:
        if not secret:
            return
        found = {secret.strip(), *(p for p in _SPLIT.split(secret) if len(p) >= MIN_PIECE)}
        pieces = {p for p in found if len(p) >= MIN_PIECE} | set(self._pieces)
        self._pieces = sorted(pieces, key=len, reverse=True)  # the longest first

    @property
    def pieces(self) -> list[str]:
        """The values replaced, the longest first."""
        return list(self._pieces)

    def maskable(self) -> list[str]:
        """The pieces that can stand on one ``::add-mask::`` line (no line break, space
        or control character: the whole value is masked through its pieces)."""
        return [p for p in self._pieces if not _SPLIT.search(p)]

    def __call__(self, text: str) -> str:
        for p in self._pieces:
            if p in text:
                text = text.replace(p, MASK)
        return text
