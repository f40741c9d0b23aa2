"""Publishing to GitHub from the action: the API client (:mod:`.client`), the workflow
event (:mod:`.event`), the action's inputs (:mod:`.inputs`), what a run says in the log,
the job summary and the step outputs (:mod:`.step`, :mod:`.workflow`), the calls it makes
after writing its files (:mod:`.publish`), and where it may write (:mod:`.workspace`)."""

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
