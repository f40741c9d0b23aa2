"""results.json: the contract other tools and the base-branch comparison read."""

from __future__ import annotations

import orjson

from agent_eval.results import Results


def render(results: Results) -> str:
    return orjson.dumps(results.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
