"""Publishing to GitHub from the action: the API client (:mod:`.client`) and the
workflow event (:mod:`.event`)."""

from __future__ import annotations

from agent_eval.github.client import (
    ApiError,
    CheckRun,
    Comment,
    GitHubClient,
    SarifUpload,
)
from agent_eval.github.event import Event, Target, load_event

__all__ = ["ApiError", "CheckRun", "Comment", "Event", "GitHubClient", "SarifUpload",
           "Target", "load_event"]
