"""Scenarios: graded expectations for specific traces, suite metrics and pass criteria
(docs/scenarios.md). ``models`` validates the config, ``compile`` builds everything once per
suite, ``metrics`` holds the formulas as pure functions and ``evaluate`` applies them to
traces and aggregates the suite."""

from __future__ import annotations

__all__: list[str] = []  # the modules are the interface
