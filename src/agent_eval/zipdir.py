"""A zip's central directory, sized up before :mod:`zipfile` reads it (docs/security.md).

``zipfile.ZipFile`` reads the central directory whole and makes an object per entry (300,000
empty members: 280 MB), every entry the directory holds, whatever count its end record
declares. So both the Inspect ``.eval`` reader and the artifact download hold a zip to a
bound on its members and on its directory's bytes first, with :func:`excess`: the members
the end record declares, the directory's size, and the entries counted in those bytes (an
end record may declare fewer members than its directory holds).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from typing import Literal

_END_RECORD = getattr(zipfile, "_EndRecData", None)
_CENTRAL = b"PK\x01\x02"  # what every member's entry in the central directory starts with
_ZIP64_END = 76  # the zip64 end record and its locator, between the directory and the end


class NotAZipError(ValueError):
    """The file has no end of central directory record: it is not a zip."""


@dataclass(frozen=True, slots=True)
class Excess:
    """What of a zip's central directory is over its bound, before it was read:
    ``declared`` members (its end record's count), its size in ``bytes``, or the entries
    ``counted`` in its bytes (``declared`` then gives what the end record said)."""

    kind: Literal["declared", "bytes", "counted"]
    value: int
    declared: int


def excess(path: str | os.PathLike[str], *, max_members: int,
           max_bytes: int) -> Excess | None:
    """None when the zip's central directory may be read: it declares at most
    ``max_members`` members, is at most ``max_bytes`` bytes, and its bytes hold at most
    ``max_members`` entries. The entries are counted in those bytes and the 76 before them
    (where zip64 puts its own end record, whichever way a Python version's zipfile locates
    the directory): never fewer than zipfile reads. Reads at most ``max_bytes`` + 76 bytes
    and the end record. :class:`NotAZipError` when there is no end record; zipfile's own
    errors (a zip64 record spanning disks) and ``OSError`` are raised as they come."""
    if _END_RECORD is None:  # pragma: no cover - every CPython since 2.x has it
        raise NotAZipError("this Python's zipfile has no _EndRecData to read the end record")
    with open(path, "rb") as fh:
        end = _END_RECORD(fh)
        if not end:
            raise NotAZipError("no end of central directory record")
        declared, size, at = int(end[4]), int(end[5]), int(end[9])  # entries, bytes, where
        if declared > max_members:
            return Excess("declared", declared, declared)
        if size > max_bytes:
            return Excess("bytes", size, declared)
        start = max(0, at - size - _ZIP64_END)
        fh.seek(start)
        entries = fh.read(at - start).count(_CENTRAL)
    if entries > max_members:
        return Excess("counted", entries, declared)
    return None
