"""The VCR cassette parser shared by the Anthropic and OpenAI readers (readers/cassette.py):
every line comes from the YAML parser. Expected lines are counted by hand in the texts
below."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import pytest

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT
from agent_eval.readers import SourceFile
from agent_eval.readers.cassette import BodyError, Cassette, body_text, read_cassette

TEXT = """\
# recorded by vcrpy
interactions:
- request:
    body: '{"model": "m", "messages": []}'
    uri: https://api.example.com/v1/messages
  response:
    status: {code: 200}
    body:
      string: '{"id": "r1"}'
- response:
    body: {string: 'ünïcödé then {"id": "r2"}'}
  request:
    uri: https://api.example.com/v1/models
- just a string
version: 1
"""


def _read(tmp_path: Path, text: str) -> Cassette | InputError:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return read_cassette(SourceFile(str(path), "c.yaml", "c.yaml"))


def test_lines_of_interactions_parts_and_bodies(tmp_path: Path) -> None:
    cassette = _read(tmp_path, TEXT)
    assert isinstance(cassette, Cassette)
    first, second, third = cassette.interactions
    assert (first.line, first.parts) == (3, {"request": 3, "response": 6})
    assert (first.bodies["request"].line, first.bodies["response"].line) == (4, 9)
    # the response comes first in the second interaction: each key has its own line
    assert (second.line, second.parts) == (10, {"response": 10, "request": 12})
    assert "request" not in second.bodies and second.bodies["response"].line == 11
    assert (third.line, third.value, third.parts, third.bodies) == (14, "just a string", {}, {})
    assert first.value["request"]["uri"] == "https://api.example.com/v1/messages"


def test_body_offsets_are_characters_of_the_text(tmp_path: Path) -> None:
    cassette = _read(tmp_path, TEXT)
    assert isinstance(cassette, Cassette)
    body = cassette.interactions[1].bodies["response"]
    found = cassette.text.find('"r2"', body.start, body.end)
    assert found > 0 and cassette.line_at(found) == 11  # after non-ASCII characters
    assert cassette.text[body.start] == "{" and cassette.text[body.end - 1] == "}"
    assert (cassette.line_at(0), cassette.line_at(len("# recorded by vcrpy\n"))) == (1, 2)


def test_what_is_not_a_cassette(tmp_path: Path) -> None:
    err = _read(tmp_path, "interactions:\n- request: {\n")
    assert isinstance(err, InputError) and err.rule == "input/parse_error"
    assert err.line == 3 and err.message.startswith("the cassette is not valid YAML (")
    for text in ("interactions: 3\n", "- a\n- b\n", ""):
        err = _read(tmp_path, text)
        assert isinstance(err, InputError), text
        assert (err.rule, err.line, err.message) == (
            "input/invalid_event", 1, "a VCR cassette needs an 'interactions:' list")


def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 8)]
    err = _read(tmp_path, "\n".join(lines) + "\ninteractions: []\n")
    assert isinstance(err, InputError) and err.rule == "input/limit_exceeded"
    assert "limits.max_alias_nodes" in err.message


def test_aliases_of_one_long_body_are_refused_by_what_they_repeat(tmp_path: Path) -> None:
    """One 300 KB body aliased by every interaction: few aliased values, but each is a
    body to read. What aliases repeat may be as long as the file (1 MiB for a smaller
    one): the fourth *b (1.2 MB) is over, on its line."""
    body = '{"id": "r", "pad": "' + "x" * 300_000 + '"}'
    item = "- request: {{body: '{{}}', uri: 'https://api.openai.com/v1/chat/completions'}}\n" \
           "  response:\n    body: {{string: {}}}\n"
    text = ("interactions:\n" + item.format("&b '" + body + "'")
            + "".join(item.format("*b") for _ in range(5)))
    assert len(text) < 310_000
    err = _read(tmp_path, text)
    assert isinstance(err, InputError) and err.rule == "input/limit_exceeded"
    # each interaction is 3 lines from line 2; the fourth alias is in the fifth one's
    # response body (line 2 + 4 * 3 + 2)
    assert err.line == 16
    assert err.message.startswith("YAML aliases repeat more than 1048576 characters")
    three = ("interactions:\n" + item.format("&b '" + body + "'")
             + "".join(item.format("*b") for _ in range(3)))
    cassette = _read(tmp_path, three)
    assert isinstance(cassette, Cassette) and len(cassette.interactions) == 4


def test_an_unreadable_file(tmp_path: Path) -> None:
    err = read_cassette(SourceFile(str(tmp_path / "missing.yaml"), "missing.yaml", "m"))
    assert isinstance(err, InputError) and (err.rule, err.line) == ("input/unreadable_file", 0)


# ------------------------------------------------- bodies recorded as bytes (!!binary)
def test_a_gzip_body_is_decompressed_member_after_member() -> None:
    assert body_text(b"caf\xc3\xa9 \xff", DEFAULT) == "café \ufffd"  # not gzip: UTF-8
    assert body_text(gzip.compress(b'{"a": ') + gzip.compress(b"1}"), DEFAULT) == '{"a": 1}'


def test_a_gzip_body_cut_corrupt_or_too_large_is_a_body_error() -> None:
    data = gzip.compress(b'{"id": "msg_1"}' * 50)
    with pytest.raises(BodyError) as cut:
        body_text(data[:-10], DEFAULT)  # gzip.decompress: EOFError, which was uncaught
    assert (cut.value.rule.id, cut.value.message) == (
        "input/parse_error", "is gzip data cut off before its end; record the cassette again")
    with pytest.raises(BodyError) as bad:
        body_text(data[:10] + b"\xff" * 20 + data[30:], DEFAULT)  # zlib.error: uncaught
    assert bad.value.rule.id == "input/parse_error"
    assert bad.value.message.startswith("is gzip data that cannot be decompressed (Error -3")
    # a bomb: 4 MB of zeros is 4 KB of gzip; never decompressed past max_file_bytes
    bomb = gzip.compress(bytes(4 << 20))
    assert len(bomb) < 10_000
    with pytest.raises(BodyError) as big:
        body_text(bomb, replace(DEFAULT, max_file_bytes=1 << 20))
    assert (big.value.rule.id, big.value.message) == (
        "input/limit_exceeded",
        f"decompresses to more than {1 << 20} bytes (limits.max_file_bytes)")


def test_a_value_yaml_cannot_build_is_a_parse_error_at_its_line(tmp_path: Path) -> None:
    """``recorded_at: 2001-02-30`` made datetime raise ValueError: the reader stopped."""
    error = _read(tmp_path, TEXT.replace("    status: {code: 200}\n",
                                         "    status: {code: 200}\n    at: 2001-02-30\n"))
    assert isinstance(error, InputError)
    assert (error.rule, error.line) == ("input/parse_error", 8)  # the line of "at:"
    assert error.message.startswith("the cassette is not valid YAML (day is out of range for "
                                    "month; quote the value to keep it as text")
