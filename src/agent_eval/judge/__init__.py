"""The LLM judge, replayed deterministically (docs/judge.md).

``models`` validates the ``judge:`` block and the ``expect.judge`` checks, ``compile``
builds them once per suite, ``prompts`` renders what the model is asked, ``store`` keeps
every verdict in a reviewed file, ``evaluate`` grades a trace from the store (no network),
``record`` asks the model for what the store lacks (``--judge record`` / ``refresh``) and
``providers`` talks to the OpenAI and Anthropic APIs through their official SDKs, which
are imported only then (``pip install 'agent-eval-ci[judge]'``).
"""

from __future__ import annotations

__all__: list[str] = []  # the modules are the interface
