"""Typed model of the suite's ``judge:`` block (docs/judge.md): the judge model, the
judgement store, the budget and the price. Apart from ``judge/models.py`` (the scenarios'
judge checks) so that a suite without a ``judge:`` block does not make these models
(start-up time, docs/performance.md)."""

from typing import Literal

from pydantic import Field

from agent_eval.config.models import FileName, Strict
from agent_eval.judge.models import DEFAULT_STORE

__all__ = ["Budget", "JudgeConfig", "Price", "Provider"]

Provider = Literal["openai", "anthropic"]


class Budget(Strict):
    """Limits of one run of ``--judge record`` / ``refresh``: what is left unjudged once
    one is reached is an error (judge/error), never a pass."""

    max_calls: int | None = Field(None, ge=0, description="Model calls (a retry counts).")
    max_tokens: int | None = Field(None, ge=0, description="Input + output tokens.")
    max_cost_usd: float | None = Field(None, ge=0, description="Cost in USD (needs `price`).")


class Price(Strict):
    """What the judge model costs, to report the cost of judging and enforce
    `budget.max_cost_usd`."""

    input: float = Field(ge=0, description="USD per million input tokens.")
    output: float = Field(ge=0, description="USD per million output tokens.")


class JudgeConfig(Strict):
    """The judge model and the judgement store (docs/judge.md)."""

    provider: Provider | None = Field(
        None, description="openai: the official openai SDK, for OpenAI and any "
        "OpenAI-compatible endpoint (Azure, Ollama, vLLM, LM Studio, llama.cpp server); "
        "anthropic: the official anthropic SDK.")
    model: str | None = Field(None, min_length=1, description="The judge model's name; part "
                              "of every judgement's key.")
    base_url: str | None = Field(None, description="The endpoint (default: the provider's "
                                 "own API).")
    api_key_env: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="The environment variable "
        "that holds the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY). Only "
        "`--judge record` and `refresh` read it.")
    store: FileName = Field(DEFAULT_STORE, description="The judgement store: a JSONL file in the "
                       "repository, relative to this file.")
    seed: int = Field(0, ge=0, description="Sent as the request seed where the API has one "
                      "(OpenAI).")
    response_format: Literal["json_schema", "json_object"] = Field(
        "json_schema", description="openai: how the verdict's JSON Schema is sent: "
        "json_schema (OpenAI structured outputs, also vLLM, Ollama, LM Studio, llama.cpp's "
        "llama-server) or json_object with the schema beside it (llama-cpp-python's "
        "server).")
    max_tokens: int = Field(1024, ge=16, le=32768, description="Largest verdict, in tokens.")
    max_retries: int = Field(2, ge=0, le=10, description="Retries of a failed or invalid "
                             "call.")
    timeout_s: float = Field(60, gt=0, le=600, description="Timeout of one call.")
    concurrency: int = Field(4, ge=1, le=32, description="Calls in flight at once.")
    max_input_chars: int = Field(
        20000, ge=200, le=1_000_000, description="The longest output, context or request "
        "text sent to the judge; longer ones are cut (the same way on every run).")
    budget: Budget | None = None
    price: Price | None = None
