"""Every reader's sniff, apart from the readers: ``format: auto`` asks the sniffs of this
module and imports only the module of the reader it picks (start-up time: a reader's
module is much larger than its sniff).

A sniff says whether a file's head (its first 8 KiB) is of its reader's format. Each
costly pattern is looked for only after a token it cannot match without: ``"X"`` in the
head only when X is among the head's tokens (``readers/_head.py``: one pass of RE2's set
matcher over the head finds every token asked, where each literal was a search of the
whole head; a token asked is declared with ``asked``), or else a literal text; most heads
hold none of them (tests/readers/test_detection.py checks that no answer changes and that
every token asked is declared).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import orjson

from agent_eval.jsonutil import loads as _loads
from agent_eval.lazyre import LazyPattern
from agent_eval.readers._foreign import BOM, all_of, head_text, is_native
from agent_eval.readers._head import asked, head_tokens
from agent_eval.readers.base import SourceFile

Sniff = Callable[[bytes, SourceFile], bool]


class Marks:
    """The sniff of a skeleton reader (``readers/skeleton.py``): ``patterns`` must all be
    found in the head, which is not a native file's. Asked first: ``tokens``, for each
    pattern that cannot match without one of some quoted tokens, those tokens (the head's
    tokens must hold one of each); ``needs``, ASCII texts a pattern cannot match without
    (in the head's bytes: the same answer as in its text)."""

    __slots__ = ("needs", "patterns", "tokens")

    def __init__(self, patterns: tuple[re.Pattern[str] | LazyPattern[str], ...],
                 tokens: tuple[tuple[bytes, ...], ...] = (),
                 needs: tuple[bytes, ...] = ()) -> None:
        self.patterns = patterns
        self.tokens = tuple(asked(*t) for t in tokens)
        self.needs = needs

    def __call__(self, head: bytes, source: SourceFile) -> bool:
        held = head_tokens(head)
        if any(held.isdisjoint(t) for t in self.tokens) or not all(
                t in head for t in self.needs):
            return False
        return all_of(head_text(head), *self.patterns) and not is_native(head, source)


def _text(head: bytes, source: SourceFile) -> str | None:
    """The head's text, or None for a native file's head (never another format's)."""
    return None if is_native(head, source) else head_text(head)


# ------------------------------------------------------------------------ Inspect
_INSPECT_LOG = LazyPattern(r'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_INSPECT_EVAL = LazyPattern(r'"eval"\s*:\s*\{')
_INSPECT_TASK = LazyPattern(r'"task"\s*:|"run_id"\s*:|"eval_id"\s*:')
asked(b"version", b"status", b"samples", b"eval")


def inspect(head: bytes, source: SourceFile) -> bool:
    if head.startswith(b"PK\x03\x04"):
        return source.path.endswith(".eval") or b"_journal/start.json" in head or (
            b"header.json" in head)
    tokens = head_tokens(head)
    log = b"version" in tokens and b"status" in tokens
    if not log and not (b"samples" in tokens and b"eval" in tokens):
        return False
    text = _text(head, source)
    return text is not None and bool((log and _INSPECT_LOG.search(text)) or (
        b"samples" in tokens and _INSPECT_EVAL.search(text) and _INSPECT_TASK.search(text)))


# ---------------------------------------------------------------------- LangSmith
LANGSMITH = Marks((
    LazyPattern(r'"run_type"\s*:\s*"(?:llm|chain|tool|retriever|prompt|parser|embedding)"'),
    LazyPattern(r'"(?:dotted_order|trace_id|child_runs|parent_run_id|start_time)"\s*:')),
    ((b"run_type",),
     (b"dotted_order", b"trace_id", b"child_runs", b"parent_run_id", b"start_time")))

# ---------------------------------------------------------------------- LangChain
_LC = LazyPattern(r'"lc"\s*:\s*1\b')
_LC_CONSTRUCTOR = LazyPattern(r'"type"\s*:\s*"constructor"')
_LC_DICT = LazyPattern(r'"type"\s*:\s*"(?:ai|human)"')
_LC_DICT_TYPES = asked(b"ai", b"human")
asked(b"lc", b"constructor")
_LC_SHAPE = LazyPattern(r'"data"\s*:\s*\{|"tool_calls"\s*:|"example"\s*:|"additional_kwargs"\s*:')


def langchain(head: bytes, source: SourceFile) -> bool:
    tokens = head_tokens(head)
    serialized = b"lc" in tokens and b"constructor" in tokens
    if not serialized and tokens.isdisjoint(_LC_DICT_TYPES):
        return False
    text = _text(head, source)
    if text is None:
        return False
    if serialized and _LC.search(text) and _LC_CONSTRUCTOR.search(text) and (
            "langchain" in text):
        return True
    return not tokens.isdisjoint(_LC_DICT_TYPES) and bool(
        _LC_DICT.search(text) and _LC_SHAPE.search(text))


# -------------------------------------------------------------------------- Codex
_CODEX = LazyPattern(
    rb'"type"\s*:\s*"(?:session_meta|turn_context|response_item|event_msg|compacted)"')
_CODEX_PAYLOAD = LazyPattern(rb'"payload"\s*:')
asked(b"payload", b"id", b"timestamp", b"instructions", b"git")


def codex(head: bytes, source: SourceFile) -> bool:
    if is_native(head, source):
        return False
    tokens = head_tokens(head)
    if b"payload" in tokens and _CODEX.search(head) is not None and (
            _CODEX_PAYLOAD.search(head) is not None):
        return True
    # an older rollout: a {"id", "timestamp", "instructions"} header, then bare items
    first, nl, _ = head.removeprefix(BOM).partition(b"\n")
    if not nl:
        return False
    if b"\\" not in first and not (b"id" in tokens and b"timestamp" in tokens and (
            b"instructions" in tokens or b"git" in tokens)):
        return False  # without an escape, the header's keys are tokens of the head
    try:
        header = _loads(first)
    except orjson.JSONDecodeError:
        return False
    return type(header) is dict and "type" not in header and "id" in header and \
        "timestamp" in header and ("instructions" in header or "git" in header)


# -------------------------------------------------------------- OpenAI Agents SDK
_AGENTS_STATE = LazyPattern(rb'"\$schemaVersion"\s*:')
_AGENTS_STATE_KEYS = LazyPattern(rb'"(?:generated_items|model_responses|current_agent|'
                                rb'original_input)"\s*:')
_AGENTS_SPANS = LazyPattern(rb'"object"\s*:\s*"trace(?:\.span)?"')
_AGENTS_SPAN_DATA = LazyPattern(rb'"span_data"\s*:')
asked(b"$schemaVersion", b"span_data")


def openai_agents(head: bytes, source: SourceFile) -> bool:
    if is_native(head, source):
        return False
    tokens = head_tokens(head)
    if b"$schemaVersion" in tokens and _AGENTS_STATE.search(head) and (
            _AGENTS_STATE_KEYS.search(head)):
        return True
    return b"span_data" in tokens and _AGENTS_SPANS.search(head) is not None and \
        _AGENTS_SPAN_DATA.search(head) is not None


# ----------------------------------------------------------------- OTLP and Jaeger
_OTLP = LazyPattern(
    rb'"(?:resourceSpans|resource_spans|scopeSpans|instrumentationLibrarySpans)"\s*:')
_OTLP_KEYS = asked(b"resourceSpans", b"resource_spans", b"scopeSpans",
                   b"instrumentationLibrarySpans")
_OTLP_FLAT_KEYS = asked(b"gen_ai.operation.name", b"gen_ai.system", b"gen_ai.provider.name",
                        b"gen_ai.request.model", b"gen_ai.tool.name",
                        b"openinference.span.kind", b"llm.model_name")
_OTLP_FLAT = LazyPattern(
    rb'"(?:gen_ai\.operation\.name|gen_ai\.system|gen_ai\.provider\.name|'
    rb'gen_ai\.request\.model|gen_ai\.tool\.name|openinference\.span\.kind|'
    rb'llm\.model_name)"\s*:')
JAEGER = (LazyPattern(rb'"traceID"\s*:'), LazyPattern(rb'"spans"\s*:'),
          LazyPattern(rb'"(?:operationName|tags)"\s*:'))
asked(b"traceID")


def jaeger(head: bytes) -> bool:
    """The head holds a Jaeger export's marks."""
    return b"traceID" in head_tokens(head) and all(p.search(head) for p in JAEGER)


def otlp(head: bytes, source: SourceFile) -> bool:
    tokens = head_tokens(head)
    if not tokens.isdisjoint(_OTLP_KEYS) and _OTLP.search(head):
        return True
    if jaeger(head):
        return True
    # a single span's flat attribute map: {"gen_ai.operation.name": ..., ...}
    return (not tokens.isdisjoint(_OTLP_FLAT_KEYS)
            and head.removeprefix(BOM).lstrip()[:1] == b"{"
            and _OTLP_FLAT.search(head) is not None and not is_native(head, source))


# ------------------------------------------------------------------------- OpenAI
_OPENAI_FOREIGN = LazyPattern(
    rb'"(?:tool_use|tool_result|tool_use_id|input_schema|stop_reason)"'
    rb'|"(?:jsonrpc|run_type|sessionId|lc_serializable|span_data|generated_items)"\s*:'
    rb'|"\$schemaVersion"|"schema_version"\s*:\s*"ATIF|"kind"\s*:\s*"\w+Event"'
    rb'|"type"\s*:\s*"(?:gemini|session_meta|response_item|turn_context|event_msg)"'
    rb'|"(?:post|patch)"\s*:\s*\[|"eval"\s*:\s*\{|"resourceSpans"'
    rb'|"lc"\s*:\s*1\b|"type"\s*:\s*"constructor"')
_CHAT_STRONG = LazyPattern(rb'"object"\s*:\s*"chat\.completion')
_CHAT_MARKERS = LazyPattern(
    rb'"tool_calls"\s*:|"tool_call_id"\s*:|"function_call"\s*:\s*\{'
    rb'|"role"\s*:\s*"(?:tool|system|developer|function)"')
_CHAT_LIST = LazyPattern(rb'"messages"\s*:\s*\[')
# at the start of the head; never two quantifiers over the same spaces (\s*\[?\s* took
# time quadratic in a head of spaces)
_CHAT_FIRST_ROLE = LazyPattern(rb'\s*(?:\[\s*)?\{\s*"role"\s*:')
_RESP_STRONG = LazyPattern(rb'"object"\s*:\s*"response"')
_RESP_TYPES = LazyPattern(  # every name ends in _call, _output or _text
    rb'"type"\s*:\s*"(?:function_call|function_call_output|custom_tool_call|'
    rb'custom_tool_call_output|input_text|output_text|computer_call|mcp_call|'
    rb'web_search_call|file_search_call)"')
_RESP_TYPE_NAMES = asked(b"function_call", b"function_call_output", b"custom_tool_call",
                         b"custom_tool_call_output", b"input_text", b"output_text",
                         b"computer_call", b"mcp_call", b"web_search_call", b"file_search_call")
asked(b"object", b"messages", b"response", b"previous_response_id")
_RESP_PREVIOUS = LazyPattern(rb'"previous_response_id"\s*:')
_VCR = LazyPattern(rb"^interactions:", re.M)
VCR_CHAT = LazyPattern(rb"uri:\s*\S*/chat/completions")
VCR_RESPONSES = LazyPattern(rb"uri:\s*\S*/responses\b")


_last_vcr: tuple[bytes, bool] = (b"", False)


def is_vcr(head: bytes) -> bool:
    """The head is a VCR cassette's (the literal first: a search for ^ with re.M tries
    every position of the head). The answer for the last head is kept: both OpenAI
    sniffs ask it."""
    global _last_vcr
    last, answer = _last_vcr
    if head is not last:
        answer = b"interactions:" in head and _VCR.search(head) is not None
        _last_vcr = (head, answer)
    return answer


def _openai(head: bytes, source: SourceFile, vcr: LazyPattern[bytes],
            body: Callable[[bytes], bool]) -> bool:
    if is_vcr(head):
        return vcr.search(head) is not None
    # the body's marks before _OPENAI_FOREIGN's many alternatives: most heads fail them
    return body(head) and not (_OPENAI_FOREIGN.search(head) is not None
                               or is_native(head, source))


def _chat_body(head: bytes) -> bool:
    tokens = head_tokens(head)
    return (b"object" in tokens and b'"chat.completion' in head
            and _CHAT_STRONG.search(head) is not None) or (
        ((b"messages" in tokens and _CHAT_LIST.search(head) is not None)
         or _CHAT_FIRST_ROLE.match(head) is not None)
        and _CHAT_MARKERS.search(head) is not None)


def _responses_body(head: bytes) -> bool:
    tokens = head_tokens(head)
    return (b"response" in tokens and b"object" in tokens
            and _RESP_STRONG.search(head) is not None) or (
        not tokens.isdisjoint(_RESP_TYPE_NAMES) and _RESP_TYPES.search(head) is not None) or (
        b"previous_response_id" in tokens and _RESP_PREVIOUS.search(head) is not None)


def openai_responses(head: bytes, source: SourceFile) -> bool:
    return _openai(head, source, VCR_RESPONSES, _responses_body)


def openai_chat(head: bytes, source: SourceFile) -> bool:
    return _openai(head, source, VCR_CHAT, _chat_body)


# ------------------------------------------------------------ the skeleton readers
# a line's spaces, never the next line's: ^\s* tried every line start over all the
# newlines after it (time quadratic in a head of empty lines), for the same answers
ANTHROPIC_AGENTS = Marks((LazyPattern(r'^[^\S\n]*\[\s*"client\.beta\.sessions\.', re.M),),
                         needs=(b'"client.beta.sessions.',))
CLAUDE_CODE = Marks((
    LazyPattern(r'"type"\s*:\s*"(?:user|assistant|system|result|summary)"'),
    LazyPattern(r'"(?:sessionId|session_id|parentUuid|uuid|isSidechain|loglines|leafUuid)"'
               r"\s*:"),
    LazyPattern(r'"message"\s*:\s*\{|"leafUuid"\s*:|"subtype"\s*:\s*"init"')),
    ((b"user", b"assistant", b"system", b"result", b"summary"),
     (b"sessionId", b"session_id", b"parentUuid", b"uuid", b"isSidechain", b"loglines",
      b"leafUuid"),
     (b"message", b"leafUuid", b"subtype")))
ATIF = Marks((LazyPattern(r'"schema_version"\s*:\s*"ATIF-'),), ((b"schema_version",),))
GEMINI_CLI = Marks((LazyPattern(r'"projectHash"\s*:'), LazyPattern(r'"messages"\s*:\s*\[')),
                   ((b"projectHash",), (b"messages",)))
OPENHANDS = Marks((LazyPattern(r'"kind"\s*:\s*"(?:MessageEvent|ActionEvent|ObservationEvent)"'),),
                  ((b"MessageEvent", b"ActionEvent", b"ObservationEvent"),))
VERCEL_AI = Marks((LazyPattern(r'"spanContext"\s*:'),
                   LazyPattern(r'"ai\.(?:operationId|model\.id|toolCall\.name)"\s*:')),
                  ((b"spanContext",), (b"ai.operationId", b"ai.model.id", b"ai.toolCall.name")))

# ---------------------------------------------------------------------------- MCP
_JSONRPC = LazyPattern(r'"jsonrpc"\s*:\s*"2\.0"')
_JSON_SCHEMA = LazyPattern(r'"\$schema"\s*:')
asked(b"jsonrpc")


def mcp(head: bytes, source: SourceFile) -> bool:
    text = None if b"jsonrpc" not in head_tokens(head) else _text(head, source)
    rpc = None if text is None else _JSONRPC.search(text)
    if text is None or rpc is None:
        return False
    # a JSON Schema that shows a message is not a log; a log whose tools/list
    # answer carries input schemas is (the message comes first)
    return _JSON_SCHEMA.search(text, 0, rpc.start()) is None


# ---------------------------------------------------------------------- Anthropic
_TOOL_USE = LazyPattern(r'"type"\s*:\s*"(?:tool_use|server_tool_use|mcp_tool_use)"')
_TOOL_RESULT = LazyPattern(r'"tool_use_id"\s*:\s*"')
_MESSAGE = LazyPattern(r'"type"\s*:\s*"message"')
_ASSISTANT = LazyPattern(r'"role"\s*:\s*"assistant"')
_STOP = LazyPattern(r'"stop_reason"\s*:')
_MESSAGES = LazyPattern(r'"messages"\s*:\s*\[')
_MAX_TOKENS = LazyPattern(r'"max_tokens"\s*:')
_CLAUDE = LazyPattern(r'"claude-|"input_schema"\s*:|"anthropic_version"\s*:')
_CASSETTE = LazyPattern(r"^interactions:", re.M)
_CASSETTE_ANTHROPIC = LazyPattern(
    r"api\.anthropic\.com|anthropic-version|\"input_schema\"|\"tool_use\"|\"claude-")
YAML = (".yaml", ".yml")


def _anthropic_json(text: str) -> bool:
    if _TOOL_USE.search(text) or _TOOL_RESULT.search(text):
        return True
    if _MESSAGE.search(text) and _ASSISTANT.search(text) and _STOP.search(text):
        return True
    return bool(_MESSAGES.search(text) and _MAX_TOKENS.search(text) and _CLAUDE.search(text))


def anthropic(head: bytes, source: SourceFile) -> bool:
    text = head_text(head)
    if source.path.lower().endswith(YAML):
        return bool(_CASSETTE.search(text) and _CASSETTE_ANTHROPIC.search(text))
    if is_native(head, source):
        return False
    return _anthropic_json(text)


# -------------------------------------------------------------------------- Assay
ASSAY_EVENTS = ("episode_start", "step", "tool_call", "episode_end")
_EPISODE = LazyPattern(r'"type"\s*:\s*"(?:episode_start|step|tool_call|episode_end)"')
_EPISODE_ID = LazyPattern(r'"episode_id"\s*:')
_V1 = LazyPattern(r'"type"\s*:\s*"assay\.trace"')
_V1_UNTYPED = (LazyPattern(r'"request_id"\s*:'), LazyPattern(r'"prompt"\s*:'),
               LazyPattern(r'"response"\s*:'))
_LEGACY_TOOL = (LazyPattern(r'"tool"\s*:\s*"'), LazyPattern(r'"args"\s*:'))
_LEGACY_CALLS = (LazyPattern(r'"tool_calls"\s*:\s*\['), LazyPattern(r'"tool_name"\s*:'),
                 LazyPattern(r'"(?:prompt|response)"\s*:'))


def _episode_line(text: str) -> bool:
    """Whether a line of the head is an episode event: ``episode_id`` beside its ``type``
    (a native tool call whose arguments hold an ``episode_id`` is not). A head of one
    line, cut off, is judged by its marks alone."""
    lines = text.split("\n")
    cut = False
    for line in lines:
        if not line.lstrip().startswith("{"):
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            cut = True
            continue
        if isinstance(value, dict) and value.get("type") in ASSAY_EVENTS and (
                "episode_id" in value):
            return True
    return cut and len(lines) == 1


def assay(head: bytes, source: SourceFile) -> bool:
    """Assay's own marks; not excluded by the native sniff: its V2 events share
    native's ``tool_call`` type name, but carry ``episode_id``."""
    text = head_text(head)
    if _EPISODE.search(text) and _EPISODE_ID.search(text) and _episode_line(text):
        return True
    if _V1.search(text):
        return True
    if is_native(head, source):
        return False
    return any(all(p.search(text) for p in marks)
               for marks in (_V1_UNTYPED, _LEGACY_TOOL, _LEGACY_CALLS))


# Every reader's sniff by the reader's name (the registry, readers/__init__.py, gives the
# order they are asked in).
SNIFFS: dict[str, Sniff] = {
    "inspect": inspect,
    "langsmith": LANGSMITH,
    "langchain": langchain,
    "codex": codex,
    "openai_agents": openai_agents,
    "otlp": otlp,
    "openai_responses": openai_responses,
    "openai_chat": openai_chat,
    "anthropic_agents": ANTHROPIC_AGENTS,
    "claude_code": CLAUDE_CODE,
    "mcp": mcp,
    "anthropic": anthropic,
    "atif": ATIF,
    "gemini_cli": GEMINI_CLI,
    "openhands": OPENHANDS,
    "vercel_ai": VERCEL_AI,
    "assay": assay,
    "native": is_native,
}
