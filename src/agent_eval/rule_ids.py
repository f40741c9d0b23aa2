"""Every rule id, declared once: what findings and input errors are built from.

A rule id (``args_valid/maximum``) is a public, stable contract: results files, baselines,
SARIF rule ids and the ``explain`` pages all key on it. Each rule is declared here once, with
its kebab-case name, its default level and its page under ``rules/docs/``; code refers to the
constant (``ARGS_VALID_MAXIMUM``), never to a string, so a misspelt id fails at import, and
``tests/test_rule_ids.py`` checks that every declaration has a page that agrees with it and
that no rule-id string is written anywhere else in ``src``.

Ids made from a keyword table (a policy keyword, a sequence rule type, a judge or criterion
kind) are looked up with :func:`rule` or :func:`member` where the table is built, so an
undeclared one fails when the suite is compiled, not when a finding is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_eval.errors import InputError

__all__ = ["ARGS_VALID_ADDITIONAL_ARGUMENTS", "ARGS_VALID_ADDITIONAL_PROPERTIES",
    "ARGS_VALID_ANY_OF", "ARGS_VALID_CONST", "ARGS_VALID_CONTAINS",
    "ARGS_VALID_DEPENDENT_REQUIRED", "ARGS_VALID_ENUM", "ARGS_VALID_EXCLUSIVE_MAXIMUM",
    "ARGS_VALID_EXCLUSIVE_MINIMUM", "ARGS_VALID_FALSE_SCHEMA", "ARGS_VALID_FORMAT",
    "ARGS_VALID_MAXIMUM", "ARGS_VALID_MAX_ITEMS", "ARGS_VALID_MAX_LENGTH",
    "ARGS_VALID_MAX_PROPERTIES", "ARGS_VALID_MINIMUM", "ARGS_VALID_MIN_ITEMS",
    "ARGS_VALID_MIN_LENGTH", "ARGS_VALID_MIN_PROPERTIES", "ARGS_VALID_MULTIPLE_OF",
    "ARGS_VALID_NOT", "ARGS_VALID_NOT_AN_OBJECT", "ARGS_VALID_NOT_RECORDED", "ARGS_VALID_ONE_OF",
    "ARGS_VALID_PATTERN", "ARGS_VALID_PROPERTY_NAMES", "ARGS_VALID_REQUIRED", "ARGS_VALID_TYPE",
    "ARGS_VALID_UNCONSTRAINED_TOOL", "ARGS_VALID_UNIQUE_ITEMS", "ARGS_VALID_UNKNOWN_TOOL",
    "COVERAGE_UNEXERCISED", "CRITERIA_BLOCKING", "CRITERIA_BY_CATEGORY", "CRITERIA_COMPOSITE",
    "CRITERIA_REGRESSION", "CRITERIA_REQUIRED", "CRITERIA_WARNING", "IMPORT_UNSUPPORTED",
    "INPUT_EVENT_AFTER_END", "INPUT_INVALID_EVENT", "INPUT_LIMIT_EXCEEDED", "INPUT_LOCK_INVALID",
    "INPUT_LOCK_MISSING", "INPUT_NO_TRACES", "INPUT_OUTSIDE_ROOT", "INPUT_PARSE_ERROR",
    "INPUT_READER_ERROR", "INPUT_SERVER_START", "INPUT_UNKNOWN_FORMAT", "INPUT_UNMATCHED_RESULT",
    "INPUT_UNREADABLE_FILE", "JUDGE_ERROR", "JUDGE_HALLUCINATION", "JUDGE_MISSING",
    "JUDGE_NOT_RECORDED", "JUDGE_NO_BASELINE", "JUDGE_PAIRWISE", "JUDGE_QUALITY", "JUDGE_RECORDED",
    "JUDGE_RUBRIC", "JUDGE_SAFETY", "JUDGE_SKIPPED", "JUDGE_STORE", "MCP_HIDDEN_CHARACTERS",
    "MCP_INJECTED_INSTRUCTIONS", "MCP_TOOL_ADDED", "MCP_TOOL_CHANGED", "MCP_TOOL_REMOVED",
    "MCP_TOOL_SHADOWING", "PROBE_ARGUMENTS", "PROBE_CALL_FAILED", "PROBE_CAPABILITY",
    "PROBE_ERROR", "PROBE_LATENCY", "PROBE_LISTING", "PROBE_MESSAGES", "PROBE_MIME_TYPE",
    "PROBE_RESULT", "PROBE_SAMPLING", "PROBE_TIMEOUT", "SCENARIO_ARGS", "SCENARIO_BEHAVIOR",
    "SCENARIO_FORBIDDEN_TOOLS", "SCENARIO_HANDOFF", "SCENARIO_MISSING_TRACE", "SCENARIO_MUST_NOT",
    "SCENARIO_NOT_RECORDED", "SCENARIO_NO_BASELINE", "SCENARIO_OUTPUT", "SCENARIO_SEQUENCE",
    "SCENARIO_STATE", "SCENARIO_THRESHOLD", "SCENARIO_TOOL_HEALTH", "SCENARIO_TOOL_RECALL",
    "SCENARIO_UNKNOWN_ID", "SCENARIO_WARN_THRESHOLD", "SEQUENCE_VALID_AFTER",
    "SEQUENCE_VALID_ALLOWLIST",
    "SEQUENCE_VALID_BEFORE", "SEQUENCE_VALID_BLOCKLIST", "SEQUENCE_VALID_COUNT",
    "SEQUENCE_VALID_EVENTUALLY", "SEQUENCE_VALID_IMMEDIATELY_BEFORE", "SEQUENCE_VALID_NEVER_AFTER",
    "SEQUENCE_VALID_NOT_AN_OBJECT", "SEQUENCE_VALID_NOT_RECORDED", "SEQUENCE_VALID_REQUIRE",
    "SEQUENCE_VALID_SEQUENCE", "SEQUENCE_VALID_WRONG_TYPE", "TOOL_BLOCKLIST",
    "TOOL_BLOCKLIST_NOT_AN_OBJECT", "TOOL_BLOCKLIST_NOT_RECORDED", "TOOL_BLOCKLIST_WRONG_TYPE",
    "TOOL_RESULTS_ERROR",
    "TOOL_RESULTS_LATENCY", "TOOL_RESULTS_NOT_RECORDED", "TOOL_RESULTS_RESULT", "Level", "Rule",
    "UndeclaredRule", "declared", "group", "member", "rule"]

Level = Literal["error", "warning", "note"]


class UndeclaredRule(LookupError):
    """A rule id that is not declared here (a programming error, never a user's)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its id, kebab-case name, default level and documentation page."""

    id: str  # args_valid/maximum
    name: str  # argument-above-maximum
    level: Level
    page: str  # args_valid/maximum.md, under src/agent_eval/rules/docs/

    @property
    def key(self) -> str:
        """The part after the slash (``maximum``); the whole id if it has none."""
        return self.id.split("/", 1)[-1]

    @property
    def group(self) -> str:
        """The part before the slash (``args_valid``); the whole id if it has none."""
        return group(self.id)

    def input_error(self, file: str, line: int, message: str) -> InputError:
        """An input error of this rule (``line`` 0 when it concerns the whole file)."""
        return InputError(self.id, file, line, message)


_DECLARED: dict[str, Rule] = {}


def _declare(rule_id: str, name: str, level: Level) -> Rule:
    if rule_id in _DECLARED:
        raise ValueError(f"rule {rule_id} declared twice")
    declared_rule = Rule(rule_id, name, level, f"{rule_id}.md")
    _DECLARED[rule_id] = declared_rule
    return declared_rule


def rule(rule_id: str) -> Rule:
    """The declared rule ``rule_id``; raises :class:`UndeclaredRule` for any other id."""
    try:
        return _DECLARED[rule_id]
    except KeyError:
        raise UndeclaredRule(f"rule id {rule_id!r} is not declared in agent_eval.rule_ids"
                             ) from None


def member(group_name: str, key: str) -> Rule:
    """The rule ``group_name/key`` (``member("args_valid", "maximum")``), for ids made from a
    keyword table; raises :class:`UndeclaredRule` when it is not declared."""
    return rule(f"{group_name}/{key}")


def group(rule_id: str) -> str:
    """The group of a rule id: the part before the slash (``sequence_valid``)."""
    return rule_id.split("/", 1)[0]


def declared() -> tuple[Rule, ...]:
    """Every declared rule, in declaration order."""
    return tuple(_DECLARED.values())


# -- input/: the trace input (readers, the run's files, the live server and its lock)
INPUT_EVENT_AFTER_END = _declare("input/event_after_end", "event-after-trace-end", "error")
INPUT_INVALID_EVENT = _declare("input/invalid_event", "invalid-trace-event", "error")
INPUT_LIMIT_EXCEEDED = _declare("input/limit_exceeded", "trace-file-over-a-limit", "error")
INPUT_LOCK_INVALID = _declare("input/lock_invalid", "tool-lock-invalid", "error")
INPUT_LOCK_MISSING = _declare("input/lock_missing", "tool-lock-missing", "error")
INPUT_NO_TRACES = _declare("input/no_traces", "no-trace-files-matched", "error")
INPUT_OUTSIDE_ROOT = _declare("input/outside_root", "trace-path-outside-repository", "error")
INPUT_PARSE_ERROR = _declare("input/parse_error", "trace-line-not-json", "error")
INPUT_READER_ERROR = _declare("input/reader_error", "trace-reader-failed", "error")
INPUT_SERVER_START = _declare("input/server_start", "mcp-server-did-not-start", "error")
INPUT_UNKNOWN_FORMAT = _declare("input/unknown_format", "unknown-trace-format", "error")
INPUT_UNMATCHED_RESULT = _declare("input/unmatched_result", "unmatched-tool-result", "error")
INPUT_UNREADABLE_FILE = _declare("input/unreadable_file", "unreadable-trace-file", "error")

# -- tool_blocklist: its first rule was the check's only one, so its id has no `check/rule`
#    shape; ids are a public contract (baselines, suppressions, SARIF rule ids), so it keeps
#    that spelling. A call its argument conditions could not judge is not_recorded or
#    not_an_object, as in args_valid/, or wrong_type (an argument of a JSON type a condition
#    without `type:` does not constrain: "900" for {min: 500})
TOOL_BLOCKLIST = _declare("tool_blocklist", "blocked-tool-called", "error")
TOOL_BLOCKLIST_NOT_AN_OBJECT = _declare(
    "tool_blocklist/not_an_object", "blocklist-call-arguments-not-an-object", "error")
TOOL_BLOCKLIST_NOT_RECORDED = _declare(
    "tool_blocklist/not_recorded", "blocklist-call-arguments-not-recorded", "warning")
TOOL_BLOCKLIST_WRONG_TYPE = _declare(
    "tool_blocklist/wrong_type", "blocklist-argument-of-another-type", "error")

# -- args_valid/: one per policy keyword (config/schema_compiler.py), and the tool's own
ARGS_VALID_ADDITIONAL_ARGUMENTS = _declare(
    "args_valid/additional_arguments", "unexpected-argument", "error")
ARGS_VALID_ADDITIONAL_PROPERTIES = _declare(
    "args_valid/additional_properties", "unexpected-property", "error")
ARGS_VALID_ANY_OF = _declare("args_valid/any_of", "no-alternative-matched", "error")
ARGS_VALID_CONST = _declare("args_valid/const", "argument-not-const", "error")
ARGS_VALID_CONTAINS = _declare("args_valid/contains", "array-contains-mismatch", "error")
ARGS_VALID_DEPENDENT_REQUIRED = _declare(
    "args_valid/dependent_required", "missing-dependent-argument", "error")
ARGS_VALID_ENUM = _declare("args_valid/enum", "argument-not-in-enum", "error")
ARGS_VALID_EXCLUSIVE_MAXIMUM = _declare(
    "args_valid/exclusive_maximum", "argument-not-below-exclusive-maximum", "error")
ARGS_VALID_EXCLUSIVE_MINIMUM = _declare(
    "args_valid/exclusive_minimum", "argument-not-above-exclusive-minimum", "error")
ARGS_VALID_FALSE_SCHEMA = _declare("args_valid/false_schema", "value-where-none-allowed", "error")
ARGS_VALID_FORMAT = _declare("args_valid/format", "argument-invalid-format", "error")
ARGS_VALID_MAX_ITEMS = _declare("args_valid/max_items", "too-many-items", "error")
ARGS_VALID_MAX_LENGTH = _declare("args_valid/max_length", "argument-too-long", "error")
ARGS_VALID_MAX_PROPERTIES = _declare("args_valid/max_properties", "too-many-properties", "error")
ARGS_VALID_MAXIMUM = _declare("args_valid/maximum", "argument-above-maximum", "error")
ARGS_VALID_MIN_ITEMS = _declare("args_valid/min_items", "too-few-items", "error")
ARGS_VALID_MIN_LENGTH = _declare("args_valid/min_length", "argument-too-short", "error")
ARGS_VALID_MIN_PROPERTIES = _declare("args_valid/min_properties", "too-few-properties", "error")
ARGS_VALID_MINIMUM = _declare("args_valid/minimum", "argument-below-minimum", "error")
ARGS_VALID_MULTIPLE_OF = _declare("args_valid/multiple_of", "argument-not-multiple-of", "error")
ARGS_VALID_NOT = _declare("args_valid/not", "forbidden-schema-matched", "error")
ARGS_VALID_NOT_AN_OBJECT = _declare("args_valid/not_an_object", "arguments-not-an-object", "error")
ARGS_VALID_NOT_RECORDED = _declare("args_valid/not_recorded", "arguments-not-recorded",
                                   "warning")
ARGS_VALID_ONE_OF = _declare("args_valid/one_of", "not-exactly-one-alternative", "error")
ARGS_VALID_PATTERN = _declare("args_valid/pattern", "argument-pattern-mismatch", "error")
ARGS_VALID_PROPERTY_NAMES = _declare("args_valid/property_names", "invalid-property-name", "error")
ARGS_VALID_REQUIRED = _declare("args_valid/required", "missing-required-argument", "error")
ARGS_VALID_TYPE = _declare("args_valid/type", "argument-wrong-type", "error")
ARGS_VALID_UNCONSTRAINED_TOOL = _declare(
    "args_valid/unconstrained_tool", "unconstrained-tool-call", "warning")
ARGS_VALID_UNIQUE_ITEMS = _declare("args_valid/unique_items", "duplicate-items", "error")
ARGS_VALID_UNKNOWN_TOOL = _declare("args_valid/unknown_tool", "tool-not-in-policy", "error")

# -- sequence_valid/: one per rule type of checks/sequence_valid.py, and not_recorded,
#    not_an_object and wrong_type (a call a rule's argument conditions could not judge, as
#    in tool_blocklist/)
SEQUENCE_VALID_AFTER = _declare("sequence_valid/after", "missing-follow-up-call", "error")
SEQUENCE_VALID_ALLOWLIST = _declare("sequence_valid/allowlist", "tool-not-in-allowlist", "error")
SEQUENCE_VALID_BEFORE = _declare(
    "sequence_valid/before", "tool-called-before-prerequisite", "error")
SEQUENCE_VALID_BLOCKLIST = _declare(
    "sequence_valid/blocklist", "blocked-tool-in-sequence", "error")
SEQUENCE_VALID_COUNT = _declare("sequence_valid/count", "tool-call-count-out-of-range", "error")
SEQUENCE_VALID_EVENTUALLY = _declare("sequence_valid/eventually", "call-not-early-enough", "error")
SEQUENCE_VALID_IMMEDIATELY_BEFORE = _declare(
    "sequence_valid/immediately_before", "prerequisite-not-immediately-before", "error")
SEQUENCE_VALID_NEVER_AFTER = _declare(
    "sequence_valid/never_after", "forbidden-call-after", "error")
SEQUENCE_VALID_NOT_AN_OBJECT = _declare(
    "sequence_valid/not_an_object", "sequence-call-arguments-not-an-object", "error")
SEQUENCE_VALID_NOT_RECORDED = _declare(
    "sequence_valid/not_recorded", "sequence-call-arguments-not-recorded", "warning")
SEQUENCE_VALID_REQUIRE = _declare("sequence_valid/require", "required-tool-not-called", "error")
SEQUENCE_VALID_SEQUENCE = _declare("sequence_valid/sequence", "steps-out-of-order", "error")
SEQUENCE_VALID_WRONG_TYPE = _declare(
    "sequence_valid/wrong_type", "sequence-argument-of-another-type", "error")

# -- tool_results/: recorded results, errors and latencies
TOOL_RESULTS_ERROR = _declare("tool_results/error", "recorded-error-mismatch", "error")
TOOL_RESULTS_LATENCY = _declare("tool_results/latency", "recorded-call-latency", "error")
TOOL_RESULTS_NOT_RECORDED = _declare(
    "tool_results/not_recorded", "recorded-value-missing", "error")
TOOL_RESULTS_RESULT = _declare("tool_results/result", "recorded-result-mismatch", "error")

# -- scenario/: scenario expectations and metrics
SCENARIO_ARGS = _declare("scenario/args", "scenario-arguments-mismatch", "error")
SCENARIO_BEHAVIOR = _declare("scenario/behavior", "scenario-behavior-not-observed", "note")
SCENARIO_FORBIDDEN_TOOLS = _declare(
    "scenario/forbidden_tools", "scenario-forbidden-tool-called", "error")
SCENARIO_HANDOFF = _declare("scenario/handoff", "handoff-expectation-missed", "error")
SCENARIO_MISSING_TRACE = _declare("scenario/missing_trace", "scenario-without-trace", "error")
SCENARIO_MUST_NOT = _declare("scenario/must_not", "scenario-must-not-behavior-happened", "error")
SCENARIO_NO_BASELINE = _declare("scenario/no_baseline", "scenario-cost-multiplier-skipped", "note")
SCENARIO_NOT_RECORDED = _declare(
    "scenario/not_recorded", "scenario-figure-not-recorded", "warning")
SCENARIO_OUTPUT = _declare("scenario/output", "scenario-output-check-failed", "error")
SCENARIO_SEQUENCE = _declare("scenario/sequence", "scenario-sequence-mismatch", "error")
SCENARIO_STATE = _declare("scenario/state", "scenario-final-state-missing", "error")
SCENARIO_THRESHOLD = _declare("scenario/threshold", "scenario-threshold-missed", "error")
SCENARIO_TOOL_HEALTH = _declare("scenario/tool_health", "scenario-tool-call-failed", "error")
SCENARIO_TOOL_RECALL = _declare(
    "scenario/tool_recall", "scenario-expected-tool-not-called", "note")
SCENARIO_UNKNOWN_ID = _declare(
    "scenario/unknown_id", "trace-names-unknown-scenario", "warning")
SCENARIO_WARN_THRESHOLD = _declare(
    "scenario/warn_threshold", "scenario-warning-threshold-exceeded", "warning")

# -- criteria/: the suite's pass criteria (one per criterion kind)
CRITERIA_BLOCKING = _declare("criteria/blocking", "suite-blocking-criterion-missed", "error")
CRITERIA_BY_CATEGORY = _declare("criteria/by_category", "suite-category-pass-rate-missed", "error")
CRITERIA_COMPOSITE = _declare("criteria/composite", "suite-composite-below-minimum", "error")
CRITERIA_REQUIRED = _declare("criteria/required", "suite-required-scenario-not-passed", "error")
CRITERIA_WARNING = _declare("criteria/warning", "suite-warning-criterion-missed", "warning")
CRITERIA_REGRESSION = _declare(
    "criteria/regression", "suite-regression-criterion-missed", "error")

# -- judge/: the replayed LLM judge (one per judge kind, and its own failures)
JUDGE_ERROR = _declare("judge/error", "judge-judgement-failed", "error")
JUDGE_HALLUCINATION = _declare(
    "judge/hallucination", "judge-hallucination-below-threshold", "error")
JUDGE_MISSING = _declare("judge/missing", "judge-judgement-missing", "error")
JUDGE_NO_BASELINE = _declare("judge/no_baseline", "judge-pairwise-no-baseline", "note")
JUDGE_NOT_RECORDED = _declare("judge/not_recorded", "judge-recorded-score-missing", "warning")
JUDGE_PAIRWISE = _declare("judge/pairwise", "judge-pairwise-worse-than-base", "error")
JUDGE_QUALITY = _declare("judge/quality", "judge-quality-below-threshold", "error")
JUDGE_RECORDED = _declare("judge/recorded", "judge-recorded-score-below-threshold", "error")
JUDGE_RUBRIC = _declare("judge/rubric", "judge-rubric-below-threshold", "error")
JUDGE_SAFETY = _declare("judge/safety", "judge-safety-below-threshold", "error")
JUDGE_SKIPPED = _declare("judge/skipped", "judge-check-skipped", "note")
JUDGE_STORE = _declare("judge/store", "judge-store-unreadable", "error")

# -- coverage/
COVERAGE_UNEXERCISED = _declare("coverage/unexercised", "rule-not-exercised", "note")

# -- mcp/: the pinned MCP tool listing
MCP_HIDDEN_CHARACTERS = _declare("mcp/hidden_characters", "mcp-hidden-characters", "error")
MCP_INJECTED_INSTRUCTIONS = _declare(
    "mcp/injected_instructions", "mcp-injected-instructions", "error")
MCP_TOOL_ADDED = _declare("mcp/tool_added", "mcp-tool-added", "error")
MCP_TOOL_CHANGED = _declare("mcp/tool_changed", "mcp-tool-changed", "error")
MCP_TOOL_REMOVED = _declare("mcp/tool_removed", "mcp-tool-removed", "error")
MCP_TOOL_SHADOWING = _declare("mcp/tool_shadowing", "mcp-tool-shadowing", "error")

# -- probe/: the live MCP probes
PROBE_ARGUMENTS = _declare("probe/arguments", "probe-prompt-arguments", "error")
PROBE_CALL_FAILED = _declare("probe/call_failed", "probe-call-failed", "error")
PROBE_CAPABILITY = _declare("probe/capability", "probe-capability", "error")
PROBE_ERROR = _declare("probe/error", "probe-expected-error-missing", "error")
PROBE_LATENCY = _declare("probe/latency", "probe-latency", "error")
PROBE_LISTING = _declare("probe/listing", "probe-listing", "error")
PROBE_MESSAGES = _declare("probe/messages", "probe-prompt-messages", "error")
PROBE_MIME_TYPE = _declare("probe/mime_type", "probe-mime-type", "error")
PROBE_RESULT = _declare("probe/result", "probe-result-mismatch", "error")
PROBE_SAMPLING = _declare("probe/sampling", "probe-sampling", "error")
PROBE_TIMEOUT = _declare("probe/timeout", "probe-timeout", "error")

# -- import/: a peer tool's config key agent-eval cannot apply (docs/migrating.md)
IMPORT_UNSUPPORTED = _declare(
    "import/unsupported", "peer-config-key-unsupported", "warning")
