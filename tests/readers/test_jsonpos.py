"""container_lines: the line where every object/array of a JSON document starts."""

from __future__ import annotations

import json

from agent_eval.readers.jsonpos import container_lines, string_members, value_lines


def check(text: str, expected: dict[tuple[str | int, ...], int]) -> None:
    json.loads(text)  # the fixture is valid JSON
    assert container_lines(text) == expected


def test_nested_with_tricky_strings() -> None:
    text = (
        "{\n"                                   # 1
        '  "a": [1, "x]", {"b": "c,d"},\n'      # 2
        "    [\n"                               # 3
        '      {"e": "q\\"[{"}\n'               # 4  (the string is q"[{ )
        "    ]],\n"                             # 5
        '  "k:": {"z": []},\n'                  # 6
        '  "esc\\\\": [{}, {\n'                 # 7  (the key is esc\ )
        '    "n": 1}]\n'                        # 8
        "}\n"                                   # 9
    )
    check(text, {
        (): 1,
        ("a",): 2,
        ("a", 2): 2,
        ("a", 3): 3,
        ("a", 3, 0): 4,
        ("k:",): 6,
        ("k:", "z"): 6,
        ("esc\\",): 7,
        ("esc\\", 0): 7,
        ("esc\\", 1): 7,
    })


def test_array_of_pretty_printed_events() -> None:
    text = (
        "[\n"                                         # 1
        "  {\n"                                       # 2
        '    "type": "tool_call",\n'                  # 3
        '    "tool": "a",\n'                          # 4
        '    "arguments": {"s": "}, {", "t": "]"}\n'  # 5
        "  },\n"                                      # 6
        '  "not an object, [x]",\n'                   # 7
        "  7,\n"                                      # 8
        '  {"type": "tool_call", "tool": "b",\n'      # 9
        '   "arguments": {"list": [[1, 2], [3]]}},\n'  # 10
        "  [],\n"                                     # 11
        "  {}\n"                                      # 12
        "]\n"                                         # 13
    )
    check(text, {
        (): 1,
        (0,): 2,
        (0, "arguments"): 5,
        (3,): 9,
        (3, "arguments"): 10,
        (3, "arguments", "list"): 10,
        (3, "arguments", "list", 0): 10,
        (3, "arguments", "list", 1): 10,
        (4,): 11,
        (5,): 12,
    })


def test_events_object() -> None:
    text = (
        '{"meta": {"colon": "a:b", "quote": "\\"", "slash": "\\\\"},\n'  # 1
        ' "events":\n'                                                  # 2
        "  [\n"                                                         # 3
        '    {"type": "trace_start", "trace_id": "t"},\n'               # 4
        "\n"                                                            # 5
        '    {"type": "tool_call",\n'                                   # 6
        '     "tool": "x"}\n'                                           # 7
        "  ]\n"                                                         # 8
        "}"                                                             # 9
    )
    check(text, {
        (): 1,
        ("meta",): 1,
        ("events",): 3,
        ("events", 0): 4,
        ("events", 1): 6,
    })


def test_unicode_escaped_keys_and_crlf() -> None:
    text = '{\r\n"\\u0041": [\r\n{"\\u00e9\\n": {}}\r\n]\r\n}'
    check(text, {(): 1, ("A",): 2, ("A", 0): 3, ("A", 0, "é\n"): 3})


def test_non_ascii_text_and_empty_containers() -> None:
    text = '[\n"ünï [{", {"ключ": [\n]}, []]'
    check(text, {(): 1, (1,): 2, (1, "ключ"): 2, (2,): 3})


def test_scalar_document() -> None:
    check('"just [a] string"', {})
    check("42", {})


def test_value_lines_locates_scalars_too() -> None:
    text = (
        "[\n"                                   # 1
        "  5,\n"                                # 2
        '  "s, [x]",\n'                         # 3
        "  {\"a\": -1.5e3, \"b\":\n"            # 4
        "     null, \"c\": [true,\n"            # 5
        "  false]},\n"                          # 6
        "  [\n"                                 # 7
        "  ]\n"                                 # 8
        "]\n"                                   # 9
    )
    json.loads(text)
    assert value_lines(text) == {
        (): 1,
        (0,): 2,
        (1,): 3,
        (2,): 4,
        (2, "a"): 4,
        (2, "b"): 5,
        (2, "c"): 5,
        (2, "c", 0): 5,
        (2, "c", 1): 6,
        (3,): 7,
    }
    # on containers it agrees with container_lines
    containers = container_lines(text)
    assert {p: n for p, n in value_lines(text).items() if p in containers} == containers


def test_value_lines_top_level_scalar() -> None:
    assert value_lines('\n\n"x"') == {(): 3}


def test_string_members_by_path() -> None:
    text = (
        '{"type": "outer", "events": [\n'                                  # 1
        '  {"type": "tool_call", "x": {"type": "nested"}},\n'              # 2
        '  {"kind": "a", "type": 5},\n'                                     # 3
        '  {"q": "\\"type\\": \\"fake\\"", "type": "tool_result"}\n'        # 4
        "]}"
    )
    json.loads(text)
    assert list(string_members(text, "type")) == [
        ((), "outer"),
        (("events", 0), "tool_call"),
        (("events", 0, "x"), "nested"),
        (("events", 2), "tool_result"),
    ]


def test_string_members_on_a_prefix() -> None:
    # a document cut off in the middle (as a reader's sniffing head is)
    text = '[{"type": "trace_start"}, {"tool": "a", "type": "tool_call", "arguments": {"x": "'
    assert list(string_members(text, "type")) == [((0,), "trace_start"), ((1,), "tool_call")]
