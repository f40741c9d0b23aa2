"""The judgement store: keys, the line format, bad lines, conflicts, merging across
branches (a real git merge) and shards, ``agent-eval judge tidy``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval._cli import main
from agent_eval.judge import prompts, store
from agent_eval.judge.store import Judgement, Store, judgement_key

from .conftest import Project, judge_block, native
from .loopback import Loopback


def prompt(rule: str = "Gives the amount.", output: str = "24.99",
           template: str = "rubric") -> prompts.Prompt:
    p = prompts.graded("rubric", rule, prompts.DEFAULT_ANCHORS, "Refund A-1", output, None)
    if template != "rubric":
        return prompts.Prompt(template, p.system, p.user, p.schema)
    return p


def test_the_key_hashes_provider_model_template_rubric_and_inputs() -> None:
    base = judgement_key("openai", "gpt-4o-mini", prompt())
    assert base == judgement_key("openai", "gpt-4o-mini", prompt())  # stable
    assert len(base) == 64 and all(c in "0123456789abcdef" for c in base)
    others = {judgement_key("anthropic", "gpt-4o-mini", prompt()),
              judgement_key("openai", "gpt-4o", prompt()),
              judgement_key("openai", "gpt-4o-mini", prompt(rule="Is polite.")),
              judgement_key("openai", "gpt-4o-mini", prompt(output="24.98")),
              judgement_key("openai", "gpt-4o-mini", prompt(template="rubric/2"))}
    assert base not in others and len(others) == 5


def test_a_threshold_is_not_part_of_the_key(project: Project, openai_server: Loopback) -> None:
    def suite(threshold: float) -> str:
        return ('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
                + f"scenarios:\n  - id: R\n    expect:\n      judge:\n        - rubric: Gives "
                f"the amount.\n          threshold: {threshold}\n")
    project.write(suite(0.8), {"a.jsonl": native("a-1", "R", "SCORE=4")})
    project.cli("--judge", "record")
    project.write(suite(1.0), {"a.jsonl": native("a-1", "R", "SCORE=4")})
    run = project.cli()  # re-graded from the stored score: 4 < 5
    assert len(openai_server.requests) == 1 and run.findings("judge/rubric")


def j(key: str, score: int = 4, reasoning: str = "ok") -> Judgement:
    return Judgement(key=key, kind="rubric", provider="openai", model="m", template="rubric/1",
                     reasoning=reasoning, score=score)


def test_lines_start_with_the_key_and_the_file_is_sorted() -> None:
    s = Store("s.jsonl")
    for key in ("c" * 64, "a" * 64, "b" * 64):
        s.put(j(key))
    lines = s.render().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a" * 64, "b" * 64, "c" * 64]
    assert lines[0] == ('{"key":"' + "a" * 64 + '","kind":"rubric","model":"m",'
                        '"provider":"openai","reasoning":"ok","score":4,"template":"rubric/1"}')
    again = Store.parse(s.render(), "s.jsonl")
    assert again.entries == s.entries and again.problems == [] and again.conflicts == []
    empty = Store("e")  # an empty reasoning is kept (a local model may give none)
    empty.put(j("d" * 64, reasoning=""))
    assert Store.parse(empty.render(), "e").entries == empty.entries


def test_bad_lines_are_problems_with_their_line_and_the_rest_is_read() -> None:
    text = "\n".join([j("a" * 64).to_line(), "{not json", '{"key":"short"}',
                      json.dumps({**json.loads(j("b" * 64).to_line()), "score": "4"}),
                      json.dumps({**json.loads(j("d" * 64).to_line()), "extra": 1}),
                      j("c" * 64).to_line()]) + "\n"
    s = Store.parse(text, "s.jsonl")
    assert sorted(s.entries) == ["a" * 64, "c" * 64]
    assert [n for n, _ in s.problems] == [2, 3, 4, 5]
    assert s.problems[0][1].startswith("not valid JSON (")
    assert all(m.startswith("not a judgement: ") for _, m in s.problems[1:])
    assert "'key' must be a SHA-256 in lowercase hex" in s.problems[1][1]
    assert "'score' must be an integer" in s.problems[2][1]
    assert "unknown field 'extra'" in s.problems[3][1]


def test_a_reasoning_holding_line_separators_stays_one_line(
        project: Project, openai_server: Loopback) -> None:
    """JSON writes U+2028, U+2029 and U+0085 unescaped, and a model's reasoning (or a
    trace id) may hold them: the store split its lines at them too (str.splitlines), so
    the line agent-eval had just written was three broken lines and the next replay
    found its judgement missing (exit 2 after a recording that passed)."""
    s = Store("s.jsonl")
    s.put(j("a" * 64, reasoning="one\u2028two\x85three\u2029four"))
    text = s.render() + "{broken\n"
    assert text.count("\n") == 2
    again = Store.parse(text, "s.jsonl")
    assert again.entries == s.entries
    assert [n for n, _ in again.problems] == [2]  # the line as git and editors count it
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a\u2028\x85-1", "R", "SCORE=5")})
    assert project.cli("--judge", "record").code == 0
    assert project.store.read_bytes().count(b"\n") == 1
    run = project.cli()
    assert run.code == 0 and run.results["input_errors"] == []
    assert run.results["judge"]["judgements_used"] == 1


def test_a_line_that_is_not_utf8_is_a_broken_line_and_the_rest_is_read(tmp_path: Path) -> None:
    # the whole store was refused (every verdict missing), with no line to look at
    data = (j("a" * 64).to_line().encode() + b"\n" + b'{"key":"caf\xe9"}\n'
            + j("c" * 64).to_line().encode() + b"\n")
    (tmp_path / "s.jsonl").write_bytes(data)
    got = store.read_store(tmp_path / "s.jsonl", "s.jsonl")
    assert isinstance(got, Store)
    assert sorted(got.entries) == ["a" * 64, "c" * 64]
    assert got.problems == [(2, "not UTF-8 text; remove the line or record it again")]


def test_a_line_giving_a_field_twice_is_a_broken_line() -> None:
    # read as its last value: a reviewer of the diff reads "score":1, the gate used 5
    good = j("a" * 64, 1, "the amount is wrong").to_line()
    twice = [good[:-1] + ',"score":5}', good[:-1] + ',"sc\\u006fre":5}',
             good.replace('"kind":"rubric"', '"kind":"rubric","kind":"rubric"')]
    s = Store.parse("\n".join([j("b" * 64).to_line(), *twice]) + "\n", "s.jsonl")
    assert sorted(s.entries) == ["b" * 64]
    assert s.problems == [
        (2, "not a judgement: the name 'score' is given twice in one object"),
        (3, "not a judgement: the name 'score' is given twice in one object"),
        (4, "not a judgement: the name 'kind' is given twice in one object")]
    assert Store.parse(good + "\n", "s.jsonl").problems == []


def test_fields_of_the_wrong_type_or_kind_are_broken_lines() -> None:
    # they were taken without a word: a 'check' object shown as its Python repr, a
    # response_model number dropped, a winner on a rubric line (or a score on a pairwise
    # one) ignored, and `judge tidy` left them out of the line it wrote
    good = json.loads(j("a" * 64).to_line())
    pair = {**{k: v for k, v in good.items() if k != "score"}, "key": "b" * 64,
            "kind": "pairwise", "template": "pairwise/1", "winner": "A"}
    bad = [{**good, "check": {"scenario": "R"}}, {**good, "trace": ["a.jsonl"]},
           {**good, "response_model": 4}, {**good, "winner": "A"}, {**pair, "score": 5}]
    s = Store.parse("\n".join(json.dumps(x) for x in [good, pair, *bad]) + "\n", "s.jsonl")
    assert sorted(s.entries) == ["a" * 64, "b" * 64]
    assert s.problems == [(3, "not a judgement: 'check' must be a string"),
                          (4, "not a judgement: 'trace' must be a string"),
                          (5, "not a judgement: 'response_model' must be a string"),
                          (6, "not a judgement: a rubric judgement has a 'score', not a "
                              "'winner'"),
                          (7, "not a judgement: a pairwise judgement has a 'winner', not a "
                              "'score'")]


def test_token_counts_json_cannot_total_are_unknown_not_a_crash(project: Project,
                                                                openai_server: Loopback
                                                                ) -> None:
    """A store's token counts are at most 10^15 each (a trace's figures' limit), and a
    total over JSON's 64 bits is unknown: two lines of 2^64 - 1 tokens each (the most
    orjson reads) made replay stop with an internal error writing results.json."""
    big = json.dumps({**json.loads(j("a" * 64).to_line()), "input_tokens": 2**64 - 1})
    top = json.dumps({**json.loads(j("b" * 64).to_line()), "input_tokens": 10**15})
    s = Store.parse(big + "\n" + top + "\n", "s.jsonl")
    assert s.problems == [(1, "not a judgement: 'input_tokens' must be a whole number of at "
                           "most 10^15")]
    assert s.entries["b" * 64].input_tokens == 10**15
    from agent_eval.judge.compile import JudgeRun
    from agent_eval.judge.summary import JudgeAcc, summary

    many = Store("s.jsonl")
    for n in range(9224):  # 9224 x 10^15 > 2^63 - 1 = 9,223,372,036,854,775,807
        many.put(Judgement(key=f"{n:064x}", kind="rubric", provider="openai", model="m",
                           template="rubric/1", reasoning="", score=4, input_tokens=10**15,
                           output_tokens=1))
    acc = JudgeAcc.for_checks(1)
    acc.used = set(many.entries)
    got = summary(JudgeRun(None, "s.yaml", "s.jsonl", "/s.jsonl", many), [acc])
    assert got.input_tokens is None and got.output_tokens == 9224
    acc.used = set(sorted(many.entries)[:9223])  # 9,223,000,000,000,000,000: within
    got = summary(JudgeRun(None, "s.yaml", "s.jsonl", "/s.jsonl", many), [acc])
    assert got.input_tokens == 9_223_000_000_000_000_000


def test_a_key_stored_twice_resolves_the_same_way_in_any_order() -> None:
    first, second = j("a" * 64, 2, "low").to_line(), j("a" * 64, 5, "high").to_line()
    one = Store.parse(first + "\n" + second + "\n", "s")
    two = Store.parse(second + "\n" + first + "\n", "s")
    assert one.entries == two.entries
    # the line that sorts first wins: "...\"reasoning\":\"high\"" < "...\"low\""
    assert one.entries["a" * 64].score == 5
    assert one.conflicts == two.conflicts == ["a" * 64]
    assert one.conflict_line == two.conflict_line == 2  # where the key is given again
    three = Store.parse("\n" + first + "\n" + first + "\n\n" + second + "\n" + second, "s")
    assert three.conflict_line == 5
    same = Store.parse(first + "\n" + first + "\n", "s")  # a duplicate line: no conflict
    assert same.conflicts == [] and len(same.entries) == 1


def test_a_store_larger_than_the_limit_is_refused(project: Project, openai_server: Loopback,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a-1", "R", "x")})
    project.store.parent.mkdir()
    project.store.write_text(j("a" * 64).to_line() * 3, encoding="utf-8")
    monkeypatch.setattr(store, "MAX_STORE_BYTES", 100)
    run = project.cli()
    assert run.code == 2
    assert "the judgement store .agent-eval/judgements.jsonl is larger than 100 bytes" in run.err


def test_a_store_outside_the_repository_is_refused(project: Project,
                                                   openai_server: Loopback) -> None:
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'
                  + judge_block(openai_server, extra="  store: ../elsewhere.jsonl\n")
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a-1", "R", "x")})
    run = project.cli()
    assert run.code == 2
    assert "agent-eval.yaml:10:3: judge.store '../elsewhere.jsonl' is outside the repository" \
        in run.err


@pytest.mark.parametrize("name", [".git/config", "sub/../.git/hooks/pre-commit",
                                  # .git/config on macOS's and Windows' file systems
                                  ".GIT/config", ".Git/config", ".g\u200cit/config",
                                  ".git./config"])
def test_a_store_inside_git_s_own_folder_is_refused(project: Project, openai_server: Loopback,
                                                    name: str) -> None:
    """`--judge record` rewrites the store whole: a suite naming .git/config as its store
    (inside the repository, so taken) had recording overwrite the repository's own
    configuration with judgements. A store under .git/ is a config error, and nothing is
    written."""
    config = project.root / ".git" / "config"
    config.write_text("[core]\n\tbare = false\n", encoding="utf-8")
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'
                  + judge_block(openai_server, extra=f"  store: {name}\n")
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a-1", "R", "SCORE=5")})
    run = project.cli("--judge", "record")
    assert run.code == 2
    assert f"agent-eval.yaml:10:3: judge.store '{name}' is inside git's own folder" in run.err
    assert config.read_text(encoding="utf-8") == "[core]\n\tbare = false\n"
    assert not (project.root / ".git" / "hooks").exists()


def test_a_broken_store_line_is_an_input_error_and_the_rest_is_used(
        project: Project, openai_server: Loopback) -> None:
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a-1", "R", "SCORE=5")})
    project.cli("--judge", "record")
    project.store.write_text(project.store.read_text() + '{"key": "x"\n', encoding="utf-8")
    run = project.cli()
    assert run.findings("judge/missing") == []  # the good line is used
    (e,) = run.results["input_errors"]
    assert e["rule"] == "judge/store" and e["file"] == ".agent-eval/judgements.jsonl"
    assert e["line"] == 2 and run.code == 2


def test_recording_keeps_the_lines_it_cannot_read(project: Project,
                                                  openai_server: Loopback) -> None:
    """--judge record rewrote the store without the lines that are not judgements (said
    once, as input errors of that run): a judgement of a newer agent-eval, a line to be
    fixed by hand, were gone. They are kept, after the judgements, byte for byte."""
    project.write('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
                  + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n",
                  {"a.jsonl": native("a-1", "R", "SCORE=5")})
    newer = json.dumps({**json.loads(j("f" * 64).to_line()), "label": "good"})
    unread = [newer.encode(), b'{"key": "caf\xe9"', b"{broken"]
    project.store.parent.mkdir()
    project.store.write_bytes(b"\n".join(unread) + b"\n")
    run = project.cli("--judge", "record")
    assert len(openai_server.requests) == 1
    data = project.store.read_bytes().split(b"\n")
    assert data[0].startswith(b'{"key":"') and json.loads(data[0])["score"] == 5
    assert data[1:] == [*unread, b""]  # after the judgement, as they were
    expected = [(2, "not a judgement: unknown field 'label' (a store written by a newer "
                 "agent-eval?)"), (3, "not UTF-8 text; remove the line or record it again")]
    for got in (run, project.cli()):  # where the lines now are, in this run and the next
        errors = [(e["line"], e["message"]) for e in got.results["input_errors"]]
        assert errors[:2] == expected and errors[2][0] == 4 and len(errors) == 3
        assert got.code == 2


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, timeout=60).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_two_branches_recording_merge_cleanly_with_union(
        project: Project, openai_server: Loopback) -> None:
    """Two branches record different judgements into the same store: with the
    `.gitattributes` line docs/judge.md gives, git merges them without a conflict (a plain
    merge would conflict: both insert lines at the same place), and the merged store
    replays both."""
    root = project.root
    shutil.rmtree(root / ".git")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    suite = ('version: "1"\nsuite: s\ntraces: traces/*.jsonl\n' + judge_block(openai_server)
             + "scenarios:\n  - id: R\n    expect: {judge: [{rubric: x}]}\n")
    (root / ".gitattributes").write_text(".agent-eval/judgements.jsonl merge=union\n")
    project.write(suite, {"a.jsonl": native("a-1", "R", "first SCORE=5")})
    project.cli("--judge", "record")
    git(root, "add", ".gitattributes", "agent-eval.yaml", "traces", ".agent-eval")
    git(root, "commit", "-qm", "base")
    for branch, text in (("one", "second SCORE=4"), ("two", "third SCORE=3")):
        git(root, "checkout", "-q", "-b", branch, "main")
        project.write(suite, {"a.jsonl": native("a-1", "R", "first SCORE=5"),
                              f"{branch}.jsonl": native(f"{branch}-1", "R", text)})
        project.cli("--judge", "record")
        git(root, "add", "traces", ".agent-eval")
        git(root, "commit", "-qm", branch)
    git(root, "checkout", "-q", "one")
    git(root, "merge", "-q", "--no-edit", "two")  # check=True: no conflict
    lines = project.store.read_text().splitlines()
    assert len(lines) == 3 and len({json.loads(line)["key"] for line in lines}) == 3
    run = project.cli()
    assert run.findings("judge/missing") == [] and run.results["input_errors"] == []
    assert run.results["judge"]["judgements_used"] == 3
    # tidy sorts it again (a union merge may leave it out of order)
    project.capsys.readouterr()
    assert main(["judge", "tidy", ".agent-eval/judgements.jsonl"]) == 0
    tidy = project.store.read_text().splitlines()
    assert tidy == sorted(lines)
    assert main(["judge", "tidy", "--check", ".agent-eval/judgements.jsonl"]) == 0


def test_tidy_merges_shard_stores_and_check_fails_when_untidy(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.chdir(tmp_path)
    a, b = Path("a.jsonl"), Path("b.jsonl")
    a.write_text(j("c" * 64).to_line() + "\n" + j("a" * 64).to_line() + "\n")
    b.write_text(j("b" * 64).to_line() + "\n" + j("a" * 64, 1, "other").to_line() + "\n")
    assert main(["judge", "tidy", "--check", "a.jsonl"]) == 1  # not sorted
    assert main(["judge", "tidy", "a.jsonl", "b.jsonl"]) == 0
    keys = [json.loads(line)["key"] for line in a.read_text().splitlines()]
    assert keys == ["a" * 64, "b" * 64, "c" * 64]
    assert json.loads(a.read_text().splitlines()[0])["reasoning"] == "ok"  # sorts first
    assert main(["judge", "tidy", "--check", "a.jsonl"]) == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_store_that_is_no_regular_file_is_refused_without_waiting(tmp_path: Path) -> None:
    # a pull request's judge.store (or a committed link in its place) naming a FIFO, or
    # /proc/self/fd/1 (the process's own output pipe): reading it hung the run
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "judgements.jsonl").symlink_to(tmp_path / "fifo")
    code = ("import sys; from pathlib import Path; from agent_eval.judge.store import "
            "read_store; print(read_store(Path(sys.argv[1]), 'judgements.jsonl'))")
    src = str(Path(store.__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "judgements.jsonl")],
                          env={**os.environ, "PYTHONPATH": src}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout == ("cannot read the judgement store judgements.jsonl: not a regular "
                           "file (a FIFO, socket or device, its links followed)\n"), done.stderr


def test_tidy_refuses_a_store_to_merge_that_is_not_there(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """A shard's store misnamed (a typo, an artifact not downloaded) was merged as if
    empty: "a.jsonl: 1 judgement(s)", exit 0, and the shard's judgements were lost."""
    monkeypatch.chdir(tmp_path)
    a = Path("a.jsonl")
    a.write_text(j("a" * 64).to_line() + "\n")
    before = a.read_text()
    assert main(["judge", "tidy", "a.jsonl", "shard-2.jsonl"]) == 2
    assert capsys.readouterr().err == ("error: shard-2.jsonl: no such judgement store to "
                                       "merge; give the stores the shards recorded (nothing "
                                       "was written)\n")
    assert a.read_text() == before
    # the STORE itself may be new: the shards' stores are merged into it
    Path("b.jsonl").write_text(before)
    assert main(["judge", "tidy", "new.jsonl", "b.jsonl"]) == 0
    assert Path("new.jsonl").read_text() == before


def test_tidy_says_a_store_name_on_one_escaped_line(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Its report line was printed as given: a line break in the store's name started a
    workflow command (`::error::`) in the job's log; the other commands escape names."""
    monkeypatch.chdir(tmp_path)
    name = "x\n::error::y.jsonl"
    Path(name).write_text(j("a" * 64).to_line() + "\n")
    assert main(["judge", "tidy", name]) == 0
    assert capsys.readouterr().out == "x\\x0a::error::y.jsonl: 1 judgement(s)\n"
    Path(name).write_text(j("b" * 64).to_line() + "\n" + j("a" * 64).to_line() + "\n")
    assert main(["judge", "tidy", "--check", name]) == 1
    assert capsys.readouterr().err == ("x\\x0a::error::y.jsonl is not tidy: run `agent-eval "
                                       "judge tidy x\\x0a::error::y.jsonl`\n")
