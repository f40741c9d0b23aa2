"""The judge model, through the providers' official SDKs (docs/judge.md "Providers").

- ``openai``: the ``openai`` SDK's Chat Completions, for OpenAI and any OpenAI-compatible
  endpoint (``base_url``): temperature 0, ``seed``, and the verdict as a structured output
  (``response_format`` with the verdict's JSON Schema, ``strict``).
- ``anthropic``: the ``anthropic`` SDK's Messages, with the verdict as a structured output
  (``output_config.format``). The current Messages API (version 2026-10-21, which the SDK
  sends) has no sampling parameters: a temperature is refused, so none is sent; replaying
  from the store is what makes the judge deterministic.

The SDKs are imported here only, when a judgement is recorded; replaying needs neither.
Every verdict is checked against its schema locally too (a server may ignore the
structured output); a call that fails or answers with an invalid verdict is tried again,
at most ``max_retries`` times (the SDK's own retries of connection errors and 429/5xx come
on top and count as one call).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from agent_eval.jsonutil import repeated_name
from agent_eval.judge.config import JudgeConfig
from agent_eval.judge.prompts import Prompt
from agent_eval.judge.store import MAX_TOKENS

INSTALL = "pip install 'agent-eval-ci[judge]'"
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
NO_KEY = "unused"  # what a local server that needs no key is sent
HIDDEN = "[the API key]"  # what the key is written as wherever an answer echoed it
# a shorter "key" is a local server's placeholder (vLLM's EMPTY, "ollama", "test"), not a
# secret: hidden, it would change every word of a verdict that holds it
MIN_HIDDEN = 8


class JudgeSetupError(Exception):
    """The judge cannot be used at all (no SDK, no key): nothing is called."""


class CallError(Exception):
    """One judgement could not be made (the message never holds the API key)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A verdict as the model gave it."""

    verdict: dict[str, Any]
    input_tokens: int | None
    output_tokens: int | None
    response_model: str | None


class Provider(Protocol):
    name: str

    def ask(self, prompt: Prompt) -> Answer: ...


def _key(config: JudgeConfig, provider: str) -> str:
    env = config.api_key_env or DEFAULT_KEY_ENV[provider]
    key = os.environ.get(env, "")
    if key:
        return key
    if config.base_url and not config.api_key_env:
        return NO_KEY  # a local server (Ollama, llama.cpp, vLLM) that needs no key
    raise JudgeSetupError(f"the judge needs an API key in the environment variable {env} "
                          f"(judge.api_key_env); it is not set")


def _hide(text: str, secret: str) -> str:
    """``text`` without the API key: an endpoint may echo it (a proxy's error page, a
    server's "Incorrect API key provided: sk-…", a verdict that repeats the request's
    headers), and what it says goes to the console, every output and the committed store.
    Applied before any text is cut, so that no part of the key is left either."""
    return text.replace(secret, HIDDEN) if len(secret) >= MIN_HIDDEN else text


def _validator(schema: dict[str, Any]) -> Any:
    import jsonschema  # type: ignore[import-untyped]

    return jsonschema.Draft202012Validator(schema)


def parse_verdict(text: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """The verdict in a model's answer, checked against ``schema``; :class:`CallError`
    saying what is wrong otherwise."""
    if text is not None and not isinstance(text, str):
        raise CallError(f"the answer's content is a {type(text).__name__}, not text")
    if not text:
        raise CallError("the model answered with no text")
    try:
        value = orjson.loads(text.strip())
    except orjson.JSONDecodeError:
        raise CallError(f"the answer is not JSON: {text[:200]!r}") from None
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        raise CallError(f"the verdict does not match its schema: {errors[0].message[:200]}")
    ambiguous = repeated_name(text)  # {"score": 1, "score": 5}: two verdicts, read as 5
    if ambiguous:
        raise CallError(f"the verdict is ambiguous: {ambiguous}")
    assert isinstance(value, dict)
    return value


class OpenAIProvider:
    name = "openai"

    def __init__(self, config: JudgeConfig) -> None:
        try:
            import openai
        except ImportError:
            raise JudgeSetupError(f"the openai judge needs the openai package: {INSTALL}"
                                  ) from None
        self.config = config
        self.openai = openai
        self.secret = _key(config, "openai")
        self.client = openai.OpenAI(api_key=self.secret,
                                    base_url=config.base_url or None,
                                    timeout=config.timeout_s, max_retries=config.max_retries,
                                    http_client=_http_client(openai, config))

    def ask(self, prompt: Prompt) -> Answer:
        c = self.config
        # OpenAI itself takes max_completion_tokens; compatible servers all know max_tokens
        limit = ({"max_tokens": c.max_tokens} if c.base_url
                 else {"max_completion_tokens": c.max_tokens})
        create: Any = self.client.chat.completions.create  # typed per overload: kept loose
        try:
            with _deadline(c.timeout_s):
                response = create(
                    model=c.model or "",
                    messages=[{"role": "system", "content": prompt.system},
                              {"role": "user", "content": prompt.user}],
                    temperature=0,
                    seed=c.seed,
                    response_format=(
                        {"type": "json_schema",
                         "json_schema": {"name": "verdict", "strict": True,
                                         "schema": prompt.schema}}
                        if c.response_format == "json_schema" else
                        {"type": "json_object", "schema": prompt.schema}),
                    **limit,
                )
        except self.openai.APIError as exc:
            raise CallError(_api_error(exc, self.secret)) from None
        except ValueError as exc:  # a 200 answer whose body is not JSON
            raise CallError(f"the answer is not JSON ({_short(exc, self.secret)})") from None
        with _answer_of_another_shape("a Chat Completions response", self.secret):
            if not response.choices:
                raise CallError("the response has no choices")
            if len(response.choices) > 1:  # one was asked for: which would be the verdict?
                raise CallError(f"the response has {len(response.choices)} choices, not the "
                                "one asked for")
            message = response.choices[0].message
            refusal = getattr(message, "refusal", None)
            if refusal:
                raise CallError(f"the model refused: {_hide(str(refusal), self.secret)[:200]}")
            usage = response.usage
            content = message.content
            return Answer(parse_verdict(_hide(content, self.secret)
                                        if isinstance(content, str) else content,
                                        prompt.schema),
                          _count(getattr(usage, "prompt_tokens", None)),
                          _count(getattr(usage, "completion_tokens", None)),
                          _text_or_none(response.model, self.secret))


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, config: JudgeConfig) -> None:
        try:
            import anthropic
        except ImportError:
            raise JudgeSetupError(f"the anthropic judge needs the anthropic package: "
                                  f"{INSTALL}") from None
        self.config = config
        self.anthropic = anthropic
        self.secret = _key(config, "anthropic")
        self.client = anthropic.Anthropic(api_key=self.secret,
                                          base_url=config.base_url or None,
                                          timeout=config.timeout_s,
                                          max_retries=config.max_retries,
                                          http_client=_http_client(anthropic, config))

    def ask(self, prompt: Prompt) -> Answer:
        c = self.config
        create: Any = self.client.messages.create
        try:
            with _deadline(c.timeout_s):
                response = create(
                    model=c.model or "",
                    max_tokens=c.max_tokens,
                    system=prompt.system,
                    messages=[{"role": "user", "content": prompt.user}],
                    output_config={"format": {"type": "json_schema", "schema": prompt.schema}},
                )
        except self.anthropic.APIError as exc:
            raise CallError(_api_error(exc, self.secret)) from None
        except ValueError as exc:  # a 200 answer whose body is not JSON
            raise CallError(f"the answer is not JSON ({_short(exc, self.secret)})") from None
        with _answer_of_another_shape("a Messages response", self.secret):
            text = _hide("".join(getattr(b, "text", "") for b in response.content
                                 if getattr(b, "type", None) == "text"), self.secret)
            if getattr(response, "stop_reason", None) == "refusal":
                raise CallError(f"the model refused: {text[:200]}")
            usage = response.usage
            return Answer(parse_verdict(text, prompt.schema),
                          _count(getattr(usage, "input_tokens", None)),
                          _count(getattr(usage, "output_tokens", None)),
                          _text_or_none(getattr(response, "model", None), self.secret))


@contextmanager
def _answer_of_another_shape(what: str, secret: str) -> Iterator[None]:
    """An answer the SDK took without checking it (the SDKs build their response objects
    unvalidated) whose parts are of another shape — a null message, a content list, a
    count as text — is a failed call (:class:`CallError`), not a crash of the run."""
    try:
        yield
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        raise CallError(f"the answer is not {what} ({_short(exc, secret)})") from None


def _short(exc: Exception, secret: str) -> str:
    return f"{type(exc).__name__}: {_hide(str(exc), secret)[:200]}"


def _count(value: Any) -> int | None:
    """A token count as the API gave it: a whole number (of at most 10^15: a larger one
    could be neither stored nor priced), or None (the cost unknown)."""
    return value if isinstance(value, int) and not isinstance(value, bool) \
        and 0 <= value <= MAX_TOKENS else None


def _text_or_none(value: Any, secret: str) -> str | None:
    return _hide(value, secret)[:200] if isinstance(value, str) and value else None


def _api_error(exc: Exception, secret: str) -> str:
    status = getattr(exc, "status_code", None)
    message = _hide(str(getattr(exc, "message", "") or exc), secret)[:300]
    cause = exc.__cause__  # why a connection error or a timeout was one (the deadline)
    why = "" if cause is None else _hide(str(cause), secret)
    if why and why not in message:
        message = f"{why[:300]} ({message})"  # first: the message may be cut
    return (f"HTTP {status}: " if status else "") + f"{type(exc).__name__}: {message}"


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """One judge call, every HTTP request of it (the SDK's retries too) within
    ``seconds`` (judge/http.py)."""
    from agent_eval.judge.http import deadline  # with the SDKs (httpx2)

    with deadline(seconds):
        yield


def _http_client(sdk: Any, config: JudgeConfig) -> Any:
    """The SDK's default HTTP client, each call held to ``timeout_s`` and each answer to
    MAX_ANSWER_BYTES (judge/http.py)."""
    from agent_eval.judge.http import bounded_client  # with the SDKs (httpx2)

    try:
        return bounded_client(sdk.DefaultHttpxClient, config.timeout_s)
    except RuntimeError as exc:
        raise JudgeSetupError(str(exc)) from None


def make_provider(config: JudgeConfig) -> Provider:
    """The configured provider (:class:`JudgeSetupError` when it cannot be used)."""
    if config.provider == "anthropic":
        return AnthropicProvider(config)
    if config.provider == "openai":
        return OpenAIProvider(config)
    raise JudgeSetupError("judge.provider is not set (openai or anthropic)")
