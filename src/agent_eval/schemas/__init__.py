"""Published JSON Schemas: the suite file and the policy file (generated from the
models) and the results JSON (a hand-written contract, results.schema.json).

``python -m agent_eval.schemas DIR`` writes them; a test checks the committed copies in
``schemas/`` are current.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import Field, create_model

from agent_eval import results
from agent_eval._version import REPOSITORY
from agent_eval.checks import REGISTRY
from agent_eval.config.models import PolicyFile, SuiteFile
from agent_eval.judge.config import JudgeConfig
from agent_eval.live.models import NAME_PATTERN, Probe, Server
from agent_eval.scenarios.models import PassCriteria, Scenario, SuiteWeights

__all__ = ["BASE_URL", "main", "policy_schema", "render_all", "results_schema",
           "suite_schema"]

BASE_URL = f"https://github.com/{REPOSITORY}/raw/main/schemas/"


def suite_schema() -> dict[str, Any]:
    members: Any = tuple(spec.model for spec in REGISTRY.values())
    tests: Any = Annotated[Union[members], Field(discriminator="metric")]  # noqa: UP007
    model = create_model(
        "SuiteFile",
        __base__=SuiteFile,
        tests=(list[tests], Field(default_factory=list,
                                  description="Rule checks run over every trace.")),
        scenarios=(list[Scenario], Field(default_factory=list,
                                         description="Expectations for specific traces "
                                         "(scores); see docs/scenarios.md.")),
        pass_criteria=(PassCriteria | None, Field(None, description="Suite-level gates "
                                                  "over the scenarios' metrics.")),
        servers=(dict[str, Server] | None, Field(
            None, description="MCP servers to start (stdio) or reach (Streamable HTTP) "
            "for the probes; see docs/mcp.md.",
            json_schema_extra={"propertyNames": {"pattern": NAME_PATTERN}})),
        probes=(list[Probe], Field(default_factory=list, description="Live checks of the "
                                   "servers; see docs/mcp.md.")),
        weights=(SuiteWeights | None, Field(None, description="Score weights of every "
                                            "scenario, and by_category.")),
        judge=(JudgeConfig | None, Field(None, description="The judge model and the "
                                         "judgement store; see docs/judge.md.")),
    )
    return _finish(model.model_json_schema(by_alias=True), "suite", "agent-eval suite file")


def policy_schema() -> dict[str, Any]:
    return _finish(PolicyFile.model_json_schema(by_alias=True), "policy",
                   "agent-eval policy file (args_valid)")


def results_schema() -> dict[str, Any]:
    """The hand-written results schema (read where results files are checked)."""
    return results.results_schema()


def _finish(schema: dict[str, Any], name: str, title: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_URL}{name}.schema.json",
        **{k: v for k, v in schema.items() if k != "title"},
        "title": title,
    }


def render_all() -> dict[str, str]:
    return {
        f"{name}.schema.json": json.dumps(schema, indent=2, sort_keys=True) + "\n"
        for name, schema in (("suite", suite_schema()), ("policy", policy_schema()),
                             ("results", results_schema()))
    }


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "schemas")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (folder / name).write_text(text, encoding="utf-8")
        print(folder / name)
    return 0


