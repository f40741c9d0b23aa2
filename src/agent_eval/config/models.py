"""Typed models of the suite file and the policy file.

They validate structure (unknown keys are errors) and generate the published JSON
Schemas. Positions are not in the models: the loader maps every validation error back
to the YAML line through :mod:`agent_eval.yamlpos`.
"""

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo

from agent_eval.limits import DEFAULT as _LIMITS
from agent_eval.limits import DEPTH_CEILING, Limits

ToolPatterns = str | list[str]
OutputFormat = Literal["sarif", "junit", "json", "markdown", "html"]
JSON_SCHEMA_REF: JsonDict = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
_NUMBER: JsonDict = {"type": "number"}
_COUNT: JsonDict = {"type": "integer", "minimum": 0}
ARGUMENT_SCHEMA: JsonDict = {
    "description": "A JSON Schema (2020-12) for one argument, with the sugar spellings "
    "min/max, exclusive_min/exclusive_max, min_length/max_length, min_items/max_items and "
    "required: true.",
    "type": ["object", "boolean", "null"],
    "properties": {
        "required": {"type": ["boolean", "array"], "items": {"type": "string"}},
        "min": _NUMBER, "max": _NUMBER, "exclusive_min": _NUMBER, "exclusive_max": _NUMBER,
        "min_length": _COUNT, "max_length": _COUNT, "min_items": _COUNT, "max_items": _COUNT,
        "type": {"type": ["string", "array"]},
        "pattern": {"type": "string", "format": "regex"},
        "format": {"enum": ["date-time", "date", "time", "email", "uri", "uuid", "ipv4",
                            "ipv6", "hostname"]},
        "enum": {"type": "array", "minItems": 1},
    },
}


def no_items() -> list[Any]:
    """A new empty list: the default of a list field. A function of ours, not ``list``:
    pydantic asks a default factory's signature, and ``inspect.signature(list)`` parses
    list's text signature with tokenize (compiling tokenize's patterns: about 2 ms of the
    start-up of a run, docs/performance.md)."""
    return []


# YAML 1.1 reads more words than true and false as booleans
BOOLEAN = "a boolean (YAML reads true, false, yes, no, on and off as booleans)"


def _leaves(annotation: Any) -> list[Any]:
    """The types a field's annotation is made of (``Annotated`` and unions unwrapped);
    ``Any`` for a type with a before-validator of its own, which judges a boolean itself
    (a rate says "not a rate")."""
    origin = get_origin(annotation)
    if origin is Annotated:
        if any(isinstance(m, BeforeValidator) for m in annotation.__metadata__):
            return [Any]
        return _leaves(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [leaf for a in get_args(annotation) for leaf in _leaves(a)]
    return [annotation]


def number_not_bool(annotation: Any) -> bool:
    """Whether a field of this type takes a number and no boolean: pydantic reads a YAML
    boolean given for it as 1 or 0."""
    leaves = _leaves(annotation)
    if any(leaf is bool or leaf is Any or (get_origin(leaf) is Literal and any(
            type(a) is bool for a in get_args(leaf))) for leaf in leaves):
        return False
    return any(leaf is int or leaf is float for leaf in leaves)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _not_a_boolean(cls, data: Any) -> Any:
        """A YAML boolean given for a key that takes a number and no boolean (a limit, a
        count, a rate, a weight) is a config error at that key: pydantic read ``true`` as
        1 and ``false`` as 0, without a word (``{type: count, max: true}`` allowed one
        call, ``max_tool_calls: yes`` one, ``min_pass_ratio: false`` let every trace
        fail). One check of the model's keys (not a validator per field: each made the
        models slower to build, 2 % of a run's start-up)."""
        if type(data) is not dict:
            return data
        found: list[tuple[str | int, ...]] = []
        for key, value in data.items():
            if type(value) is bool:
                if key in cls.model_fields and _number_field(cls.model_fields[key]):
                    found.append((key,))
            elif type(value) is list and key in cls.model_fields and any(
                    type(v) is bool for v in value) and _numbers_field(cls.model_fields[key]):
                # a list of numbers ([lowest, highest] of a recorded score)
                found += [(key, i) for i, v in enumerate(value) if type(v) is bool]
        if found:  # (every one, as a validator per field said them)
            # (errors at their keys: pydantic nests their locations in the model's; a
            # value_error made as a dict, not with pydantic_core's classes, which the
            # package does not declare)
            message = ValueError(f"{BOOLEAN}, not a number: write the number")
            raise ValidationError.from_exception_data(cls.__name__, [
                {"type": "value_error", "loc": loc, "input": True, "ctx": {"error": message}}
                for loc in found])
        return data


def without_wrong_keys(model: type[BaseModel], item: dict[str, Any],
                       needed: frozenset[str] = frozenset()) -> Any:
    """``item`` (a test, a scenario) that did not validate as ``model``, validated without
    its keys that are wrong (a misspelt key, a bad severity), when the rest validates: so
    that the problems of its other keys (an empty blocklist, an unknown @group) are said in
    the same run, not after the first is fixed. None when that cannot be told: a wrong key
    is required, or one of ``needed`` (keys the others depend on), or a problem is not at
    a key of the item."""
    try:
        model.model_validate(item)
    except ValidationError as exc:
        wrong = {err["loc"][0] if err["loc"] else None for err in exc.errors()}
    else:
        return None
    if not wrong or not wrong <= set(item) or wrong & needed:
        return None
    try:
        return model.model_validate({k: v for k, v in item.items() if k not in wrong})
    except ValidationError:
        return None


def _number_field(field: FieldInfo) -> bool:
    """Whether a field takes a number and no boolean (a type with a before-validator of
    its own judges a boolean itself: a rate says "not a rate")."""
    return number_not_bool(field.annotation) and not any(
        isinstance(m, BeforeValidator) for m in field.metadata)


def _numbers_field(field: FieldInfo) -> bool:
    """Whether a field takes a list or tuple of numbers and no boolean in it."""
    for leaf in _leaves(field.annotation):
        if get_origin(leaf) in (list, tuple):
            items = [a for a in get_args(leaf) if a is not Ellipsis]
            if items and all(number_not_bool(a) for a in items):
                return True
    return False


def _version(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class OutputConfig(Strict):
    format: list[OutputFormat] = Field(
        default_factory=lambda: list[OutputFormat](["json"]),
        description="Formats written by `agent-eval run` besides results.json.",
    )
    dir: str | None = Field(
        None, description="Output folder, relative to this file (default: agent-eval-results "
        "in the current folder)."
    )

    @field_validator("format", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("dir")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        # (no path holds one: run and validate stopped with an internal error)
        if value is not None and "\0" in value:
            raise ValueError("a folder name cannot hold a NUL character (\\0)")
        return value


def _no_nul(value: str) -> str:
    # (no path holds one: opening it stopped validate and run with an internal error,
    # ValueError: embedded null byte)
    if "\0" in value:
        raise ValueError("a file or folder name cannot hold a NUL character (\\0)")
    return value


# a file or folder the config names (a policy, a schema, the tool lock, the judge's store)
FileName = Annotated[str, AfterValidator(_no_nul)]


def _limit(default: int, description: str, le: int | None = None) -> Any:
    return Field(default, ge=1, le=le, description=f"{description} (default {default:,}).")


class LimitsConfig(Strict):
    """Bounds on what is read (docs/security.md "Limits"); hitting one is an input error
    for that file, never a crash or a hang."""

    max_file_bytes: int = _limit(
        _LIMITS.max_file_bytes, "Largest trace file, archive member or JSON line read "
        "into memory whole, in bytes")
    max_archive_bytes: int = _limit(
        _LIMITS.max_archive_bytes, "Decompressed bytes read from one archive (an Inspect "
        ".eval), all members together")
    max_archive_members: int = _limit(
        _LIMITS.max_archive_members, "Members one archive (an Inspect .eval) may hold")
    max_containers: int = _limit(
        _LIMITS.max_containers, "Objects and arrays in one JSON document or line")
    max_depth: int = _limit(
        _LIMITS.max_depth, "How deeply JSON and YAML values in traces may nest",
        le=DEPTH_CEILING)
    max_alias_nodes: int = _limit(
        _LIMITS.max_alias_nodes, "Values that YAML aliases (*name) may add to a trace "
        "file (a VCR cassette)")
    max_name_chars: int = _limit(
        _LIMITS.max_name_chars, "Longest tool name, trace id or scenario name kept; a "
        "longer one is cut, with a visible marker")
    max_value_chars: int = _limit(
        _LIMITS.max_value_chars, "Longest value (as JSON text) shown in a finding; a "
        "longer one is cut, with a visible marker")
    max_input_errors: int = _limit(
        _LIMITS.max_input_errors, "Input errors of one trace file listed one by one; the "
        "others are counted in one more input error")

    def limits(self) -> Limits:
        return Limits(**self.model_dump())


class ToolSelector(Strict):
    """The calls of a tool whose arguments satisfy conditions."""

    tool: str | list[str] = Field(description="A tool name, glob or @group (or a list: "
                                  "any of them).")
    args: dict[str, Any] | None = Field(
        None, description="Argument -> a literal (JSON equality) or a constraint object in "
        "the policy spellings ({pattern: '^curl'}, {min: 500}); every one must hold.")


def _kind(value: Any) -> str:
    return "str" if isinstance(value, str) else "list" if isinstance(value, list) else "selector"


# Tagged by the value's shape, so that a mistake is reported once, for the shape written.
SelectorItem = Annotated[
    Annotated[str, Tag("str")] | Annotated[ToolSelector, Tag("selector")],
    Discriminator(_kind)]
Selectors = Annotated[
    Annotated[str, Tag("str")] | Annotated[ToolSelector, Tag("selector")]
    | Annotated[list[SelectorItem], Tag("list")],
    Discriminator(_kind)]
GroupMembers = Selectors


class TestBase(Strict):
    """Keys every test has; each metric adds its own."""

    id: str = Field(description="Stable id of the test (used in reports and fingerprints).")
    metric: str
    description: str | None = None
    severity: Literal["error", "warning", "note"] = Field(
        "error", description="Severity of this test's findings."
    )


class SuiteFile(Strict):
    """The suite file (`agent-eval.yaml`). `tests` items are validated per metric."""

    version: Literal["1"] = "1"
    suite: str = Field(description="Name of the suite; used in reports and the SARIF category.")
    description: str | None = None
    traces: ToolPatterns | None = Field(
        None, description="Glob or list of globs of trace files, relative to this file."
    )
    format: str = Field("auto", description="auto | native | an adapter name.")
    tool_match: Literal["normalized", "exact"] = "normalized"
    tool_groups: dict[str, GroupMembers] | None = Field(
        None, description="Named groups of tools (names, globs, other @groups, {tool, args} "
        "selectors), used as @NAME in any rule, blocklist or expectation.")
    unexercised: Literal["note", "warning", "error"] = Field(
        "note", description="Severity of a coverage/unexercised finding: a policy key, rule "
        "tool, blocklist entry or scenario tool that matched no call in any trace. error "
        "makes such a rule fail the run (as --strict-coverage does).")
    tests: list[dict[str, Any]] = Field(default_factory=no_items)
    scenarios: list[dict[str, Any]] = Field(default_factory=no_items)  # scenarios/models.py
    pass_criteria: dict[str, Any] | None = None  # scenarios/models.py PassCriteria
    # live MCP (docs/mcp.md): validated by live/compile.py against live/models.py
    servers: dict[str, Any] | None = None
    probes: list[Any] = Field(default_factory=no_items)
    tool_lock: FileName | None = Field(
        None, description="The lock file of the servers' tools, relative to this file "
        "(written by `agent-eval lock`), inside the repository; its absence with servers "
        "pinned is an error.")
    weights: dict[str, Any] | None = None  # scenarios/models.py SuiteWeights
    judge: dict[str, Any] | None = None  # judge/config.py JudgeConfig
    output: OutputConfig = Field(default_factory=OutputConfig)  # type: ignore[arg-type]
    limits: LimitsConfig = Field(default_factory=LimitsConfig)

    _v = field_validator("version", mode="before")(classmethod(lambda cls, v: _version(v)))


class ToolPolicy(Strict):
    description: str | None = None
    arguments: dict[str, dict[str, Any] | bool | None] | None = Field(
        None,
        description="Argument name -> JSON Schema (2020-12) with sugar: min/max, "
        "exclusive_min/exclusive_max, min_length/max_length, min_items/max_items, "
        "required: true.",
        json_schema_extra={"additionalProperties": ARGUMENT_SCHEMA},
    )
    additional_arguments: bool = Field(
        True, description="false: an argument the policy does not list is a violation."
    )
    schema_: dict[str, Any] | bool | None = Field(
        None, alias="schema", description="A full JSON Schema of the arguments object.",
        json_schema_extra=JSON_SCHEMA_REF,
    )


class Enforcement(Strict):
    unconstrained_tools: Literal["deny", "warn", "allow"] = Field(
        "allow", description="A call to a tool that no policy key matches: deny (an error), "
        "warn (a warning) or allow (skipped, the default). Assay's "
        "enforcement.unconstrained_tools.")


class PolicyFile(Strict):
    """A policy file for the args_valid metric."""

    version: Literal["1"] = "1"
    description: str | None = None
    defs: dict[str, Any] | None = Field(
        None, alias="$defs", description="Shared schemas, referenced from any tool as "
        "$ref: '#/$defs/NAME'.", json_schema_extra={"additionalProperties": JSON_SCHEMA_REF})
    tools: dict[str, ToolPolicy] = Field(
        description="Tool name or glob -> its argument policy. A tool matching several keys "
        "gets all of their constraints."
    )
    enforcement: Enforcement | None = Field(
        None, description="What a call to a tool without any policy key is.")

    _v = field_validator("version", mode="before")(classmethod(lambda cls, v: _version(v)))
