"""The openai provider end to end against a real OpenAI-compatible server on loopback:
llama-cpp-python's server (llama.cpp) with a tiny GGUF model this test writes itself.

The model's weights are all zero, so every next-token logit is equal and greedy decoding
(temperature 0) picks the lowest token id the grammar allows; the vocabulary (the 256
byte tokens, in an order chosen below, then the special tokens) makes that deterministic:
``{"reasoning":"","score":4}`` for a graded verdict and ``"tie"`` for a pairwise one. The
weights mean nothing: what is tested is the protocol (the SDK's request, the server's
structured output from the verdict's JSON Schema, the answer, the store, the replay).

llama-cpp-python has no wheels on PyPI: it compiles llama.cpp when installed (8 to 11
minutes on the 2-core CI machine, measured), so it is not among the test dependencies;
this test runs where it is installed (``pip install 'llama-cpp-python[server]' gguf``)
and is skipped elsewhere. tests/judge/test_modes.py runs the same path in every CI run
against loopback servers held to the providers' published API descriptions.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Project, native

FIRST = '":,4t}'  # the byte tokens greedy decoding should prefer, in this order


def write_model(path: Path) -> None:
    """A llama-architecture GGUF: one layer, 64 dimensions, zero weights, a byte-level
    SentencePiece vocabulary."""
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    w = gguf.GGUFWriter(str(path), "llama")
    n_embd, n_ff, n_head = 64, 128, 2
    w.add_context_length(4096)
    w.add_embedding_length(n_embd)
    w.add_block_count(1)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(n_embd // n_head)
    w.add_file_type(0)
    order = [ord(c) for c in FIRST] + [b for b in range(256) if chr(b) not in FIRST]
    tokens = [f"<0x{b:02X}>" for b in order] + ["<unk>", "<s>", "</s>"]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types([6] * 256 + [2, 3, 3])  # byte, unknown, control, control
    w.add_unk_token_id(256)
    w.add_bos_token_id(257)
    w.add_eos_token_id(258)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    vocab = len(tokens)
    shapes = {"token_embd.weight": (vocab, n_embd), "output_norm.weight": (n_embd,),
              "output.weight": (vocab, n_embd), "blk.0.attn_norm.weight": (n_embd,),
              "blk.0.attn_q.weight": (n_embd, n_embd), "blk.0.attn_k.weight": (n_embd, n_embd),
              "blk.0.attn_v.weight": (n_embd, n_embd),
              "blk.0.attn_output.weight": (n_embd, n_embd),
              "blk.0.ffn_norm.weight": (n_embd,), "blk.0.ffn_gate.weight": (n_ff, n_embd),
              "blk.0.ffn_up.weight": (n_ff, n_embd), "blk.0.ffn_down.weight": (n_embd, n_ff)}
    for name, shape in shapes.items():
        w.add_tensor(name, np.zeros(shape, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError:
        pytest.skip("NOT RUN, llama-cpp-python[server] is not installed: pip install "
                    "'llama-cpp-python[server]' gguf (it compiles llama.cpp: 8-11 minutes on "
                    "2 cores); test_modes.py covers the same path against loopback servers")
    folder = tmp_path_factory.mktemp("llama")
    model = folder / "tiny.gguf"
    write_model(model)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (folder / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--chat_format", "chatml", "--n_ctx", "4096",
         "--model_alias", "tiny"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the llama.cpp server did not start: "
                            + (folder / "server.log").read_text()[-2000:])
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_record_and_replay_against_llama_cpp(project: Project, llama_server: str) -> None:
    suite = f"""version: "1"
suite: llama
traces: traces/*.jsonl
judge:
  provider: openai
  model: tiny
  base_url: {llama_server}
  response_format: json_object
  max_tokens: 64
  max_retries: 0
scenarios:
  - id: STRICT
    expect:
      judge: [{{rubric: "States the refunded amount.", threshold: 1.0}}]
  - id: LENIENT
    expect:
      judge: [{{rubric: "States the refunded amount.", threshold: 0.8}}, {{pairwise: true}}]
"""
    project.write(suite, {"s.jsonl": native("s-1", "STRICT", "Refunded $24.99."),
                          "l.jsonl": native("l-1", "LENIENT", "Refunded $24.99.")})
    base = project.cli(out="base")  # the base branch: its outputs for the pairwise check
    assert base.scenario("LENIENT")["outputs"] == {"l-1": "Refunded $24.99."}
    project.write(suite, {"s.jsonl": native("s-1", "STRICT", "Refunded $24.99."),
                          "l.jsonl": native("l-1", "LENIENT", "Your refund: $24.99.")})
    rec = project.cli("--baseline", "base/results.json", "--judge", "record", out="rec")
    assert rec.results["input_errors"] == [], rec.err
    lines = project.store_lines()
    # a rubric judgement per output, two pairwise ones (both orders)
    assert sorted((j["kind"], j.get("score"), j.get("winner")) for j in lines) == [
        ("pairwise", None, "tie"), ("pairwise", None, "tie"), ("rubric", 4, None),
        ("rubric", 4, None)]
    assert all(j["response_model"] == "tiny" and j["input_tokens"] > 0 for j in lines)
    # 4 < int(1.0 x 5 + 0.5) = 5 fails STRICT; 4 >= 4 passes LENIENT; a tie passes
    assert [f["scenario"] for f in rec.findings("judge/rubric")] == ["STRICT"]
    assert rec.scenario("LENIENT")["status"] == "pass"
    replay = project.cli("--baseline", "base/results.json", out="replay")
    assert replay.results["judge"]["calls"] == 0
    assert json.dumps(replay.results["scenarios"]) == json.dumps(
        [{**s, "duration_ms": 0} for s in rec.results["scenarios"]])
