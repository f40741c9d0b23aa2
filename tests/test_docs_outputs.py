"""docs/outputs.md says what the renderers do: every output file, and the limits it quotes
are the renderers' own constants."""

from __future__ import annotations

import inspect

from tests.conftest import EXAMPLE, ROOT

from agent_eval import progress
from agent_eval.commands import action
from agent_eval.renderers import RENDERERS, console, html, markdown, sarif

TEXT = " ".join((ROOT / "docs" / "outputs.md").read_text(encoding="utf-8").split())


def test_every_output_file_is_listed() -> None:
    for name, renderer in RENDERERS.items():
        assert f"| `{name}` | `{renderer.filename}` |" in TEXT, name
    # the action writes every format but the console text
    assert set(action.FORMATS) == set(RENDERERS) - {"json", "console"}
    assert "the action writes all of them but `console.txt`" in TEXT


def test_the_limits_are_the_renderers() -> None:
    assert f"at most {sarif.MAX_RESULTS:,} results per run" in TEXT
    assert f"{sarif.MAX_LOCATIONS_PER_RESULT:,} locations per result" in TEXT
    assert f"{sarif.MAX_GZIP_BYTES // 1_000_000} MB gzip-compressed" in TEXT
    assert f"At most {markdown.MAX_CHARS:,} characters" in TEXT
    assert f"tables of more than {markdown.DETAILS_OVER} rows are collapsed" in TEXT
    assert f"At most {html.MAX_ROWS:,} rows per table" in TEXT
    assert f"and {html.MAX_DETAILS} violations with snippets" in TEXT
    assert (f"(±{html.POLICY_CONTEXT} lines) and the trace snippet around the call "
            f"(±{html.TRACE_CONTEXT} lines") in TEXT
    assert f"with up to {console.SHOWN_PER_TEST} findings each" in TEXT
    assert f"the input errors (up to {console.SHOWN_PER_TEST})" in TEXT


def test_the_progress_line_timing() -> None:
    params = inspect.signature(progress.Progress).parameters
    assert params["delay"].default == 2.0 and params["interval"].default == 0.2
    assert "longer than two seconds on a terminal" in TEXT
    assert "at most five times a second" in TEXT


def test_the_verdict_line_quoted_is_the_examples() -> None:
    from agent_eval.api import evaluate, load_suite, load_traces

    suite = load_suite(EXAMPLE / "agent-eval.yaml")
    results = evaluate(suite, load_traces(sorted((EXAMPLE / "traces").glob("*.jsonl")), suite))
    line = console.verdict_line(results)
    assert f"`{line}` (the bundled example)" in TEXT
    quiet = console.quiet_line(results)  # quoted shortened: its first kind, …, its end
    assert f"`{quiet.split(', ')[0]}, … · {quiet.split(' · ')[-1]}`" in TEXT
