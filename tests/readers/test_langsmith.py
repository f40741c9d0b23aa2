"""The LangSmith reader (readers/langsmith.py) on hostile runs. Its reading of real exports
is tested in test_langchain.py and test_langgraph.py."""

from __future__ import annotations

import json
from pathlib import Path

from agent_eval.errors import InputError
from agent_eval.model import Trace
from agent_eval.readers import IgnoredEvents, SourceFile, pick_reader, read_file

ROOT = {"id": "r1", "trace_id": "r1", "run_type": "chain", "name": "agent",
        "dotted_order": "20240101T000000000000Zr1", "start_time": "2024-01-01T00:00:00Z",
        "inputs": {"x": 1}}


def test_a_run_without_id_whose_dotted_order_ends_without_an_id(tmp_path: Path) -> None:
    """A run without ``id`` takes the id that ends its ``dotted_order`` (a patch); one whose
    last segment holds no ``Z<id>`` stopped the reader (IndexError: every run of the file
    lost). It is now not a run, counted as ignored, and the file's other runs are read."""
    patch = {"trace_id": "r1", "run_type": "tool", "name": "t", "start_time": "x",
             "dotted_order": "20240101T000000000000Zr1.no-timestamp"}
    cut = {**patch, "dotted_order": "20240101T000000000000Zr1.20240101T000001000000Z"}
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in (ROOT, patch, cut)))
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError) and reader.name == "langsmith"
    trace, ignored = read_file(reader, source)
    assert isinstance(trace, Trace) and isinstance(ignored, IgnoredEvents)
    assert (trace.id, ignored.count) == ("r1", 2)
