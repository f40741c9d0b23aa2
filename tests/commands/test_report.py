"""`agent-eval report`: renders a results.json again, byte-identical to what `run` wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent_eval
from agent_eval.renderers import RENDERERS

SRC = str(Path(agent_eval.__file__).resolve().parents[1])
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "examples/customer-service/agent-eval.yaml"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "agent_eval", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example run once with every format this version has."""
    out = tmp_path_factory.mktemp("run")
    formats = ["json", "junit", "markdown", "console"]
    formats += [f for f in ("sarif", "html") if f in RENDERERS]
    p = cli("run", "--config", EXAMPLE, "--format", ",".join(formats), "--no-timings",
            "--output-dir", str(out), cwd=REPO)
    assert p.returncode == 1, p.stderr.decode()  # the example has violations
    return out


FORMATS = ["json", "junit", "markdown", "console", "sarif", "html"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_to_stdout_is_byte_identical_to_run(example_run: Path, fmt: str) -> None:
    if fmt not in RENDERERS:
        pytest.skip(f"format {fmt} is not in this version yet (RENDERERS: {list(RENDERERS)})")
    written = example_run / RENDERERS[fmt].filename
    assert written.is_file()
    p = cli("report", str(example_run / "results.json"), "--format", fmt, cwd=REPO)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stderr == b""
    assert p.stdout == written.read_bytes()


@pytest.mark.parametrize("fmt", ["junit", "markdown"])
def test_report_to_a_file_is_byte_identical_to_run(example_run: Path, tmp_path: Path,
                                                   fmt: str) -> None:
    target = tmp_path / "sub" / "out.txt"
    p = cli("report", str(example_run / "results.json"), "-f", fmt, "--output", str(target),
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout == b""
    assert target.read_bytes() == (example_run / RENDERERS[fmt].filename).read_bytes()


def test_the_default_format_is_console(example_run: Path) -> None:
    p = cli("report", str(example_run / "results.json"), cwd=REPO)
    assert p.returncode == 0
    assert p.stdout == (example_run / "console.txt").read_bytes()
    assert p.stdout.startswith(b"agent-eval ")


def test_links_when_repository_and_sha_are_given(example_run: Path) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    p = cli("report", str(example_run / "results.json"), "--format", "markdown",
            "--repo-url", "https://github.com/acme/agent", "--sha", sha,
            "--run-url", "https://github.com/acme/agent/actions/runs/1", cwd=REPO)
    assert p.returncode == 0
    golden = REPO / "tests" / "renderers" / "golden" / "example.md"
    assert p.stdout == golden.read_bytes()


@pytest.mark.parametrize(("options", "said"), [
    # one without the other made no link and said nothing
    (["--repo-url", "https://github.com/acme/agent"], "--repo-url links policy lines only "
     "with --sha"),
    (["--sha", "0123abc"], "--sha links policy lines only with --repo-url"),
    # both go into Markdown and HTML links: a parenthesis ended the link, a quote the
    # attribute
    (["--repo-url", "https://x.test/a) [b](javascript:alert(1)", "--sha", "0123abc"],
     "--repo-url must be an https:// address"),
    (["--repo-url", "http://github.com/acme/agent", "--sha", "0123abc"],
     "--repo-url must be an https:// address"),
    (["--run-url", "https://x.test/1)<img src=x>"], "--run-url must be an https:// address"),
    (["--repo-url", "https://github.com/acme/agent", "--sha", 'a" onmouseover="x'],
     "--sha must be a commit"),
    # no ref name: a Markdown link REPO/blob/../../../../evil/x/blob/main/FILE climbed out
    # of the repository (https://github.com/evil/x/blob/main/FILE once resolved)
    (["--repo-url", "https://github.com/acme/agent", "--sha", "../../../../evil/x/blob/main"],
     "--sha must be a commit"),
    (["--repo-url", "https://github.com/acme/agent", "--sha", "/evil"],
     "--sha must be a commit"),
])
def test_repository_links_need_both_and_safe_values(example_run: Path, options: list[str],
                                                    said: str) -> None:
    p = cli("report", str(example_run / "results.json"), "--format", "markdown", *options,
            cwd=REPO)
    assert (p.returncode, p.stdout) == (2, b"")
    assert said in p.stderr.decode()


def test_a_ref_name_links_as_a_commit_does(example_run: Path) -> None:
    """A ref name (its segments, dots inside them) is a --sha as a commit is."""
    p = cli("report", str(example_run / "results.json"), "--format", "markdown",
            "--repo-url", "https://github.com/acme/agent", "--sha", "release/v1.2", cwd=REPO)
    assert p.returncode == 0
    assert b"https://github.com/acme/agent/blob/release/v1.2/" in p.stdout
    # and in the HTML report alike (its '/' was written %2F, a link GitHub does not open)
    p = cli("report", str(example_run / "results.json"), "--format", "html",
            "--repo-url", "https://github.com/acme/agent", "--sha", "release/v1.2", cwd=REPO)
    assert p.returncode == 0
    assert b"https://github.com/acme/agent/blob/release/v1.2/" in p.stdout


def test_unknown_format_exits_2_listing_the_available_ones(example_run: Path) -> None:
    p = cli("report", str(example_run / "results.json"), "--format", "pdf", cwd=REPO)
    assert p.returncode == 2
    assert p.stdout == b""
    err = p.stderr.decode()
    assert "unknown output format 'pdf'" in err
    assert f"known formats: {', '.join(RENDERERS)}" in err
    assert "Traceback" not in err


def test_missing_or_foreign_files_exit_2_with_one_line(tmp_path: Path) -> None:
    p = cli("report", "nowhere.json", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.decode().startswith("error: cannot read nowhere.json")
    (tmp_path / "bad.json").write_text("{not json")
    p = cli("report", "bad.json", cwd=tmp_path)
    assert p.returncode == 2 and "bad.json is not JSON" in p.stderr.decode()
    (tmp_path / "other.json").write_text(json.dumps({"version": 2, "runs": []}))
    p = cli("report", "other.json", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.decode() == "error: other.json is not an agent-eval results file\n"
    for name in ("nowhere.json", "bad.json", "other.json"):
        assert "Traceback" not in cli("report", name, cwd=tmp_path).stderr.decode()
    for tool in ("agent-eval", ["agent-eval"], None):  # a "tool" that is not an object
        (tmp_path / "tool.json").write_text(json.dumps({"tool": tool}))
        p = cli("report", "tool.json", cwd=tmp_path)
        assert p.returncode == 2
        assert p.stderr.decode() == "error: tool.json is not an agent-eval results file\n"


def test_a_results_file_from_another_schema_is_refused_cleanly(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(json.dumps({
        "schema_version": "99", "tool": {"name": "agent-eval", "version": "9"}}))
    p = cli("report", "r.json", cwd=tmp_path)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert "schema_version '99'" in err and "Traceback" not in err


def test_listed_in_help() -> None:
    p = cli("--help", cwd=REPO)
    assert b"report" in p.stdout
    p = cli("report", "--help", cwd=REPO)
    assert b"--format" in p.stdout and b"--output" in p.stdout and b"--root" in p.stdout


STALE = "agent-eval: pass\n"  # an earlier report's FILE, which a later step could publish


@pytest.mark.parametrize("results, fmt", [
    ("bad.json", "markdown"),      # not JSON
    ("other.json", "markdown"),    # not a results file
    ("schema.json", "markdown"),   # another schema_version
    ("nowhere.json", "markdown"),  # not there
    ("schema.json", "pdf"),        # an unknown format
])
def test_a_report_that_stops_leaves_no_earlier_output(tmp_path: Path, results: str,
                                                      fmt: str) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"version": 2, "runs": []}))
    (tmp_path / "schema.json").write_text(json.dumps({
        "schema_version": "99", "tool": {"name": "agent-eval", "version": "9"}}))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "summary.md").write_text(STALE)
    (tmp_path / "out" / "keep.md").write_text(STALE)
    p = cli("report", results, "-f", fmt, "-o", "out/summary.md", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.decode().startswith("error: ")
    assert not (tmp_path / "out" / "summary.md").exists()
    assert (tmp_path / "out" / "keep.md").read_text() == STALE  # only FILE goes


def test_a_report_that_stops_never_removes_through_a_link(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    (repo / "bad.json").write_text("{not json")
    (elsewhere / "target.md").write_text(STALE)
    (repo / "summary.md").symlink_to(elsewhere / "target.md")  # FILE is a link
    (repo / "linked").symlink_to(elsewhere)  # FILE's folder is a link
    p = cli("report", "bad.json", "-f", "markdown", "-o", "summary.md", cwd=repo)
    assert p.returncode == 2
    assert not (repo / "summary.md").is_symlink()  # the link goes, as run's do ...
    assert (elsewhere / "target.md").read_text() == STALE  # ... its target stays
    p = cli("report", "bad.json", "-f", "markdown", "-o", "linked/target.md", cwd=repo)
    assert p.returncode == 2
    assert (elsewhere / "target.md").read_text() == STALE


def test_a_report_onto_its_own_results_file_keeps_it(example_run: Path, tmp_path: Path) -> None:
    """FILE may be RESULTS itself: it is read first, then replaced, never removed first."""
    own = tmp_path / "results.json"
    own.write_bytes((example_run / "results.json").read_bytes())
    p = cli("report", "results.json", "-f", "json", "-o", "results.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert own.read_bytes() == (example_run / "results.json").read_bytes()
