"""Give what the action wrote in the workspace back to the workspace's owner.

The action's container runs as root while the runner's checkout belongs to the runner's
user (uid 1001 on GitHub-hosted runners; anyone on a self-hosted one). Everything the run
creates there — the output folder, ``.agent-eval/`` (downloaded artifacts, the baseline),
the objects and refs ``git fetch`` adds to ``.git``, files git rewrites through a lock file —
would stay owned by root, and later steps (``actions/checkout`` cleaning the workspace on a
self-hosted runner, a step writing into the output folder) fail on them.

:func:`give_back` changes the owner of exactly those entries: inside the workspace, owned
by this process's user (root), and created or changed since the run started (their
``ctime``), to the owner and group of the workspace folder. Files that another root step
left there earlier keep their owner. Nothing happens when the process is not root or the
workspace belongs to root. Symbolic links are changed themselves, never followed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 2_000_000  # a bound on the walk; a checkout this large is told, not hung on
SLACK = 2.0  # seconds: filesystems keep ctime coarser than time.time() on some systems


@dataclass(frozen=True)
class GivenBack:
    uid: int
    gid: int
    changed: int  # entries whose owner was changed
    seen: int  # entries looked at
    failed: int  # entries whose owner could not be changed


def give_back(workspace: Path, since: float, log: Callable[[str], None] | None = None,
              *, max_entries: int = MAX_ENTRIES) -> GivenBack | None:
    """Make the entries under ``workspace`` that this (root) process created or changed
    since ``since`` (``time.time()``) belong to the workspace's owner; None when there is
    nothing to do (not root, no such folder, or a workspace owned by this user)."""
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid != 0:
        return None
    try:
        st = os.stat(workspace)
    except OSError:
        return None
    if st.st_uid == euid:
        return None
    uid, gid = st.st_uid, st.st_gid
    changed = seen = failed = 0
    cutoff = since - SLACK
    for top, dirs, files in os.walk(workspace, followlinks=False):
        for name in (*dirs, *files):
            seen += 1
            if seen > max_entries:
                if log:
                    log(f"stopped giving files back to uid {uid} after {max_entries} entries "
                        f"in {workspace}")
                return GivenBack(uid, gid, changed, seen - 1, failed)
            path = os.path.join(top, name)
            try:
                s = os.lstat(path)
                if s.st_uid != euid or s.st_ctime < cutoff:
                    continue
                os.lchown(path, uid, gid)
                changed += 1
            except OSError:
                failed += 1
    if log and (changed or failed):
        log(f"gave {changed} file(s) and folder(s) written by this run back to the workspace's "
            f"owner (uid {uid}, gid {gid})" + (f"; {failed} could not be changed" if failed
                                               else ""))
    return GivenBack(uid, gid, changed, seen, failed)
