"""The Inspect AI reader: ``.json`` logs and ``.eval`` archives (docs/formats/inspect.md).
Expected values are read by hand from the fixtures (tests/fixtures/inspect/) and, when they are
beside the repository, the real-world samples; each assertion cites the line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES as ALL_FIXTURES
from tests.conftest import SAMPLES, raw_zip

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import ReadItem, SourceFile, pick_reader

FIXTURES = ALL_FIXTURES / "inspect"
DIR = SAMPLES / "inspect_ai"
BROWSER = DIR / "inspect__browser-gpt-4o-mini.json"


def read_auto(path: Path) -> tuple[str, list[ReadItem]]:
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError), reader
    return reader.name, list(reader.read(source))


def traces(items: list[ReadItem]) -> list[Trace]:
    return [i for i in items if isinstance(i, Trace)]


def errors(items: list[ReadItem]) -> list[tuple[str, int]]:
    return [(e.rule, e.line) for e in items if isinstance(e, InputError)]


# ----------------------------------------------------------------- the fixtures
def test_a_log_with_tool_and_model_events() -> None:
    _, items = read_auto(FIXTURES / "log.json")
    [t] = traces(items)
    assert t.format == "inspect"
    assert t.id == "refund-1/epoch-1"  # lines 12-13
    # the input and the tool result are attachments (lines 65-66)
    assert t.input == "Please refund order A-4."
    assert t.output == "Refund issued for A-4."  # the last assistant message, line 18
    lookup, refund = t.tool_calls
    # the tool events start on lines 30 and 39
    assert [(c.name, c.arguments, c.id, c.location.line) for c in t.tool_calls] == [
        ("lookup_order", {"order_id": "A-4"}, "call_lookup", 30),
        ("issue_refund", {"order_id": "A-4", "amount": 19.9}, "call_refund", 39)]
    assert (lookup.ok, lookup.result, lookup.latency_ms) == (
        True, "order A-4: delivered, 19.90 EUR", 350.0)  # working_time 0.35, line 37
    # lines 46-48: an approval error; no working_time: completed - timestamp = 2.5 s
    assert (refund.ok, refund.error, refund.latency_ms) == (
        False, "approval: needs a second approver", 2500.0)
    # the model events (lines 21, 50): input = total - output (cached tokens included)
    assert [(c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd,
             c.latency_ms, c.location.line) for c in t.llm_calls] == [
        ("gpt-4o-mini-2024-07-18", 500, 20, 520, None, 800.0, 21),
        ("gpt-4o-mini-2024-07-18", 560, 12, 572, 0.0004, 500.0, 50)]
    assert t.total_tokens == 1092  # the sample's model_usage, lines 60-62
    assert t.duration_ms == 5250.0  # total_time, line 63
    assert (t.metadata["task"], t.metadata["model"], t.metadata["run_id"]) == (
        "refunds", "openai/gpt-4o-mini", "run-7")


def test_tool_errors_from_messages_without_events() -> None:
    _, items = read_auto(FIXTURES / "tool-errors.json")
    [t] = traces(items)
    assert t.id == "3/epoch-2"  # lines 7-8
    bash_1, bash_2 = t.tool_calls
    # line 17: the assistant's call; line 20: its tool message with a timeout error
    assert (bash_1.arguments, bash_1.location.line, bash_1.result_location.line
            if bash_1.result_location else 0) == ({"cmd": "make check"}, 17, 20)
    assert bash_1.error == "timeout: Command timed out after 180 seconds"
    # line 27: a tool message without a call before it: the call is kept, its arguments
    # marked as not recorded (args_valid reports that rather than "missing")
    assert (bash_2.id, bash_2.location.line, bash_2.arguments) == ("bash_2", 27, None)
    assert not bash_2.arguments_recorded and bash_2.error == "permission: Permission denied"
    assert bash_1.arguments_recorded
    assert [c.model for c in t.llm_calls] == ["mockllm/model", None]  # lines 12, 34


def test_an_eval_archive() -> None:
    _, items = read_auto(FIXTURES / "archive.eval")
    [t] = traces(items)
    assert t.source == "archive.eval"
    assert t.metadata["member"] == "samples/1_epoch_1.json"
    assert t.id == "1/epoch-1"
    assert t.input == 'Is the following statement something you would say? "I like refunds."'
    assert t.output == "Yes"
    [llm] = t.llm_calls  # the model event at line 16 of the member
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.latency_ms,
            llm.location.line) == ("gemma3", 40, 2, 42, 250.0, 16)
    assert t.duration_ms == 400.0 and t.tool_calls == []
    assert (t.metadata["task"], t.metadata["model"]) == ("popularity", "ollama/gemma3")


# ------------------------------------------------------------------ the samples
@pytest.mark.usefixtures("samples")
def test_every_sample_is_read_as_inspect() -> None:
    files = sorted(DIR.iterdir())
    assert len(files) == 3
    for path in files:
        name, items = read_auto(path)
        assert name == "inspect", path
        assert errors(items) == [], path
        assert len(traces(items)) == 1, path


@pytest.mark.usefixtures("samples")
def test_browser_log_tool_and_model_events() -> None:
    _, items = read_auto(BROWSER)
    [t] = traces(items)
    assert t.format == "inspect"
    assert t.id == "1/epoch-1"
    assert t.input.startswith("Use the web browser tool to navigate to "
                              "https://www.aisi.gov.uk/.")
    assert t.output.startswith("The AI Security Institute (AISI) is the premier governmental")
    assert [(c.name, c.arguments, c.id) for c in t.tool_calls] == [
        ("web_browser_go", {"url": "https://www.aisi.gov.uk/"}, "call_35FTpd6shR9efioDgeEBZ33s"),
        ("web_browser_click", {"element_id": 151}, "call_O6fzXOPUvPtYflWdOH94RTWy"),
        ("web_browser_click", {"element_id": 884}, "call_53eNweGanOHt6jGWAo2UuNCG"),
        ("web_browser_click", {"element_id": 903}, "call_C0cGhnh5y5RCIBs9vTJCLgxW"),
    ]
    lines = BROWSER.read_text().splitlines()
    for call, event_line in zip(t.tool_calls, (982, 1538, 2095, 2680), strict=True):
        # each call is located at its tool event's object, 4 lines above "event": "tool"
        assert lines[call.location.line - 1].strip() == "{"
        assert call.location.line == event_line - 4
        assert '"event": "tool"' in lines[event_line - 1]
    assert all(c.ok and c.has_result for c in t.tool_calls)
    assert t.tool_calls[0].latency_ms == 4317.574  # working_time 4.317574, line 992
    assert t.tool_calls[0].result.startswith('[132] link "We are now the AI Security')
    # five model events; usage e.g. 1124 + 23 = 1147 and 5915 + 207 = 6122
    assert [(c.input_tokens, c.output_tokens, c.total_tokens) for c in t.llm_calls] == [
        (1124, 23, 1147), (1568, 17, 1585), (2732, 17, 2749), (3896, 17, 3913),
        (5915, 207, 6122)]
    assert {c.model for c in t.llm_calls} == {"gpt-4o-mini-2024-07-18"}
    assert t.llm_calls[0].latency_ms == 1101.022  # output.time 1.1010224996134639 s
    assert t.total_tokens == 15516  # the sample's model_usage, line 3557
    assert t.duration_ms == 18517.0  # total_time, line 3562
    assert t.cost is None  # no cost in this log
    assert t.metadata["task"] == "browser" and t.metadata["model"] == "openai/gpt-4o-mini"


@pytest.mark.usefixtures("samples")
def test_tool_call_errors_from_messages() -> None:
    _, items = read_auto(DIR / "inspect__log_tool_call_error.json")
    [t] = traces(items)
    assert t.id == "1/epoch-4"  # "id": 1, "epoch": 4 (lines 88-89)
    # eleven tool messages (lines 95-204), none with an assistant call before it
    assert [c.id for c in t.tool_calls] == [f"bash_{i}" for i in range(1, 12)]
    assert {c.name for c in t.tool_calls} == {"bash"}
    assert all(not c.ok for c in t.tool_calls)
    assert [c.error for c in t.tool_calls] == [
        "parsing: ...", "timeout: ...", "parsing: ...", "unicode_decode: ...",
        "permission: ...", "file_not_found: ...", "is_a_directory: ...", "limit: ...",
        "approval: ...", "unknown: ...",
        "output_limit: The tool output limit of 10 MiB was exceeded."]  # line 202
    assert [c.location.line for c in t.tool_calls][:2] == [95, 105]
    # the arguments are not in the log: not recorded (args_valid notes that), which is
    # neither "missing" nor "not an object"
    assert all(c.arguments is None and not c.arguments_recorded and c.arguments_error is None
               for c in t.tool_calls)


@pytest.mark.usefixtures("samples")
def test_eval_archive() -> None:
    _, items = read_auto(DIR / "inspect__log_read_sample.eval")
    [t] = traces(items)
    assert t.source == "inspect__log_read_sample.eval"
    assert t.metadata["member"] == "samples/1_epoch_1.json"
    assert t.id == "1/epoch-1"
    assert t.input.startswith("Is the following statement something you would say?")
    assert t.output == "Yes\n"
    [llm] = t.llm_calls  # the model event: usage 66 / 3 / 69, time 0.2823277907446027 s
    assert (llm.model, llm.input_tokens, llm.output_tokens, llm.total_tokens,
            llm.latency_ms) == ("gemma3", 66, 3, 69, 282.328)
    assert t.duration_ms == 413.0 and t.tool_calls == []
    assert (t.metadata["task"], t.metadata["model"]) == ("popularity", "ollama/gemma3")


# ----------------------------------------------------------- behaviour (fixtures)
def sample(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "refund-7", "epoch": 1, "input": "attachment://aaa",
        "messages": [{"role": "user", "content": "attachment://aaa"},
                     {"role": "assistant", "content": "attachment://bbb"}],
        "events": [
            {"event": "model", "model": "anthropic/claude-x", "output": {
                "model": "claude-x", "usage": {"input_tokens": 10, "output_tokens": 5,
                                               "total_tokens": 215,
                                               "input_tokens_cache_read": 200,
                                               "total_cost": 0.0042},
                "time": 1.5}},
            {"event": "tool", "id": "c1", "function": "issue_refund",
             "arguments": {"order_id": "A-7", "note": "attachment://ccc"},
             "result": "", "error": {"type": "approval", "message": "refund rejected"},
             "working_time": 0.25},
        ],
        "attachments": {"aaa": "Refund order A-7 please", "bbb": "I could not refund it.",
                        "ccc": "customer asked twice"},
        "total_time": 3.0,
    }
    base.update(extra)
    return base


def test_attachments_errors_and_cost(tmp_path: Path) -> None:
    log = {"version": 2, "status": "success",
           "eval": {"task": "refunds", "model": "anthropic/claude-x", "run_id": "r"},
           "samples": [sample()]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log, indent=2))
    name, items = read_auto(path)
    assert name == "inspect"
    [t] = traces(items)
    assert (t.input, t.output) == ("Refund order A-7 please", "I could not refund it.")
    [call] = t.tool_calls
    assert call.arguments == {"order_id": "A-7", "note": "customer asked twice"}
    assert (call.ok, call.error, call.latency_ms) == (False, "approval: refund rejected", 250.0)
    [llm] = t.llm_calls
    # all input tokens, the cached ones too: 215 - 5
    assert (llm.input_tokens, llm.output_tokens, llm.total_tokens, llm.cost_usd,
            llm.latency_ms) == (210, 5, 215, 0.0042, 1500.0)


def test_a_tool_event_reusing_a_call_id_for_another_call_is_kept_and_reported(
        tmp_path: Path) -> None:
    def tool(name: str, **more: Any) -> str:
        return json.dumps({"event": "tool", "id": "call_0", "function": name,
                           "arguments": {"id": 1}, **more})

    path = tmp_path / "log.json"
    path.write_text(
        '{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, '
        '"samples": [{"id": "s", "epoch": 1, "input": "clean up", "events": [\n'
        + tool("get_customer", result="ok") + ",\n"  # line 2
        + tool("delete_customer", pending=True) + ",\n"  # line 3: call_0 again, another tool
        + tool("delete_customer", result="deleted") + "\n"  # line 4: line 3's, completed
        + "]}]}\n")
    name, items = read_auto(path)
    assert name == "inspect"
    assert errors(items) == [("input/invalid_event", 3)]
    [t] = traces(items)
    assert [(c.name, c.location.line, c.result) for c in t.tool_calls] == [
        ("get_customer", 2, "ok"), ("delete_customer", 4, "deleted")]


def test_eval_archive_without_samples_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "running.eval"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
    name, items = read_auto(path)
    assert name == "inspect"
    assert traces(items) == [] and errors(items) == [("input/invalid_event", 0)]


def test_eval_archive_with_two_samples(tmp_path: Path) -> None:
    path = tmp_path / "two.eval"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        zf.writestr("samples/a_epoch_1.json", json.dumps(sample(id="a"), indent=1))
        zf.writestr("samples/b_epoch_1.json", json.dumps(sample(id="b"), indent=1))
    _, items = read_auto(path)
    assert [t.id for t in traces(items)] == ["a/epoch-1", "b/epoch-1"]


# ------------------------------------------------- the members of an archive (limits)
def members(n: int) -> dict[str, bytes]:
    return {"header.json": b'{"version": 2, "eval": {"task": "t"}}',
            **{f"samples/s{i}_epoch_1.json": json.dumps(sample(id=f"s{i}")).encode()
               for i in range(n)}}


def read_limited(path: Path, **limits: int) -> list[ReadItem]:
    from agent_eval.limits import Limits

    source = SourceFile(str(path), path.name, path.name, Limits(**limits))
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError), reader
    return list(reader.read(source))


@pytest.mark.parametrize("zip64", [False, True])
def test_an_archive_of_more_members_than_the_limit_is_not_read(tmp_path: Path,
                                                               zip64: bool) -> None:
    """The regression: 300,001 empty members took 280 MB and 10 s (zipfile makes an
    object per member before anything is read). Counted first, from the end record."""
    path = tmp_path / "many.eval"
    raw_zip(path, members(4), zip64=zip64)
    assert len(traces(read_limited(path, max_archive_members=5))) == 4  # at the limit
    items = read_limited(path, max_archive_members=4)
    assert errors(items) == [("input/limit_exceeded", 0)] and not traces(items)
    [error] = [i for i in items if isinstance(i, InputError)]
    assert error.message == ("the archive declares 5 members, more than "
                             "limits.max_archive_members (4); it was not read")


@pytest.mark.parametrize("zip64", [False, True])
def test_an_archive_declaring_fewer_members_than_it_holds_is_counted(tmp_path: Path,
                                                                     zip64: bool) -> None:
    """zipfile reads every entry of the central directory, whatever the end record says:
    the entries are counted in the directory's bytes."""
    path = tmp_path / "liar.eval"
    raw_zip(path, members(4), declared=1, zip64=zip64)
    with zipfile.ZipFile(path) as zf:  # what the count guards against
        assert len(zf.namelist()) == 5
    items = read_limited(path, max_archive_members=4)
    [error] = [i for i in items if isinstance(i, InputError)]
    assert (error.rule, error.line, error.message) == (
        "input/limit_exceeded", 0, "the archive's central directory holds 5 members, more "
        "than limits.max_archive_members (4); it was not read")
    assert len(traces(read_limited(path, max_archive_members=5))) == 4


def test_a_central_directory_over_max_file_bytes_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "long-names.eval"
    raw_zip(path, {"header.json": b"{}", "samples/" + "x" * 900 + ".json": b"{}"})
    items = read_limited(path, max_file_bytes=1000)
    assert errors(items) == [("input/limit_exceeded", 0)]
    assert "central directory is 1,016 bytes, more than limits.max_file_bytes (1,000)" in (
        str(items[0]))


def test_a_sample_under_a_repeated_or_odd_name_is_never_passed_over(tmp_path: Path) -> None:
    def sample(sid: str, tool: str) -> str:
        return json.dumps({"id": sid, "epoch": 1, "input": "hi", "messages": [], "events": [
            {"event": "tool", "id": "c", "function": tool, "arguments": {}}]})

    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as zf, pytest.warns(UserWarning, match="Duplicate"):
        zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        zf.writestr("samples/2_epoch_1.json", sample("2", "drop_database"))
        zf.writestr("samples/2_epoch_1.json", sample("2", "read_file"))  # the same name
        zf.writestr("../samples/3_epoch_1.json", sample("3", "rm_rf"))
    _, items = read_auto(path)
    # zipfile reads the last entry under a name: the first one's call was never read (the
    # second read twice), and the sample under ../samples/ was passed over unsaid
    assert [c.name for t in traces(items) for c in t.tool_calls] == [
        "drop_database", "read_file"]
    said = [e.message for e in items if isinstance(e, InputError)]
    assert said == [  # in the archive's order
        "samples/2_epoch_1.json: the archive holds two members of this name (a zip tool "
        "reads one of them); both are read",
        "../samples/3_epoch_1.json: a member named like a sample but not "
        "samples/<id>_epoch_<n>.json: it was not read; is the archive an Inspect log?"]
