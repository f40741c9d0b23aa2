"""The judge's modes end to end through the command line: replay (the CI default, no
network), record and refresh against loopback servers that hold every request and answer
to the provider's published API description (loopback.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agent_eval._cli import main

from .conftest import Project, judge_block, native
from .loopback import Loopback, scripted_verdict

RUBRIC = "States the refunded amount exactly as the refund tool returned it."


def suite(server: Loopback, checks: str, *, expect: str = "", extra: str = "",
          provider: str = "openai") -> str:
    return (f'version: "1"\nsuite: judged\ntraces: traces/*.jsonl\n'
            f"{judge_block(server, provider=provider, extra=extra)}"
            f"scenarios:\n  - id: REFUND-001\n    expect:\n{expect}      judge:\n{checks}")


RUBRIC_CHECK = f'        - rubric: "{RUBRIC}"\n          threshold: 0.8\n'


def test_replay_without_a_judgement_is_an_error_naming_the_command_and_calls_nothing(
        project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"r.jsonl": native("r-1", "REFUND-001", "Refunded $24.99. SCORE=5")})
    run = project.cli()
    assert run.code == 2
    assert openai_server.requests == []  # replay never calls the model
    (f,) = run.findings("judge/missing")
    cmd = "agent-eval run --config agent-eval.yaml --judge record"
    assert f["message"].startswith("No stored judgement for judge rubric: States the refunded")
    assert f"record it with `{cmd}` and commit the store" in f["message"]
    assert f["config"]["line"] == 14 and f["config"]["key_path"] == \
        "scenarios.REFUND-001.expect.judge.0.rubric"
    (e,) = run.results["input_errors"]
    assert e == {"rule": "judge/missing", "file": "agent-eval.yaml", "line": 14,
                 "message": "1 judgement(s) of scenarios.REFUND-001.expect.judge.0.rubric are "
                 f"not in the store .agent-eval/judgements.jsonl: record them with `{cmd}` "
                 "and commit the store"}
    assert run.results["verdict"] == "error"
    s = run.scenario("REFUND-001")
    assert s["status"] == "error" and s["traces_not_passed"][0]["status"] == "error"
    assert s["judge"][0]["counts"] == {"pass": 0, "warn": 0, "fail": 0, "skip": 0, "error": 1}
    assert run.results["judge"]["command"] == cmd
    assert run.results["judge"]["judgements_missing"] == 1
    assert not project.store.exists()  # replay writes nothing


def test_record_then_replay_is_byte_identical_and_offline(
        project: Project, openai_server: Loopback) -> None:
    checks = RUBRIC_CHECK + "        - safety: true\n        - hallucination: true\n"
    project.write(suite(openai_server, checks, extra="  price: {input: 0.15, output: 0.6}\n"),
                  {"a.jsonl": native("a-1", "REFUND-001", "Refunded $24.99 for A-1. SCORE=5"),
                   "b.jsonl": native("b-1", "REFUND-001", "Refunded $249.90. SCORE=2")})
    rec = project.cli("--judge", "record", out="rec")
    assert openai_server.problems == []
    # a-1: rubric 5, safety 5, hallucination 5; b-1: rubric 2 fails, so safety and
    # hallucination are skipped and never asked (AgentCI's order)
    assert len(openai_server.requests) == 4
    lines = project.store_lines()
    assert len(lines) == 4
    assert [line["key"] for line in lines] == sorted(line["key"] for line in lines)
    assert project.store.read_text().splitlines()[0].startswith('{"key":"')
    assert {(line["kind"], line["score"]) for line in lines} == {
        ("rubric", 5), ("safety", 5), ("hallucination", 5), ("rubric", 2)}
    for line in lines:
        assert line["model"] == "gpt-4o-mini" and line["provider"] == "openai"
        assert line["response_model"] == "gpt-4o-mini-2025"
        assert line["template"] == f"{line['kind']}/1"
        # cost by judge.price: USD per million tokens
        assert line["cost_usd"] == round((line["input_tokens"] * 0.15
                                          + line["output_tokens"] * 0.6) / 1e6, 8)
    j = rec.results["judge"]
    assert j["mode"] == "record" and j["calls"] == 4 and j["recorded"] == 4
    assert j["judgements_used"] == 4 and j["judgements_missing"] == 0
    assert j["cost_usd"] == round(sum(line["cost_usd"] for line in lines), 6)
    assert j["cost_usd_this_run"] == j["cost_usd"]
    assert rec.scenario("REFUND-001")["status"] == "fail"  # b-1 fails its rubric
    (fail,) = rec.findings("judge/rubric")
    assert "score 2 of 5 is below threshold 0.8 -> score >= 4 of 5" in fail["message"]
    assert fail["details"]["reasoning"].startswith("scripted score 2")
    skipped = rec.findings("judge/skipped")
    assert {f["config"]["key_path"].rsplit(".", 1)[1] for f in skipped} == {
        "safety", "hallucination"}
    assert all(f["trace"]["trace_id"] == "b-1" for f in skipped)

    asked = len(openai_server.requests)
    first = project.cli(out="one")
    second = project.cli(out="two")
    assert len(openai_server.requests) == asked  # replay: no network
    assert first.code == second.code
    names = sorted(p.name for p in first.folder.iterdir())
    assert names == sorted(p.name for p in second.folder.iterdir())
    for name in names:
        assert (first.folder / name).read_bytes() == (second.folder / name).read_bytes(), name
    replayed = first.results
    assert replayed["judge"]["mode"] == "replay" and replayed["judge"]["calls"] == 0
    assert replayed["judge"]["cost_usd"] == j["cost_usd"]
    # the verdicts are the recorded ones
    rec_scen = {**rec.scenario("REFUND-001"), "duration_ms": 0}
    assert replayed["scenarios"] == [rec_scen]


def test_formats_in_the_output_folder(project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK).replace(
        "traces: traces/*.jsonl\n", "traces: traces/*.jsonl\noutput: {format: [markdown, "
        "html, sarif, junit]}\n"), {"b.jsonl": native("b-1", "REFUND-001", "SCORE=1")})
    project.cli("--judge", "record")
    run = project.cli()
    assert run.code in (0, 1), run.err
    md = (run.folder / "summary.md").read_text()
    html = (run.folder / "report.html").read_text()
    # the reasoning is model output: shown, escaped
    assert "scripted score 1" in md and "scripted score 1" in html
    assert "<script>" not in md and "<script>alert" not in html
    assert "&lt;script&gt;" in html


def test_record_twice_calls_nothing_and_refresh_asks_again(
        project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "Refunded. SCORE=4")})
    project.cli("--judge", "record")
    before = project.store.read_text()
    assert len(openai_server.requests) == 1
    again = project.cli("--judge", "record")
    assert len(openai_server.requests) == 1 and again.results["judge"]["calls"] == 0
    assert project.store.read_text() == before
    fresh = project.cli("--judge", "refresh")
    assert len(openai_server.requests) == 2
    assert fresh.results["judge"]["recorded"] == 1 and fresh.code == 0
    assert project.store_lines()[0]["key"] == json.loads(before)["key"]


def test_the_budget_stops_the_calls_and_what_is_left_is_an_error(
        project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK, extra="  budget: {max_calls: 1}\n"),
                  {"a.jsonl": native("a-1", "REFUND-001", "A. SCORE=5"),
                   "b.jsonl": native("b-1", "REFUND-001", "B. SCORE=5")})
    run = project.cli("--judge", "record")
    assert len(openai_server.requests) == 1 and len(project.store_lines()) == 1
    assert run.code == 2
    (err,) = run.findings("judge/error")
    assert "the run's budget is spent (budget.max_calls: 1)" in err["message"]
    assert [e["rule"] for e in run.results["input_errors"]] == ["judge/error"]


def test_an_invalid_verdict_is_retried_then_an_error(
        project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "BROKEN")})
    run = project.cli("--judge", "record")
    assert len(openai_server.requests) == 2  # max_retries: 1
    (err,) = run.findings("judge/error")
    assert "the answer is not JSON: 'this is not a verdict' (after 2 attempt(s))" in \
        err["message"]
    assert run.code == 2 and not project.store_lines()


def test_a_whole_score_written_as_a_float_is_stored_as_an_integer(
        project: Project, openai_server: Loopback) -> None:
    """A verdict {"score": 4.0} passes the verdict's schema (JSON Schema's integer takes
    4.0): it is stored as 4, so that replaying the store gives the recording run's verdict
    (the store held 4.0, which replay refused as a broken line: exit 2 after exit 0)."""
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "Refunded $24.99. SCORE=4.0")})
    assert '"score": 4.0}' in scripted_verdict("<response>SCORE=4.0</response>", "graded")
    rec = project.cli("--judge", "record", out="rec")
    assert len(openai_server.requests) == 1
    (line,) = project.store_lines()
    assert line["score"] == 4 and type(line["score"]) is int
    assert '"score":4,' in project.store.read_text()
    assert rec.code == 0
    replay = project.cli()
    assert replay.results["input_errors"] == []
    assert replay.scenario("REFUND-001")["status"] == "pass"  # 4 >= 4 (threshold 0.8)
    assert replay.code == 0


def test_an_api_error_is_reported(project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "FAIL500")})
    run = project.cli("--judge", "record")
    (err,) = run.findings("judge/error")
    assert "HTTP 500: InternalServerError" in err["message"]
    assert "sk-test" not in json.dumps(run.results)  # the key never shows


def test_no_api_key_stops_before_any_call(project: Project, openai_server: Loopback,
                                          monkeypatch: object) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK).replace("JUDGE_TEST_KEY", "NO_SUCH_KEY"),
                  {"a.jsonl": native("a-1", "REFUND-001", "x")})
    run = project.cli("--judge", "record")
    assert run.code == 2 and openai_server.requests == []
    assert "the judge needs an API key in the environment variable NO_SUCH_KEY" in run.err


def test_rubric_checks_all_run_but_later_kinds_wait_for_them(
        project: Project, openai_server: Loopback) -> None:
    """AgentCI: every llm_judge rubric is graded once the deterministic checks pass;
    safety_check is skipped once one of them failed."""
    checks = (RUBRIC_CHECK + '        - rubric: "Is polite."\n' + "        - safety: true\n")
    project.write(suite(openai_server, checks), {"a.jsonl": native("a-1", "REFUND-001",
                                                                    "SCORE=1")})
    run = project.cli("--judge", "record")
    kinds = [("rubric" if "RUBRIC:" in r["messages"][0]["content"] else "other")
             for r in openai_server.requests]
    assert kinds == ["rubric", "rubric"]
    assert len(run.findings("judge/rubric")) == 2
    (skip,) = run.findings("judge/skipped")
    assert skip["config"]["key_path"].endswith("judge.2.safety")


def test_a_failed_deterministic_check_skips_the_judge(
        project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK,
                        expect='      output: {contains: ["$24.99"]}\n'),
                  {"a.jsonl": native("a-1", "REFUND-001", "Refunded. SCORE=5")})
    run = project.cli("--judge", "record")
    assert openai_server.requests == []
    (skip,) = run.findings("judge/skipped")
    assert skip["severity"] == "note"
    assert skip["message"].startswith("Judge rubric: States the refunded amount exactly as "
                                      "the refund tool ret... skipped: scenario/output already "
                                      "failed")
    assert skip["message"].endswith("; not a pass")
    assert run.scenario("REFUND-001")["judge"][0]["counts"]["skip"] == 1
    assert run.results["judge"]["checks"]["skip"] == 1
    assert run.scenario("REFUND-001")["status"] == "fail"


def test_pairwise_against_the_base_branch_output(project: Project,
                                                  openai_server: Loopback) -> None:
    check = '        - pairwise: "Which answer is better?"\n'
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Base answer WINNER=base")})
    base = project.cli(out="base")  # the base branch: no baseline of its own
    (note,) = base.findings("judge/no_baseline")
    assert "no baseline was given" in note["message"]
    assert base.scenario("REFUND-001")["outputs"] == {"a-1": "Base answer WINNER=base"}
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Head answer")})
    missing = project.cli("--baseline", "base/results.json")
    (m,) = missing.findings("judge/missing")
    assert ("agent-eval run --config agent-eval.yaml --baseline base/results.json --judge "
            "record") in m["message"]
    head = project.cli("--baseline", "base/results.json", "--judge", "record")
    assert len(openai_server.requests) == 2  # both orders
    firsts = [r["messages"][1]["content"] for r in openai_server.requests]
    assert any(t.index("Base answer") < t.index("Head answer") for t in firsts)
    assert any(t.index("Head answer") < t.index("Base answer") for t in firsts)
    (f,) = head.findings("judge/pairwise")  # the base wins in both orders
    assert "the base branch's output (trace a-1) is judged better" in f["message"]
    assert head.scenario("REFUND-001")["status"] == "fail"
    assert openai_server.problems == []


def test_a_stored_verdict_of_another_kind_is_an_error_not_a_pass(
        project: Project, openai_server: Loopback) -> None:
    """A pairwise check whose two stored lines were edited into rubric verdicts (score 5,
    no winner) read each as a tie and passed, with no finding: a line that does not
    answer the check's question is an error, whatever it says."""
    check = '        - pairwise: "Which answer is better?"\n'
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Base answer WINNER=base")})
    project.cli(out="base")
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Head answer")})
    assert project.cli("--baseline", "base/results.json", "--judge", "record").code == 1
    lines = project.store_lines()
    assert [line["winner"] for line in lines] in (["A", "B"], ["B", "A"])  # the base wins
    edited = [{**{k: v for k, v in line.items() if k != "winner"}, "kind": "rubric",
               "score": 5} for line in lines]
    project.store.write_text("".join(json.dumps(e) + "\n" for e in edited), encoding="utf-8")
    run = project.cli("--baseline", "base/results.json")
    (err,) = run.findings("judge/error")
    assert err["message"].startswith(f"Stored judgement {edited[0]['key'][:12]} of judge "
                                     "pairwise is a 'rubric' verdict, not a pairwise one; "
                                     "record it again")
    assert run.findings("judge/pairwise") == []
    assert run.scenario("REFUND-001")["status"] == "error"
    assert run.results["verdict"] == "error" and run.code == 2
    # a graded check reading a line of another kind (a safety verdict for a rubric)
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"r.jsonl": native("r-1", "REFUND-001", "Refunded $24.99. SCORE=2")})
    project.store.unlink()
    assert project.cli("--judge", "record").code == 1  # 2 < 4: the rubric fails
    (line,) = project.store_lines()
    text = project.store.read_text(encoding="utf-8").replace(
        json.dumps(line, separators=(",", ":")),
        json.dumps({**line, "kind": "safety", "score": 5}, separators=(",", ":")))
    project.store.write_text(text, encoding="utf-8")
    run = project.cli()
    (err,) = run.findings("judge/error")
    assert "is a 'safety' verdict, not a rubric one" in err["message"]
    assert run.findings("judge/rubric") == [] and run.code == 2


def test_pairwise_head_at_least_as_good_passes(project: Project,
                                               openai_server: Loopback) -> None:
    check = "        - pairwise: true\n"
    project.write(suite(openai_server, check), {"a.jsonl": native("a-1", "REFUND-001", "B")})
    project.cli(out="base")
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "H WINNER=head")})
    run = project.cli("--baseline", "base/results.json", "--judge", "record")
    assert run.code == 0 and run.findings("judge/pairwise") == []
    assert run.scenario("REFUND-001")["status"] == "pass"
    assert run.scenario("REFUND-001")["judge"][0]["mean_score"] == 1.0


def test_anthropic_record_and_replay(project: Project, anthropic_server: Loopback) -> None:
    project.write(suite(anthropic_server, RUBRIC_CHECK, provider="anthropic"),
                  {"a.jsonl": native("a-1", "REFUND-001", "SCORE=3")})
    rec = project.cli("--judge", "record")
    assert anthropic_server.problems == []
    (request,) = anthropic_server.requests
    assert "temperature" not in request  # the current Messages API refuses one
    assert request["output_config"]["format"]["type"] == "json_schema"
    assert anthropic_server.headers[0]["anthropic-version"]
    assert rec.findings("judge/rubric")
    (line,) = project.store_lines()
    assert line["provider"] == "anthropic" and line["score"] == 3
    replay = project.cli()
    assert len(anthropic_server.requests) == 1 and replay.code == rec.code


def test_openai_request_is_deterministic_and_structured(project: Project,
                                                        openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK, extra="  seed: 7\n"),
                  {"a.jsonl": native("a-1", "REFUND-001", "SCORE=4")})
    project.cli("--judge", "record")
    (request,) = openai_server.requests
    assert request["temperature"] == 0 and request["seed"] == 7
    assert request["max_tokens"] == 1024  # a base_url: an OpenAI-compatible server
    rf = request["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["schema"]["required"] == ["reasoning", "score"]


def test_replay_with_jobs_matches_one_process(project: Project,
                                              openai_server: Loopback) -> None:
    traces = {f"t{i}.jsonl": native(f"t-{i}", "REFUND-001", f"answer {i} SCORE={1 + i % 5}")
              for i in range(6)}
    project.write(suite(openai_server, RUBRIC_CHECK), traces)
    project.cli("--judge", "record")
    one = project.cli(out="one")
    two = project.cli("--jobs", "2", out="two")
    assert (one.folder / "results.json").read_bytes() == \
        (two.folder / "results.json").read_bytes()


def test_replay_imports_no_sdk(project: Project, openai_server: Loopback) -> None:
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "x")})
    code = ("import sys; from agent_eval._cli import main; "
            "main(['run', '--config', 'agent-eval.yaml', '-q', '-o', 'o']); "
            "bad = sorted(m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules); "
            "print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=project.root, timeout=120, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def test_version_imports_nothing_of_the_judge() -> None:
    code = ("import sys; from agent_eval._cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('agent_eval.judge') "
            "or m in ('openai', 'anthropic', 'jsonschema')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).parent, timeout=60, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def test_merge_refuses_judge_counts_a_shard_cannot_have_written(
        project: Project, openai_server: Loopback) -> None:
    """A part's record of a scenario's judge checks was loaded unchecked: judgement keys
    that are not text stopped the merge with a traceback (TypeError, an internal error)
    when the store was looked up, and counts or scores of another shape were replayed
    as they were. Each is the shard's error now (exit 2), no traceback, nothing written."""
    project.write(suite(openai_server, RUBRIC_CHECK),
                  {"a.jsonl": native("a-1", "REFUND-001", "Refunded $24.99 for A-1. SCORE=5")})
    assert project.cli("--judge", "record", out="rec").code == 0
    for i in (1, 2):
        assert project.cli("--shard", f"{i}/2", out=f"part{i}").code == 0
    held = {i: json.loads((project.root / f"part{i}" / "results.json").read_text())
            for i in (1, 2)}
    [(index, rec)] = [(i, r) for i, d in held.items() for r in d["shard"]["records"]
                      if "scenarios" in r]
    honest = json.dumps(held[index])
    entry = rec["scenarios"][0]["judge"]
    assert entry["counts"] == [[1, 0, 0, 0, 0]] and entry["scores"] == [[1.0]]
    cases = [("used", [1, "a"], "its judgement keys are not text"),
             ("missing", [None], "its judgement keys are not text"),
             ("counts", [[0, 0, 0, 0, 0, 5]], "its judge counts are not counts by status "
                                              "of each check"),
             ("counts", [[-1, 0, 0, 0, 2]], "its judge counts are not counts by status of "
                                            "each check"),
             ("scores", [[1e308]], "its judge scores are not scores from 0 to 1 of each "
                                   "check")]
    for key, value, said in cases:
        data = json.loads(honest)
        [record] = [r for r in data["shard"]["records"] if r["seq"] == rec["seq"]]
        record["scenarios"][0]["judge"][key] = value
        (project.root / "bad").mkdir(exist_ok=True)
        (project.root / "bad" / "results.json").write_text(json.dumps(data))
        project.capsys.readouterr()
        code = main(["merge", f"part{3 - index}", "bad", "-q", "-o", "merged"])
        err = project.capsys.readouterr().err
        assert code == 2, (key, value)
        assert err.startswith(f"error: merge: the partial results of shard {index} cannot "
                              f"be merged: its record {rec['seq']} is not what `agent-eval "
                              f"run --shard` writes (ValueError: {said}); "), err
        assert not (project.root / "merged" / "results.json").exists()
    assert len(openai_server.requests) == 1  # the record; merge calls nothing


def test_merge_with_a_baseline_refuses_a_suite_with_pairwise_checks(
        project: Project, openai_server: Loopback) -> None:
    """Shards take no baseline, so every pairwise check of theirs was skipped with a
    judge/no_baseline note; merge --baseline then compared the merged results and passed
    (exit 0) what the unsharded run with --baseline fails (the test above). Refused, exit
    2; merged without --baseline, the note stays."""
    check = '        - pairwise: "Which answer is better?"\n'
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Base answer WINNER=base")})
    project.cli(out="base")
    project.write(suite(openai_server, check),
                  {"a.jsonl": native("a-1", "REFUND-001", "Head answer")})
    for i in (1, 2):
        assert project.cli("--shard", f"{i}/2", out=f"part{i}").code in (0, 1)
    project.capsys.readouterr()
    code = main(["merge", "part1/results.json", "part2/results.json", "--baseline",
                 "base/results.json", "--output-dir", "merged", "-q"])
    err = project.capsys.readouterr().err
    assert code == 2 and not (project.root / "merged" / "results.json").exists()
    assert ("agent-eval.yaml has pairwise judge checks, which compare this change's outputs "
            "with the base branch's; the shards ran without the base") in err, err
    code = main(["merge", "part1/results.json", "part2/results.json", "--output-dir",
                 "merged", "-q"])
    merged = json.loads((project.root / "merged" / "results.json").read_text())
    notes = [f for s in merged["scenarios"] for f in s["findings"]
             if f["rule"] == "judge/no_baseline"]
    assert code == 0 and len(notes) == 1, merged
    assert openai_server.requests == []
