"""Typed models of ``servers:``, ``probes:`` and ``tool_lock:`` (docs/mcp.md).

They validate structure (unknown keys are errors, with a "did you mean") and generate
the suite's JSON Schema. Nothing here imports the MCP SDK: a suite is loaded, validated
and its schema generated without it.
"""

from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from agent_eval.config.models import JSON_SCHEMA_REF, FileName, Strict, no_items

PROBE_KINDS = ("tool", "list", "resource", "resource_template", "prompt", "capabilities")
LISTABLE = ("tools", "resources", "resource_templates", "prompts")
MAX_REPEATS = 1000
# the longest wait a suite may set (10 minutes, as a judge call's timeout_s): `.inf` or
# 1e300 was a run that waited for a silent server without end
MAX_TIMEOUT_MS = 600_000
DEFAULT_STARTUP_MS = 30_000
DEFAULT_CALL_MS = 10_000
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class TextExpect(Strict):
    """Checks of a text (a tool result, a resource's content, an error message). Every
    configured key must hold."""

    equals: Any = Field(
        None, description="A string: the text equals it (both stripped). Any other JSON "
        "value: the structured content (or the text parsed as JSON) equals it.")
    contains: str | list[str] | None = Field(
        None, description="Every term appears in the text (case-insensitive).")
    not_contains: str | list[str] | None = Field(
        None, description="No term appears in the text (case-insensitive).")
    regex: str | None = Field(None, description="A regular expression (Python `re`) that "
                              "must be found in the text (re.search).")
    json_schema: FileName | dict[str, Any] | None = Field(
        None, description="The structured content (or the text parsed as JSON) validates "
        "against this JSON Schema: a file relative to the suite file, or inline.",
        json_schema_extra={"anyOf": [{"type": "string"}, JSON_SCHEMA_REF]})

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("give at least one of equals, contains, not_contains, regex, "
                             "json_schema")
        return self


class EnvHeader(Strict):
    """An HTTP header whose value comes from an environment variable."""

    env: str = Field(description="The environment variable holding the value.",
                     pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    prefix: str = Field("", description="Text put before the value, e.g. 'Bearer '.")


class SamplingResponse(Strict):
    """What agent-eval answers when the server asks the client to sample
    (``sampling/createMessage``): a fixed message, so runs are deterministic."""

    text: str = Field(description="The assistant message's text.")
    model: str = Field("agent-eval", description="The model name reported to the server.")
    stop_reason: str = Field("endTurn", description="The stop reason reported.")


class Bound(Strict):
    min: float | None = None
    max: float | None = None


class SamplingExpect(Strict):
    """Checks of the sampling requests the server sent during the probe."""

    requests: int | Bound | None = Field(
        None, description="How many sampling requests (a number, or {min, max}); default: "
        "at least one.")
    messages: TextExpect | None = Field(
        None, description="Checks of the requests' message text (all messages joined).")
    system_prompt: TextExpect | None = Field(None, description="Checks of the system prompt.")
    max_tokens: Bound | None = Field(None, description="Bounds of the requested maxTokens.")


class ProbeSampling(Strict):
    respond: SamplingResponse | None = Field(
        None, description="The answer to give (default: the server's `sampling`).")
    expect: SamplingExpect | None = Field(
        None, description="Checks of the requests (default: at least one request).")


class Server(Strict):
    """One MCP server: a command started over stdio, or a Streamable HTTP URL."""

    command: str | None = Field(None, description="The program to start (stdio); looked up "
                                "on PATH, then next to the running Python.")
    args: list[str] = Field(default_factory=no_items, description="Its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra environment variables (the server gets "
        "only HOME, LOGNAME, PATH, SHELL, TERM, USER and these). A value `${NAME}` is "
        "taken from agent-eval's environment.")
    cwd: FileName | None = Field(None, description="Its working folder, relative to the suite "
                            "file (default: the suite file's folder).")
    url: str | None = Field(None, description="A Streamable HTTP endpoint (http or https).",
                            pattern=r"^https?://")
    headers: dict[str, EnvHeader] = Field(
        default_factory=dict, description="HTTP headers, each from an environment variable "
        "(never a literal value in the file).")
    startup_timeout_ms: float = Field(DEFAULT_STARTUP_MS, gt=0, le=MAX_TIMEOUT_MS,
                                      description="Time allowed to start and answer "
                                      "initialize.")
    call_timeout_ms: float = Field(DEFAULT_CALL_MS, gt=0, le=MAX_TIMEOUT_MS,
                                   description="Time allowed for each request (a probe's "
                                   "timeout_ms overrides it).")
    sampling: SamplingResponse | None = Field(
        None, description="Answer sampling requests with this (agent-eval then announces "
        "the sampling capability); without it sampling requests are refused.")
    pin: bool = Field(True, description="Compare this server's tools with the lock file "
                      "(tool_lock).")
    severity: Literal["error", "warning", "note"] = Field(
        "error", description="Severity of this server's tool findings (lock, shadowing, "
        "instructions in descriptions).")

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("a server needs exactly one of 'command' (stdio) or 'url' "
                             "(Streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' go with 'command', not 'url'")
        if self.command is not None and self.headers:
            raise ValueError("'headers' go with 'url', not 'command'")
        return self


class Capabilities(Strict):
    """What the server announces at initialise: true (announced), false (not announced),
    or a mapping of sub-keys that must have these values (e.g. {listChanged: true})."""

    tools: bool | dict[str, Any] | None = None
    resources: bool | dict[str, Any] | None = None
    prompts: bool | dict[str, Any] | None = None
    logging: bool | dict[str, Any] | None = None
    completions: bool | dict[str, Any] | None = None
    tasks: bool | dict[str, Any] | None = None
    experimental: bool | dict[str, Any] | None = None
    sampling: bool | None = Field(
        None, description="Sampling is the client's capability: true checks that agent-eval "
        "announced it to this server (the server has a `sampling` answer), false that it "
        "did not.")


class PromptArguments(Strict):
    required: list[str] | None = Field(None, description="Exactly these arguments are "
                                       "declared required.")
    optional: list[str] | None = Field(None, description="Exactly these arguments are "
                                       "declared optional.")


class MessagesExpect(Strict):
    count: int | Bound | None = Field(None, description="Number of messages.")
    roles: list[Literal["user", "assistant"]] | None = Field(
        None, description="The roles of the messages, in order.")
    text: TextExpect | None = Field(None, description="Checks of all messages' text, joined "
                                    "by newlines.")
    content_types: list[str] | None = Field(
        None, description="The content type of each message in order (text, image, audio, "
        "resource, resource_link).")


class Probe(Strict):
    """One live check of a server. Exactly one of tool, list, resource,
    resource_template, prompt, capabilities says what it does."""

    id: str = Field(description="Stable id (used in reports and fingerprints).")
    description: str | None = None
    server: str | None = Field(None, description="The server (a key of `servers`); "
                               "optional when there is one.")
    severity: Literal["error", "warning", "note"] = "error"
    # -- what
    tool: str | None = Field(None, description="Call this tool.")
    list_: Literal["tools", "resources", "resource_templates", "prompts"] | None = Field(
        None, alias="list", description="List these.")
    resource: str | None = Field(None, description="Read this resource URI.")
    resource_template: str | None = Field(
        None, description="A URI template (RFC 6570 level 1, {name}) that the server lists; "
        "`parameters` fill it and the resulting URI is read.")
    prompt: str | None = Field(None, description="Get this prompt.")
    capabilities: Capabilities | None = Field(None, description="Check what the server "
                                              "announces at initialise.")
    # -- inputs
    arguments: dict[str, Any] | None = Field(None, description="Tool or prompt arguments.")
    parameters: dict[str, str] | None = Field(None, description="resource_template values.")
    # -- checks
    expect_result: TextExpect | None = Field(None, description="Checks of the tool's result "
                                             "(text content, or structured content).")
    expect_error: bool | TextExpect | None = Field(
        None, description="The call must fail (isError or a JSON-RPC error); with checks, "
        "its error message must match them.")
    max_latency_ms: float | None = Field(None, ge=0, description="Each call answers within "
                                         "this time.")
    timeout_ms: float | None = Field(None, gt=0, le=MAX_TIMEOUT_MS, description="Give up on "
                                     "a call after this long (default: the server's "
                                     "call_timeout_ms).")
    repeats: int = Field(1, ge=1, le=MAX_REPEATS, description="Run the call this many times.")
    min_pass_ratio: float = Field(1.0, ge=0, le=1, description="Share of the repeats that "
                                  "must pass (a fraction).")
    sampling: ProbeSampling | None = Field(None, description="Sampling during a tool call: "
                                           "the answer and checks of the requests.")
    min_count: int | None = Field(None, ge=0, description="list: at least this many.")
    max_count: int | None = Field(None, ge=0, description="list: at most this many.")
    expect: list[str] | None = Field(None, description="list: these names (tools, prompts, "
                                     "templates) or URIs (resources) are listed.")
    expect_mime_type: str | None = Field(None, description="resource: the MIME type of every "
                                         "content item.")
    expect_content: TextExpect | None = Field(None, description="resource: checks of the "
                                              "text (all content items joined).")
    expect_arguments: PromptArguments | None = Field(
        None, description="prompt: the arguments the prompt declares in prompts/list.")
    reject_missing_required: bool = Field(
        False, description="prompt: for each required argument, a get without it must be "
        "rejected.")
    expect_messages: MessagesExpect | None = Field(None, description="prompt: checks of the "
                                                   "messages.")
    protocol_version: str | list[str] | None = Field(
        None, description="capabilities: the negotiated protocol version (any of a list).")

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @property
    def kind(self) -> str:
        return next(k for k in PROBE_KINDS if getattr(self, _FIELD.get(k, k)) is not None)

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        given = [k for k in PROBE_KINDS if getattr(self, _FIELD.get(k, k)) is not None]
        if len(given) != 1:
            raise ValueError(f"a probe needs exactly one of {', '.join(PROBE_KINDS)}"
                             + (f" (got {', '.join(given)})" if given else ""))
        kind = given[0]
        for key in self.model_fields_set:
            owners = _OWNERS.get(key)
            if owners is not None and kind not in owners:
                raise ValueError(f"'{key}' goes with {' or '.join(owners)}, not {kind}")
        if self.expect_error is not None and self.expect_result is not None:
            raise ValueError("give expect_result or expect_error, not both")
        if self.expect_error is False:
            raise ValueError("expect_error: false is the default; leave it out")
        return self


_FIELD = {"list": "list_"}
_CALLS = ("tool", "resource", "resource_template", "prompt")
_OWNERS: dict[str, tuple[str, ...]] = {
    "arguments": ("tool", "prompt"),
    "parameters": ("resource_template",),
    "expect_result": ("tool",),
    "expect_error": _CALLS,
    "max_latency_ms": _CALLS,
    "timeout_ms": (*_CALLS, "list"),
    "repeats": _CALLS,
    "min_pass_ratio": _CALLS,
    "sampling": ("tool",),
    "min_count": ("list",),
    "max_count": ("list",),
    "expect": ("list",),
    "expect_mime_type": ("resource", "resource_template"),
    "expect_content": ("resource", "resource_template"),
    "expect_arguments": ("prompt",),
    "reject_missing_required": ("prompt",),
    "expect_messages": ("prompt",),
    "protocol_version": ("capabilities",),
}
NAME_PATTERN = _NAME
