"""RE2 for patterns from configs: ECMA-262 semantics, linear time, and the constructs it
refuses (docs/security.md)."""

from __future__ import annotations

import pickle
import re
import time
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.saferegex import (
    RegexError,
    compile_ecma,
    compile_python,
    jsonschema_validator,
    schema_patterns,
)


@pytest.mark.parametrize(("pattern", "valid", "invalid"), [
    (r"^\u2028$", ["\u2028"], ["u2028", ""]),  # \uXXXX escapes
    (r"^\u{1F600}$", ["\U0001F600"], ["x"]),  # \u{…} escapes
    (r"^a\cJb$", ["a\nb"], ["acJb"]),  # \cJ is a line feed
    # ECMA "." is no line terminator: \n, \r, U+2028, U+2029 (Python's is only not \n)
    (r"^a.b$", ["a b", "a\u00e9b", "a\u0085b"], ["a\nb", "a\rb", "a\u2028b", "a\u2029b"]),
    (r"^[.]$", ["."], ["a"]),  # a dot in a class is a dot
    (r"^ls$", ["ls"], ["ls\n"]),  # "$" is the very end
    (r"^\d+$", ["123"], ["١٢٣"]),  # ASCII digits
    # \S in a class is ECMA's too: RE2's own \S took \v, U+00A0, U+2028, U+3000, U+FEFF
    (r"^[\S ]+$", ["rm -rf", "a\u00e9"],
     ["a\u00a0b", "a\x0bb", "a\u2028b", "a\u3000b", "a\ufeffb", "a\tb", "a\nb"]),
    (r"^[^\S\n]$", [" ", "\u00a0", "\t", "\u2028"], ["\n", "a"]),  # whitespace but \n
])
def test_ecma_semantics(pattern: str, valid: list[str], invalid: list[str]) -> None:
    rx = compile_ecma(pattern)
    for s in valid:
        assert rx.search(s), (pattern, s)
    for s in invalid:
        assert rx.search(s) is None, (pattern, s)


def test_not_space_in_a_class_is_the_complement_of_ecma_whitespace() -> None:
    r"""``[\S]`` takes a character exactly when ``\s`` does not, for every code point of
    the BMP (but the surrogates, which UTF-8 cannot hold) and the ends of the astral
    planes."""
    space, not_space = compile_ecma(r"^\s$"), compile_ecma(r"^[\S]$")
    points = [*range(0xD800), *range(0xE000, 0x10000), 0x10000, 0x1F600, 0x10FFFF]
    for cp in points:
        ch = chr(cp)
        assert (not_space.search(ch) is None) == (space.search(ch) is not None), hex(cp)
    # ECMA-262's WhiteSpace and LineTerminator, the Zs category among them
    assert sum(space.search(chr(cp)) is not None for cp in points) == 25


@pytest.mark.parametrize("pattern", [r"^(a+)+$", r"^(a|a)*$", r"^(a|aa)+$", r"(x+x+)+y",
                                     r"^(\w+\s?)*$", r"\s*,\s*x"])
def test_catastrophic_patterns_run_in_linear_time(pattern: str) -> None:
    rx = compile_ecma(pattern)
    for n in (35, 100_000):
        text = "a" * n + "!" if "x" not in pattern else "x" * n
        start = time.monotonic()
        rx.search(text)
        assert time.monotonic() - start < 1.0, (pattern, n)


def test_the_same_text_hangs_pythons_engine() -> None:
    """What the RE2 tests guard against (a sanity check of the attack itself)."""
    with pytest.raises(TimeoutError):
        _python_search_with_alarm(r"^(a+)+$", "a" * 35 + "!", seconds=1)


def _python_search_with_alarm(pattern: str, text: str, seconds: int) -> None:
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        re.search(pattern, text)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("pattern", ["(?=a)b", "(?!a)b", "(?<=a)b", "(?<!a)b", r"(a)\1"])
def test_backtracking_constructs_are_refused_with_the_reason(pattern: str) -> None:
    with pytest.raises(RegexError, match="linear time"):
        compile_ecma(pattern)


@pytest.mark.parametrize("pattern", ["(unclosed", "[a-", "a{1001}"])
def test_invalid_patterns(pattern: str) -> None:
    with pytest.raises(RegexError):
        compile_ecma(pattern)


def test_python_syntax_for_scenario_regexes() -> None:
    assert compile_python(r"(?P<id>INV-\d+)\Z").search("see INV-2024")
    assert compile_python(r"INV-\d+\Z").search("INV-1 and more") is None
    assert compile_python(r"(?i)refund").search("REFUND issued")


def test_a_compiled_pattern_pickles() -> None:
    rx = pickle.loads(pickle.dumps(compile_ecma(r"^[a-z]+$")))
    assert rx.search("abc") and rx.search("ABC") is None and rx.pattern == r"^[a-z]+$"


def test_lone_surrogates_do_not_crash() -> None:
    assert compile_ecma("a").search("\ud800a")


# ---------------------------------------------------------------- JSON Schema files
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}},
    "patternProperties": {"^x_": {"type": "integer"}},
    "additionalProperties": False,
    "propertyNames": {"pattern": "^[a-z_]+$"},
}


def validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.Draft202012Validator
    return jsonschema_validator(cls, schema, {p: compile_ecma(p)
                                              for p in schema_patterns(schema)})


def test_schema_patterns_are_found() -> None:
    assert sorted(schema_patterns(SCHEMA)) == ["^[A-Z]+-[0-9]+$", "^[a-z_]+$", "^x_"]


KEYS = st.sampled_from(["id", "x_a", "x_b", "y", "Bad", "x_"])
VALUES = st.one_of(st.integers(-3, 3), st.sampled_from(["AB-1", "ab-1", "AB-", "x"]))


@settings(max_examples=200, deadline=None)
@given(instance=st.dictionaries(KEYS, VALUES, max_size=4))
def test_verdicts_agree_with_jsonschema_on_safe_patterns(instance: dict[str, Any]) -> None:
    ours = validator(SCHEMA)
    theirs = jsonschema.Draft202012Validator(SCHEMA)
    assert ours.is_valid(instance) == theirs.is_valid(instance)


def test_a_catastrophic_pattern_in_a_json_schema_is_linear() -> None:
    v = validator({"type": "object", "properties": {"a": {"pattern": "^(a+)+$"}},
                   "patternProperties": {"^(b+)+$": {}}, "additionalProperties": False})
    start = time.monotonic()
    assert not v.is_valid({"a": "a" * 100_000 + "!"})
    assert not v.is_valid({"b" * 100_000 + "!": 1})
    assert time.monotonic() - start < 2


@pytest.mark.parametrize("ref", ["file:///etc/hostname", "http://127.0.0.1:9/s.json"])
def test_a_json_schema_validator_fetches_no_reference(ref: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema's default registry retrieves http(s):// and file:// references (reading
    the network, and files outside the repository into a finding's message); the validator
    resolves the schema's own references and the meta-schemas only. (A reference that
    resolves to nothing is a config error when the schema is loaded: config/schema_files.)"""
    import urllib.request

    from referencing.exceptions import Unresolvable

    opened: list[Any] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: opened.append(a))
    v = validator({"properties": {"a": {"$ref": ref}}})
    with pytest.raises(Unresolvable):
        v.is_valid({"a": 1})
    assert opened == []
    meta = validator({"$ref": "https://json-schema.org/draft/2020-12/schema"})
    assert meta.is_valid({"type": "string"}) and not meta.is_valid({"type": 5})


def test_a_pattern_may_take_1_mib_of_re2_memory() -> None:
    """RE2's default (8 MiB) let one pattern take 0.3 s and ~4 MB to compile: 300 of them
    took 77 s. `.{1000}` (a class of four ranges, a thousand times) still compiles; three
    times over does not, and the error says what to do."""
    from agent_eval.saferegex import PATTERN_MAX_MEM

    assert PATTERN_MAX_MEM == 1024 * 1024
    assert compile_ecma("^.{1000}$").search("é" * 1000)
    with pytest.raises(RegexError) as exc:
        compile_ecma("x" + ".{1000}" * 3)
    assert str(exc.value) == ("pattern too large - compile failed (a pattern may take 1024 "
                              "KiB of RE2 memory); use smaller repetition counts (a length "
                              "is maxLength's to check)")


def test_a_suites_patterns_share_one_budget() -> None:
    """While a suite loads, its distinct patterns compile to at most 1,000,000 instructions
    together, each counting at least 1,000: a thousand small ones fit, the next does not;
    a pattern seen before is compiled once and counts once."""
    from agent_eval.saferegex import regex_budget

    with regex_budget():
        for i in range(1000):
            assert compile_ecma(f"^a{i}$").search(f"a{i}")
        for _ in range(3000):  # repeats are free (and share their program)
            assert compile_ecma("^a7$").search("a7")
        with pytest.raises(RegexError, match="more than 1,000,000 instructions together"):
            compile_ecma("^b$")
        with pytest.raises(RegexError, match="the patterns before this one"):
            compile_ecma("^c$")  # spent: not even compiled
        assert compile_ecma("^a999$").search("a999")  # one it already has
    assert compile_ecma("^b$").search("b")  # outside a suite's loading: no budget


def test_patterns_too_large_spend_the_budget_without_compiling_the_rest() -> None:
    """A policy of 300 patterns too large (each failing after ~5 ms of compiling) stops
    compiling them after 21: each counts 50,000, and the budget is spent once more than
    1,000,000 is counted (20 make exactly 1,000,000)."""
    from agent_eval.saferegex import regex_budget

    with regex_budget():
        messages = []
        for i in range(300):
            with pytest.raises(RegexError) as exc:
                compile_ecma(f"x{i}" + ".{1000}" * 21)
            messages.append(str(exc.value))
    assert all(m.startswith("pattern too large") for m in messages[:21])
    assert all("the patterns before this one" in m for m in messages[21:])
