"""args_valid end to end (docs/config.md "args_valid and the policy file"): a suite, a policy
and JSONL traces written to a temporary folder, then ``load_suite`` + ``load_traces`` +
``evaluate``. Lines and columns were counted by hand in the literals below (line 1 is a
literal's first line); trace lines are the JSONL line numbers of the calls.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_eval.api import evaluate, load_suite, load_traces
from agent_eval.config.policy import Policy
from agent_eval.errors import ConfigError
from agent_eval.findings import Finding
from agent_eval.results import Results

SUITE = textwrap.dedent("""\
    version: "1"
    suite: shop
    tests:
      - id: args
        metric: args_valid
        policy: policy.yaml
    """)

# The policy of docs/config.md. Line 6 is
# '      percent: {type: number, min: 0, max: 30, required: true}':
#  'percent' col 7, '{' col 16, 'type' col 17, 'min' col 31, 'max' col 39, 'required' col 48.
SEED_POLICY = """\
    version: "1"
    tools:
      apply_discount:
        description: Apply a percentage discount
        arguments:
          percent: {type: number, min: 0, max: 30, required: true}
          code:    {type: string, pattern: "^[A-Z]{4}\\\\d{2}$"}
        additional_arguments: false
      process_payment:
        schema:
          type: object
          required: [amount, currency]
          properties:
            amount: {type: number, exclusiveMinimum: 0}
            currency: {enum: [USD, EUR]}
      "admin_*":
        arguments: {reason: {type: string, minLength: 10, required: true}}
    """


def call(tool: str, arguments: Any = None, **extra: Any) -> str:
    """One native tool_call line."""
    event: dict[str, Any] = {"type": "tool_call", "tool": tool, **extra}
    if arguments is not None:
        event["arguments"] = arguments
    return json.dumps(event)


def run(tmp_path: Path, policy: str, lines: list[str], suite: str = SUITE) -> Results:
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent(suite), encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(textwrap.dedent(policy), encoding="utf-8")
    traces = tmp_path / "traces"
    traces.mkdir(exist_ok=True)
    (traces / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_suite(tmp_path / "agent-eval.yaml")
    return evaluate(loaded, load_traces([traces / "t.jsonl"], loaded))


def at(f: Finding) -> tuple[str, str | None, str | None, int, int, int | None]:
    """rule, argument, config file, config line, config column, trace line"""
    return (f.rule, f.argument, f.config.file, f.config.line, f.config.col,
            f.trace.line if f.trace else None)


def found(results: Results) -> list[tuple[str, str | None, str | None, int, int, int | None]]:
    """The findings as ``at`` tuples, by trace line, then config line and column."""
    assert results.input_errors == []
    return sorted((at(f) for f in results.violations), key=lambda a: (a[5] or 0, a[3], a[4]))


# ------------------------------------------------------------------------------- seed
def test_seed_example(tmp_path: Path) -> None:
    # the seed's one-line trace, verbatim
    line = '{"type":"tool_call","tool":"apply_discount","arguments":{"percent":50}}'
    results = run(tmp_path, SEED_POLICY, [line])
    assert results.verdict == "fail"
    assert results.counts["violations"] == 1
    (f,) = results.violations
    assert f.rule == "args_valid/maximum"
    assert f.severity == "error"
    assert f.test == "args"
    assert f.tool == "apply_discount"
    assert f.argument == "percent"
    assert f.value == 50
    assert f.constraint == "max: 30"
    assert (f.config.file, f.config.line, f.config.col) == ("policy.yaml", 6, 39)
    assert f.config.key_path == "tools.apply_discount.arguments.percent.max"
    assert f.trace is not None
    assert (f.trace.file, f.trace.line) == ("traces/t.jsonl", 1)
    assert "percent" in f.message and "50" in f.message and "max: 30" in f.message


def test_seed_policy_valid_calls_pass(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": 30, "code": "SAVE10"}),
        call("apply_discount", {"percent": 0}),
        call("process_payment", {"amount": 0.01, "currency": "EUR"}),
        call("admin_unlock", {"reason": "identity verified by SMS"}),
        call("lookup_order", {"anything": [1, 2]}),  # no key matches, not strict: skipped
    ])
    assert found(results) == []
    assert results.verdict == "pass"


def test_several_violations_of_one_call(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": -5, "code": "save10"}),
    ])
    # line 7 '      code:    {type: string, pattern: "…"}': '{' col 16, 'pattern' col 31
    assert found(results) == [
        ("args_valid/minimum", "percent", "policy.yaml", 6, 31, 1),
        ("args_valid/pattern", "code", "policy.yaml", 7, 31, 1),
    ]


# --------------------------------------------------------------------------- required
def test_missing_required_points_at_its_required_line(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, ["{}", call("apply_discount", {"code": "ABCD12"})])
    (f,) = results.violations
    assert at(f) == ("args_valid/required", "percent", "policy.yaml", 6, 48, 2)
    assert f.constraint == "required: true"
    assert f.value is None
    assert f.config.key_path == "tools.apply_discount.arguments.percent.required"


def test_required_in_block_style(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          issue_refund:
            arguments:
              order_id:
                type: string
                required: true
        """
    # no "arguments" key at all: an empty object
    results = run(tmp_path, policy, [call("issue_refund")])
    assert found(results) == [("args_valid/required", "order_id", "policy.yaml", 7, 9, 1)]


def test_required_list_of_a_full_schema(tmp_path: Path) -> None:
    # line 12 '      required: [amount, currency]': '[' col 17, amount col 18, currency col 26
    # line 14 '        amount: {type: number, exclusiveMinimum: 0}': 'exclusiveMinimum' col 32
    # line 15 '        currency: {enum: [USD, EUR]}': 'enum' col 20
    results = run(tmp_path, SEED_POLICY, [
        call("process_payment", {"amount": 10}),
        call("process_payment", {"amount": 0, "currency": "GBP"}),
    ])
    assert found(results) == [
        ("args_valid/required", "currency", "policy.yaml", 12, 26, 1),
        ("args_valid/exclusive_minimum", "amount", "policy.yaml", 14, 32, 2),
        ("args_valid/enum", "currency", "policy.yaml", 15, 20, 2),
    ]


# ----------------------------------------------------------------- additional arguments
def test_additional_arguments_false(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": 10, "note": "loyal customer", "override": True}),
    ])
    # line 8 '    additional_arguments: false': col 5
    assert found(results) == [
        ("args_valid/additional_arguments", "note", "policy.yaml", 8, 5, 1),
        ("args_valid/additional_arguments", "override", "policy.yaml", 8, 5, 1),
    ]
    values = {f.argument: f.value for f in results.violations}
    assert values == {"note": "loyal customer", "override": True}
    assert {f.constraint for f in results.violations} == {"additional_arguments: false"}


def test_additional_arguments_default_true(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          search:
            arguments:
              query: {type: string}
        """
    assert found(run(tmp_path, policy, [call("search", {"query": "x", "limit": 5})])) == []


def test_additional_arguments_false_without_arguments_map(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          ping:
            additional_arguments: false
        """
    results = run(tmp_path, policy, [call("ping", {}), call("ping", {"host": "x"})])
    assert found(results) == [("args_valid/additional_arguments", "host", "policy.yaml", 4, 5, 2)]


def test_additional_arguments_false_with_a_schema_allows_its_properties(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          pay:
            additional_arguments: false
            schema:
              type: object
              properties:
                amount: {type: number}
              patternProperties:
                "^meta_": {type: string}
        """
    results = run(tmp_path, policy, [
        call("pay", {"amount": 3, "meta_ref": "r1"}),
        call("pay", {"amount": 3, "tip": 1}),
    ])
    # amount and meta_* are described by the schema; only tip is unknown
    assert found(results) == [("args_valid/additional_arguments", "tip", "policy.yaml", 4, 5, 2)]


# ------------------------------------------------------------------------ glob keys
def test_glob_key_and_a_tool_matching_several_keys(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          "admin_*":
            arguments: {reason: {type: string, minLength: 10, required: true}}
          admin_delete_user:
            arguments: {user_id: {type: string, required: true}}
        """
    # line 4: 'reason' col 17, 'type' col 26, 'minLength' col 40, 'required' col 55
    # line 6: 'user_id' col 17, 'type' col 27, 'required' col 41
    results = run(tmp_path, policy, [
        call("admin_delete_user", {}),
        call("admin_reset_password", {"reason": "asked"}),
        call("admin_delete_user", {"reason": "GDPR erasure request #4411", "user_id": "U1"}),
        call("delete_user", {}),
    ])
    assert found(results) == [
        ("args_valid/required", "reason", "policy.yaml", 4, 55, 1),
        ("args_valid/required", "user_id", "policy.yaml", 6, 41, 1),
        ("args_valid/min_length", "reason", "policy.yaml", 4, 40, 2),
    ]


def test_tools_filter(tmp_path: Path) -> None:
    suite = """\
        version: "1"
        suite: shop
        tests:
          - id: args
            metric: args_valid
            policy: policy.yaml
            tools: [process_*]
        """
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": 50}),
        call("process_payment", {"amount": -1, "currency": "USD"}),
    ], suite=suite)
    assert found(results) == [("args_valid/exclusive_minimum", "amount", "policy.yaml", 14, 32, 2)]


GROUP_SUITE = """\
    version: "1"
    suite: shop
    tool_groups:
      payments: [process_*]
    tests:
      - id: args
        metric: args_valid
        policy: policy.yaml
        tools: ["@{group}"]
    """


def test_tools_filter_takes_a_tool_group(tmp_path: Path) -> None:
    """A @group in the tools filter stands for its tools; it was taken as a tool named
    '@payments', so the test checked no call (a negative amount passed, exit 0)."""
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": 50}),
        call("process_payment", {"amount": -1, "currency": "USD"}),
    ], suite=GROUP_SUITE.format(group="payments"))
    assert found(results) == [("args_valid/exclusive_minimum", "amount", "policy.yaml", 14, 32, 2)]


def test_tools_filter_unknown_group_is_a_config_error(tmp_path: Path) -> None:
    # line 9: '    tools: ["@paymnts"]': the item's '"' at col 13
    with pytest.raises(ConfigError) as info:
        run(tmp_path, SEED_POLICY, [], suite=GROUP_SUITE.format(group="paymnts"))
    assert info.value.problems == [
        "agent-eval.yaml:9:13: unknown tool group '@paymnts' (did you mean '@payments'?); "
        "groups: @payments (define it under tool_groups:)"]


def test_a_filtered_tool_no_policy_key_matches_is_a_config_error(tmp_path: Path) -> None:
    """tools: [refund, apply_discount] beside a policy that names no 'refund': refund's
    calls were skipped (no rule), the test checked the other tool only, and a refund of any
    amount passed. A name is checked, a glob or @group is not (it may be meant wider)."""
    suite = SUITE + "    tools: [refund, apply_discount, process_*]\n"
    # line 7: '    tools: [refund, apply_discount, process_*]': 'refund' at col 13
    with pytest.raises(ConfigError) as info:
        run(tmp_path, SEED_POLICY, [call("refund", {"amount": 10 ** 6})], suite=suite)
    assert info.value.problems == [
        "agent-eval.yaml:7:13: 'refund' in the tools filter matches no key of policy "
        "'policy.yaml', so its calls would not be checked; add it to the policy, or remove "
        "it from the filter (strict: true refuses a call of a tool the policy does not name)"]
    # a name a glob key matches is fine (admin_reset by "admin_*"), and so is any name
    # under strict: true (its calls are args_valid/unknown_tool)
    run(tmp_path, SEED_POLICY, [], suite=SUITE + "    tools: [admin_reset]\n")
    strict = run(tmp_path, SEED_POLICY, [call("refund", {"amount": 1})],
                 suite=SUITE + "    tools: [refund]\n    strict: true\n")
    assert [f.rule for f in strict.findings if f.rule.startswith("args_valid")] == [
        "args_valid/unknown_tool"]


def test_tools_filter_empty_list_is_a_config_error(tmp_path: Path) -> None:
    """tools: [] let no call through: the test checked nothing and passed (exit 0)."""
    suite = SUITE + "    tools: []\n"
    # line 7: '    tools: []': the key at col 5
    with pytest.raises(ConfigError) as info:
        run(tmp_path, SEED_POLICY, [call("apply_discount", {"percent": 50})], suite=suite)
    assert info.value.problems == [
        "agent-eval.yaml:7:5: an empty list names no tool, so nothing would be checked; "
        "name at least one tool (a name, a glob or @group)"]


@pytest.mark.parametrize(("extra", "policy_extra", "verdict"), [
    ("", "", None),  # checks nothing: a config error
    ("    strict: true\n", "", "fail"),  # every call is unknown_tool
    ("", "enforcement: {unconstrained_tools: warn}\n", "warn"),  # every call unconstrained
])
def test_a_policy_without_tools(tmp_path: Path, extra: str, policy_extra: str,
                                verdict: str | None) -> None:
    """tools: {} skipped every call: the test checked nothing and the run passed (exit 0),
    unless strict: true or enforcement refuses the calls it does not constrain."""
    policy = 'version: "1"\ntools: {}\n' + policy_extra
    lines = [call("apply_discount", {"percent": 50})]
    if verdict is not None:
        assert run(tmp_path, policy, lines, suite=SUITE + extra).verdict == verdict
        return
    # line 6: '    policy: policy.yaml': the key at col 5
    with pytest.raises(ConfigError) as info:
        run(tmp_path, policy, lines)
    assert info.value.problems == [
        "agent-eval.yaml:6:5: policy 'policy.yaml' has no tools (tools: {}), so this test "
        "would check nothing; list the tools it constrains, or refuse every call with "
        "strict: true (or the policy's enforcement: {unconstrained_tools: deny})"]


def test_policy_key_naming_a_group_is_a_config_error(tmp_path: Path) -> None:
    """A policy key is a name or a glob; '@payments' matched no tool, so its constraints
    never applied and the run passed."""
    policy = """\
        version: "1"
        tools:
          "@payments":
            arguments: {amount: {exclusive_min: 0}}
        """
    with pytest.raises(ConfigError) as info:
        run(tmp_path, policy, [call("process_payment", {"amount": -1})],
            suite=GROUP_SUITE.format(group="payments"))
    assert info.value.problems == [
        "policy.yaml:3:3: policy key '@payments': a policy key is a tool name or a glob; "
        "tool groups (@NAME) are the suite's and do not apply in a policy file: write its "
        "tools (or a glob) as keys"]


# --------------------------------------------------------------------------- strict
STRICT_SUITE = textwrap.dedent("""\
    version: "1"
    suite: shop
    tests:
      - id: args
        metric: args_valid
        policy: policy.yaml
        strict: true
    """)


def test_strict_unknown_tool_points_at_the_strict_line(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", {"percent": 5}),
        call("lookup_order", {"order_id": "A-1"}),
    ], suite=STRICT_SUITE)
    (f,) = results.violations
    # line 7 '    strict: true': col 5, in the suite file
    assert at(f) == ("args_valid/unknown_tool", None, "agent-eval.yaml", 7, 5, 2)
    assert f.tool == "lookup_order"
    assert f.constraint == "strict: true"
    assert f.config.key_path == "tests.args.strict"


def test_strict_with_tools_filter_only_considers_listed_tools(tmp_path: Path) -> None:
    suite = STRICT_SUITE + "    tools: [lookup_*, apply_discount]\n"
    results = run(tmp_path, SEED_POLICY, [
        call("lookup_order", {}),
        call("send_email", {}),
    ], suite=suite)
    assert found(results) == [("args_valid/unknown_tool", None, "agent-eval.yaml", 7, 5, 1)]


# ----------------------------------------------------------------------- tool names
def test_normalized_matching(tmp_path: Path) -> None:
    results = run(tmp_path, SEED_POLICY, [
        call("Apply-Discount", {"percent": 40}),
        call("APPLY_DISCOUNT", {"percent": 31}),
        call("Admin-Unlock", {"reason": "x"}),
    ])
    assert found(results) == [
        ("args_valid/maximum", "percent", "policy.yaml", 6, 39, 1),
        ("args_valid/maximum", "percent", "policy.yaml", 6, 39, 2),
        ("args_valid/min_length", "reason", "policy.yaml", 17, 40, 3),
    ]
    # the report shows the name as called
    assert [f.tool for f in sorted(results.violations, key=lambda f: f.trace.line
                                   if f.trace else 0)] == [
        "Apply-Discount", "APPLY_DISCOUNT", "Admin-Unlock"]


def test_exact_matching(tmp_path: Path) -> None:
    suite = "tool_match: exact\n" + SUITE
    lines = [call("Apply-Discount", {"percent": 40}), call("apply_discount", {"percent": 40})]
    assert found(run(tmp_path, SEED_POLICY, lines, suite=suite)) == [
        ("args_valid/maximum", "percent", "policy.yaml", 6, 39, 2),
    ]
    strict = "tool_match: exact\n" + STRICT_SUITE
    # one line added above: the strict line is line 8 now
    assert found(run(tmp_path, SEED_POLICY, lines[:1], suite=strict)) == [
        ("args_valid/unknown_tool", None, "agent-eval.yaml", 8, 5, 1),
    ]


# ------------------------------------------------------------------ argument decoding
def test_arguments_as_json_string_and_double_encoded(tmp_path: Path) -> None:
    once = json.dumps({"percent": 50})
    twice = json.dumps(once)
    results = run(tmp_path, SEED_POLICY, [
        call("apply_discount", once),
        call("apply_discount", twice),
    ])
    assert found(results) == [
        ("args_valid/maximum", "percent", "policy.yaml", 6, 39, 1),
        ("args_valid/maximum", "percent", "policy.yaml", 6, 39, 2),
    ]
    assert [f.value for f in results.violations] == [50, 50]


@pytest.mark.parametrize("arguments", [
    ["A-104233", 25.0],
    "percent=50",
    "[1, 2]",
    "null",
    7,
    True,
])
def test_not_an_object_is_one_finding_at_the_tool_key(tmp_path: Path, arguments: Any) -> None:
    policy = """\
        version: "1"
        tools:
          "apply_*":
            arguments: {percent: {max: 30, required: true}}
          apply_discount:
            arguments: {code: {type: string, required: true}}
        """
    results = run(tmp_path, policy, [call("apply_discount", arguments)])
    # one finding although two keys match, at the first key's line: line 3, col 3
    (f,) = results.violations
    assert at(f) == ("args_valid/not_an_object", None, "policy.yaml", 3, 3, 1)
    assert f.tool == "apply_discount"
    assert f.value == arguments
    assert f.constraint == "apply_*: …"


def test_null_arguments_are_an_empty_object(tmp_path: Path) -> None:
    # `"arguments": null` (and no arguments at all) read as {}: required ones are missing
    lines = ['{"type":"tool_call","tool":"apply_discount","arguments":null}',
             '{"type":"tool_call","tool":"apply_discount"}']
    assert found(run(tmp_path, SEED_POLICY, lines)) == [
        ("args_valid/required", "percent", "policy.yaml", 6, 48, 1),
        ("args_valid/required", "percent", "policy.yaml", 6, 48, 2),
    ]


# ---------------------------------------------------------------------- nested paths
def test_nested_argument_paths(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          ship:
            arguments:
              address:
                type: object
                properties:
                  zip: {type: string, pattern: "^[0-9]{5}$"}
              items:
                type: array
                items: {type: object, properties: {qty: {type: integer, min: 1}}}
              tags: {type: array, items: {type: string}}
        """
    # line 8: 'zip' col 11, 'type' col 17, 'pattern' col 31
    # line 11: 'items' col 9, 'type' col 17, 'properties' col 31, 'qty' col 44,
    #          'type' col 50, 'min' col 65
    # line 12: 'tags' col 7, 'type' col 14, 'items' col 27, 'type' col 35
    results = run(tmp_path, policy, [
        "",
        call("ship", {"address": {"zip": "1234"},
                      "items": [{"qty": 1}, {"qty": 2}, {"qty": 0}],
                      "tags": ["a", "b", 3]}),
    ])
    assert found(results) == [
        ("args_valid/pattern", "address.zip", "policy.yaml", 8, 31, 2),
        ("args_valid/minimum", "items[2].qty", "policy.yaml", 11, 65, 2),
        ("args_valid/type", "tags[2]", "policy.yaml", 12, 35, 2),
    ]
    values = {f.argument: (f.value, f.constraint) for f in results.violations}
    # the pattern holds { }, YAML flow indicators: shown quoted, as it must be written
    assert values == {"address.zip": ("1234", "pattern: '^[0-9]{5}$'"),
                      "items[2].qty": (0, "min: 1"), "tags[2]": (3, "type: string")}


# ------------------------------------------------------------------------- severity
def test_severity_warning_gives_verdict_warn(tmp_path: Path) -> None:
    suite = SUITE + "    severity: warning\n"
    results = run(tmp_path, SEED_POLICY, [call("apply_discount", {"percent": 50})], suite=suite)
    (f,) = results.violations
    assert f.severity == "warning"
    assert results.tests[0].status == "warn"
    assert results.verdict == "warn"


def test_severity_note_does_not_warn(tmp_path: Path) -> None:
    suite = SUITE + "    severity: note\n"
    results = run(tmp_path, SEED_POLICY, [call("apply_discount", {"percent": 50})], suite=suite)
    assert [f.severity for f in results.violations] == ["note"]
    assert results.verdict == "pass"


# ------------------------------------------------------------------ policy mistakes
def test_policy_keyword_typo_is_a_config_error(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          apply_discount:
            arguments:
              percent: {type: number, maxium: 30}
        """
    # line 5: '{' col 16, 'type' col 17, 'maxium' col 31
    with pytest.raises(ConfigError) as info:
        run(tmp_path, policy, [call("apply_discount", {"percent": 50})])
    assert info.value.problems == [
        "policy.yaml:5:31: unknown schema keyword 'maxium' (did you mean 'maximum'?)"]


def test_policy_max_must_be_a_number(tmp_path: Path) -> None:
    policy = """\
        version: "1"
        tools:
          apply_discount:
            arguments:
              percent: {max: "30"}
        """
    # line 5: '{' col 16, 'max' col 17
    with pytest.raises(ConfigError) as info:
        run(tmp_path, policy, [])
    assert info.value.problems == ["policy.yaml:5:17: 'max' must be a number"]


def test_policies_are_compiled_once_per_suite(tmp_path: Path) -> None:
    suite = SUITE + "  - id: args_again\n    metric: args_valid\n    policy: ./policy.yaml\n"
    (tmp_path / "agent-eval.yaml").write_text(textwrap.dedent(suite), encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(textwrap.dedent(SEED_POLICY), encoding="utf-8")
    loaded = load_suite(tmp_path / "agent-eval.yaml")
    assert len(loaded.policies) == 1
    assert all(isinstance(p, Policy) for p in loaded.policies.values())


def test_a_long_value_is_cut_at_max_value_chars_saying_how_much(tmp_path: Path) -> None:
    """docs/security.md "Limits": a finding's value longer than `max_value_chars` is shown
    cut, with a `…[+N chars]` marker. args_valid cut every value at 1,000 characters of
    its JSON text first, whatever the limit: a 1,500-character argument was cut under
    the default 2,000 and under `max_value_chars: 5000`, with a bare `…`, and under
    `max_value_chars: 100` the marker said `+901` where 1,400 characters were cut."""
    policy = "tools:\n  t: {arguments: {x: {max_length: 3}}}\n"
    line = call("t", {"x": "y" * 1500})

    def value(limit: int | None) -> Any:
        limits = f"limits: {{max_value_chars: {limit}}}\n" if limit else ""
        results = run(tmp_path, policy, [line], SUITE + limits)
        [f] = results.violations
        assert f.rule == "args_valid/max_length"
        return f.value

    assert value(None) == "y" * 1500  # within the default 2,000: whole
    assert value(5000) == "y" * 1500
    assert value(100) == "y" * 100 + "…[+1400 chars]"  # 1,500 - 100 cut


def test_a_list_of_more_items_than_max_value_chars_is_cut_saying_how_much(
        tmp_path: Path) -> None:
    """The same for a list of 3,000 numbers (only its first items are written out):
    its text `[1,1,…,1]` is 1 + 3,000 + 2,999 commas + 1 = 6,001 characters, of which
    the first 100 are shown: `[`, 49 times `1,`, then `1`."""
    policy = "tools:\n  t: {arguments: {x: {type: number}}}\n"
    suite = SUITE + "limits: {max_value_chars: 100}\n"
    [f] = run(tmp_path, policy, [call("t", {"x": [1] * 3000})], suite).violations
    assert f.rule == "args_valid/type"
    assert f.value == "[" + "1," * 49 + "1" + "…[+5901 chars]"
