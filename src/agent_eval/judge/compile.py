"""Compile the suite's ``judge:`` block and the scenarios' ``expect.judge`` checks once
per suite (docs/judge.md). Evaluation (``judge/evaluate.py``) then only renders prompts,
hashes them and looks their verdicts up in the store."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_eval.findings import ConfigRef
from agent_eval.judge import prompts
from agent_eval.judge.config import JudgeConfig
from agent_eval.judge.models import DEFAULT_STORE, JudgeCheck, check_text
from agent_eval.judge.store import Store, read_store
from agent_eval.paths import real
from agent_eval.yamlpos import Path as YamlPath
from agent_eval.yamlpos import Positions

# the order in which checks run (AgentCI: the free ones first, each API kind only while
# nothing failed before it); checks of one kind run in the order they are written
ORDER = {"recorded": 0, "rubric": 1, "quality": 1, "safety": 2, "hallucination": 3,
         "pairwise": 4}
GRADED = ("rubric", "safety", "hallucination")  # 1-5, AgentCI's mapping
DEFAULT_THRESHOLD = {"rubric": 0.6, "safety": 0.8, "hallucination": 0.8}
IN_SCORE = ("rubric", "quality", "recorded")
MODES = ("replay", "record", "refresh")
MAX_REFERENCE_BYTES = 1 << 20  # a context_file larger than this is refused


def threshold_score(threshold: float) -> int:
    """AgentCI's mapping of a threshold in [0, 1] to the 1-5 judge scale, with standard
    rounding (not banker's): ``int(t x 5 + 0.5)``, kept within 1..5 (0.0 -> 1, 0.5 -> 3,
    0.7 -> 4, 0.8 -> 4, 1.0 -> 5)."""
    return max(1, min(5, int(threshold * 5 + 0.5)))


class CompilerLike(Protocol):
    """What the scenario compiler offers (scenarios/compile.py ``_Compiler``)."""

    loader: Any
    file: str

    def ref(self, path: YamlPath, key_path: str) -> ConfigRef: ...

    def problem(self, path: YamlPath, message: str) -> None: ...


@dataclass(frozen=True, slots=True)
class CompiledJudge:
    """One judge check of a scenario."""

    index: int  # in the scenario's expect.judge list
    kind: str
    ref: ConfigRef  # the kind's key (`rubric:`), where its findings point
    label: str  # what reports call it
    rule: str  # the rubric, criteria or safety rule; the recorded score's name
    anchors: tuple[str, ...] = ()
    threshold: float | None = None  # as written (or the default)
    pass_score: float | None = None  # on the verdict's scale (None: never fails)
    low: float = 0.0  # the verdict's scale, to normalise it into output_quality
    high: float = 1.0
    in_score: bool = False
    severity: str = "error"
    reference: str | None = None  # the context_file's text

    @property
    def order(self) -> int:
        return ORDER[self.kind]

    @property
    def calls_model(self) -> bool:
        return self.kind != "recorded"

    @property
    def lowest(self) -> float:
        """The lowest verdict the judge may give (1 on the 1-5 scale)."""
        return 1.0 if self.kind in GRADED else self.low

    def normalised(self, value: float) -> float:
        """A verdict (or recorded value) on output_quality's 0-1 scale."""
        return min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))

    def describe_threshold(self) -> str:
        if self.pass_score is None:
            return "no threshold"
        if self.kind in GRADED:
            return (f"threshold {self.threshold:g} -> score >= {self.pass_score:g} of 5 "
                    f"(int({self.threshold:g} x 5 + 0.5))")
        if self.kind == "quality":
            return f"threshold {self.threshold:g} -> score >= {self.pass_score:g} of 100"
        return f"threshold {self.pass_score:g}"


@dataclass
class JudgeContext:
    """How this run judges (set by the command that runs it; travels with the suite to
    ``--jobs`` workers)."""

    mode: str = "replay"  # replay | record | refresh
    # scenario id -> trace id -> the base branch's output (None: no baseline given)
    base_outputs: dict[str, dict[str, str]] | None = None
    base_hint: str = ""  # how the record command gets the same baseline
    fresh: frozenset[str] = frozenset()  # refresh: keys judged again in this run
    failures: dict[str, str] = field(default_factory=dict)  # key -> why it was not judged
    collect: bool = False  # keep the requests of missing judgements (record, refresh)
    made: dict[str, Any] = field(default_factory=dict)  # calls, recorded, cost_usd so far


@dataclass
class JudgeRun:
    """The suite's judge: its configuration, its store and this run's context."""

    config: JudgeConfig | None
    suite_file: str  # repo-relative, for the record command
    store_file: str  # repo-relative
    store_path: str  # absolute
    store: Store
    context: JudgeContext = field(default_factory=JudgeContext)
    # the requests of the judgements the last evaluation lacked (when it collected them)
    pending: dict[str, Any] = field(default_factory=dict, repr=False)
    # the keys of the judgements the last evaluation used (what the action checks against
    # the base commit's store: baseline/__init__.py judge_store_for_action)
    used: frozenset[str] = field(default=frozenset(), repr=False)
    store_needed: bool = False  # some check asks a model (the others read the trace)
    has_pairwise: bool = False  # some check compares with the base branch's outputs

    @property
    def provider(self) -> str:
        return (self.config.provider or "") if self.config else ""

    @property
    def model(self) -> str:
        return (self.config.model or "") if self.config else ""

    @property
    def max_chars(self) -> int:
        return self.config.max_input_chars if self.config else 20000

    def lookup(self, key: str) -> Any:
        """The stored judgement of ``key``, or None (refresh: only the ones judged again
        in this run count)."""
        ctx = self.context
        if ctx.mode == "refresh" and key not in ctx.fresh:
            return None
        return self.store.get(key)

    def record_command(self, pairwise: bool = False) -> str:
        """The command that records this suite's missing judgements."""
        base = ""
        if pairwise:
            base = " " + (self.context.base_hint or "--baseline BASE_RESULTS.json")
        return f"agent-eval run --config {self.suite_file}{base} --judge record"


# ------------------------------------------------------------------------ compile
def _label(kind: str, check: JudgeCheck, rule: str) -> str:
    if check.name:
        return check.name
    if kind in ("rubric", "recorded"):
        text = rule if len(rule) <= 60 else rule[:57] + "..."
        return f"{kind}: {text}"
    return kind


def compile_check(c: CompilerLike, index: int, check: JudgeCheck, path: YamlPath,
                  key_path: str) -> CompiledJudge | None:
    """One ``expect.judge`` item (``path``: its position; ``key_path``: its stable key
    path)."""
    kind = check.kind
    ref = c.ref((*path, kind), f"{key_path}.{kind}")
    value = getattr(check, kind)
    if kind == "rubric":
        rule, anchors = str(value), tuple(check.scale or prompts.DEFAULT_ANCHORS)
    elif kind == "safety":
        rule = check_text(value) or prompts.SAFETY_RULE
        if check.categories:
            rule += " Check in particular for: " + ", ".join(check.categories) + "."
        anchors = tuple(check.scale or prompts.SAFETY_ANCHORS)
    elif kind == "hallucination":
        rule = check_text(value) or prompts.HALLUCINATION_RULE
        anchors = tuple(check.scale or prompts.HALLUCINATION_ANCHORS)
    elif kind == "quality":
        rule, anchors = check_text(value) or prompts.QUALITY_CRITERIA, ()
    elif kind == "pairwise":
        rule, anchors = check_text(value) or prompts.PAIRWISE_CRITERIA, ()
    else:
        rule, anchors = str(value), ()
    threshold = check.threshold
    if threshold is None:
        threshold = DEFAULT_THRESHOLD.get(kind)
    pass_score: float | None = None
    low, high = 0.0, 1.0
    if kind in GRADED:
        high = 5.0  # on output_quality's 0-1 scale a score counts score / 5, the inverse of
        # the threshold mapping: threshold 0.8 <-> score 4 <-> 0.8
        assert threshold is not None
        pass_score = float(threshold_score(threshold))
    elif kind == "quality":
        high = 100.0
        pass_score = None if threshold is None else threshold * 100
    elif kind == "recorded":
        low, high = check.range or (0.0, 1.0)
        pass_score = threshold
    elif kind == "pairwise":
        pass_score = 0.5  # head at least as good as base: a tie or a win
    reference = None
    if check.context_file is not None:
        reference = _reference(c, check.context_file, (*path, "context_file"))
    in_score = check.in_score if check.in_score is not None else kind in IN_SCORE
    return CompiledJudge(index, kind, ref, _label(kind, check, rule), rule, anchors, threshold,
                         pass_score, low, high, in_score, check.severity, reference)


def _reference(c: CompilerLike, name: str, path: YamlPath) -> str | None:
    loader = c.loader
    file = real(loader.base / name)
    root = real(getattr(loader, "root", loader.base))
    if not file.is_relative_to(root):
        c.problem(path, f"context_file '{name}' is outside the repository; keep reference "
                  "documents in the repository")
        return None
    try:
        if file.stat().st_size > MAX_REFERENCE_BYTES:
            c.problem(path, f"context_file '{name}' is larger than {MAX_REFERENCE_BYTES} "
                      "bytes")
            return None
        text: str = loader.read(file)
    except (OSError, UnicodeDecodeError) as exc:
        reason = ("not found" if isinstance(exc, FileNotFoundError)
                  else exc.strerror or str(exc) if isinstance(exc, OSError) else "not UTF-8")
        c.problem(path, f"context_file '{name}' cannot be read ({reason}); the path is "
                  "relative to the folder of the suite file")
        return None
    return text


# the characters HFS+ ignores in a name (as git's own is_hfs_dotgit): ".g\u200cit" is .git
_HFS_IGNORED = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d"
                                      "\u202e\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"))


def _git_folder(name: str) -> bool:
    """Whether a file system may take the folder ``name`` for ``.git``: in any case (the
    case-insensitive ones of macOS and Windows: ``.GIT/config`` is ``.git/config``
    there), with the characters HFS+ ignores, or trailing dots and spaces (which Windows
    drops). git refuses such a name in a tree, so no repository's own folder is one."""
    return name.translate(_HFS_IGNORED).rstrip(". ").casefold() == ".git"


def compile_run(c: CompilerLike, data: dict[str, Any], positions: Positions,
                root: Path, needs_model: list[tuple[YamlPath, str]]) -> JudgeRun:
    """The suite's ``judge:`` block and its store. ``needs_model``: the checks (position,
    kind) that call a model, which need ``provider`` and ``model``; the store is read only
    when there are any."""
    loader = c.loader
    raw = data.get("judge")
    config: JudgeConfig | None = None
    here: YamlPath = ()
    if raw is not None:
        here = ("judge", "store") if isinstance(raw, dict) and "store" in raw else ("judge",)
        got = loader.validate(JudgeConfig, raw, positions, ("judge",))
        if got is None:
            needs_model = []  # the block's own problems are reported already
        config = got if isinstance(got, JudgeConfig) else None
    if needs_model and (config is None or not config.provider or not config.model):
        where, kind = needs_model[0]
        missing = ("a 'judge:' block" if config is None else " and ".join(
            f"judge.{k}" for k in ("provider", "model") if not getattr(config, k)))
        c.problem(where, f"a {kind} check asks a judge model: the suite needs {missing} "
                  "(e.g. judge: {provider: openai, model: gpt-4o-mini}); see docs/judge.md")
    store_name = config.store if config is not None else DEFAULT_STORE
    store_abs = real(loader.base / store_name)
    real_root = real(root)
    if not store_abs.is_relative_to(real_root):
        c.problem(here, f"judge.store '{store_name}' is outside the repository: the store is "
                  "reviewed and committed with the suite, so keep it inside")
        return JudgeRun(config, c.file, store_name, str(store_abs), Store(store_name),
                        store_needed=bool(needs_model))
    rel_store = os.path.relpath(store_abs, real_root).replace(os.sep, "/")
    if any(map(_git_folder, rel_store.split("/"))):  # `--judge record` rewrites it whole
        c.problem(here, f"judge.store '{store_name}' is inside git's own folder ({rel_store}): "
                  "recording would overwrite a file of the repository's database; keep "
                  f"the store in the work tree (default {DEFAULT_STORE})")
        return JudgeRun(config, c.file, store_name, str(store_abs), Store(store_name),
                        store_needed=bool(needs_model))
    store = Store(rel_store)
    if needs_model and not getattr(loader, "frozen", False):  # a worker gets it pickled
        got_store = read_store(store_abs, rel_store)
        if isinstance(got_store, str):
            c.problem(here, got_store)
        else:
            store = got_store
    return JudgeRun(config, c.file, rel_store, str(store_abs), store,
                    store_needed=bool(needs_model))
