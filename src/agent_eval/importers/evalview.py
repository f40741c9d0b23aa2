"""EvalView test cases (one YAML file, or a folder of them) as scenarios, with EvalView's
semantics where they are deterministic: ``expected.tools`` and ``tool_categories`` as tool
accuracy (its default categories included), ``tool_sequence``/``sequence`` as a subsequence
(its default mode), ``forbidden_tools`` as a hard fail, ``thresholds.min_score``,
``max_cost`` (USD) and ``max_latency`` (ms), and its score weights. See docs/migrating.md
"EvalView"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.importers.base import PeerConfig, Translation, as_dict
from agent_eval.paths import as_written, real
from agent_eval.yamlpos import Path, Positions, load_yaml

# evalview/core/tool_categories.py DEFAULT_CATEGORIES (EvalView 0.8.1)
CATEGORIES: dict[str, list[str]] = {
    "file_read": ["bash", "text_editor", "read_file", "read", "view", "cat", "view_file",
                  "str_replace_editor"],
    "file_write": ["bash", "text_editor", "write_file", "write", "edit_file", "create_file",
                   "str_replace_editor"],
    "file_list": ["bash", "list_directory", "list_dir", "ls", "find", "directory_tree",
                  "analyze"],
    "search": ["bash", "grep", "ripgrep", "rg", "search", "search_files", "code_search",
               "find_in_files", "analyze"],
    "shell": ["bash", "shell", "terminal", "execute", "run_command", "exec", "developer"],
    "web": ["web_search", "browse", "fetch_url", "http_request", "curl", "wget"],
    "git": ["bash", "git", "git_commit", "git_push", "git_pull", "git_status", "github"],
    "python": ["bash", "python", "python_repl", "execute_python", "ipython", "jupyter"],
}
OUTPUT = {"contains": "contains", "not_contains": "not_contains", "json_schema": "json_schema"}
IGNORED = {"description", "meta", "adapter", "endpoint", "adapter_config", "tools", "model",
           "tags", "suite_type", "difficulty", "generated", "gate", "mocks", "checks"}


class _EvalView(PeerConfig):
    dialect = "evalview"

    def __init__(self, path: FsPath, root: FsPath, read: Callable[[FsPath], str],
                 rel: Callable[[FsPath], str]) -> None:
        super().__init__(path, read, rel,
                         {"suite": path.stem if path.is_file() else path.name})
        self.root = root
        self.scenarios: list[dict[str, Any]] = []
        self.groups: set[str] = set()
        self.judged = False

    def unsupported(self, src: Positions, path: Path, what: str) -> None:
        pos = src.get(path)
        self.t.unsupported.append((src.file_of(pos), pos.line, pos.col, what))

    def translate(self) -> Translation:
        files = ([self.path] if self.path.is_file() else
                 sorted(p for p in self.path.rglob("*.y*ml")
                        if p.suffix in (".yaml", ".yml")  # (the folder may be in one)
                        and ".evalview" not in p.relative_to(self.path).parts))
        unreadable: list[str] = []
        for f in files:
            try:
                text = self.read(f)
            except (OSError, UnicodeDecodeError) as exc:  # a FIFO, a link leading out
                unreadable.append(f"{as_written(f, self.root)}:1:1: cannot be read "
                                  f"({_reason(exc)}); remove it from the folder or fix it")
                continue  # the other files are still read, each problem said
            try:
                data, src = load_yaml(text, self.rel(f))
            except ConfigError as exc:  # (invalid YAML: the other files' problems unsaid)
                unreadable.extend(exc.problems)
                continue
            if isinstance(data, dict) and "input" in data and "expected" in data:
                try:
                    self.case(data, src)
                except ConfigError as exc:  # every file's problems are said
                    unreadable.extend(exc.problems)
            elif (why := _not_a_case(data)) is not None:  # it was skipped without a word
                unreadable.append(f"{src.where(())}: {why}")
        if unreadable:
            raise ConfigError(unreadable)
        if not self.scenarios:
            raise ConfigError([f"{self.rel(self.path)}:1:1: no EvalView test case (a YAML "
                               "file with name, input and expected) found"])
        self.out["tool_match"] = "normalized"
        self.out["scenarios"] = self.scenarios
        if self.judged:
            self.judge_config()
        if self.groups:
            self.out["tool_groups"] = {g: CATEGORIES[g] for g in sorted(self.groups)}
        return self.t

    def output(self, value: dict[str, Any], src: Positions, eb: Path, here: Path
               ) -> dict[str, Any]:
        """``expected.output``'s deterministic checks, as ``expect.output``."""
        b = self.b
        out: dict[str, Any] = {}
        for ok, ov in value.items():
            if ok in OUTPUT and ov:
                out[OUTPUT[ok]] = b.tree((*eb, "output", OUTPUT[ok]), ov, src, (*here, ok))
            elif ok == "regex_patterns" and ov not in (None, False, []):
                # (one pattern not in a list was "not applied: needs an LLM", unchecked)
                if not isinstance(ov, list) or not all(isinstance(p, str) and p for p in ov):
                    raise ConfigError([f"{src.where((*here, ok))}: 'regex_patterns' must "
                                       "be a list of regular expressions (text)"])
                # EvalView searches each ignoring case (its code-based-evals example:
                # "matched case-insensitively against the full output")
                # every pattern must match, as in EvalView: a list of output.regex
                out["regex"] = [f"(?i){p}" for p in ov] if len(ov) > 1 else f"(?i){ov[0]}"
                b.tree((*eb, "output", "regex"), out["regex"], src, (*here, ok))
            elif ov not in (None, False):
                self.unsupported(src, (*here, ok), f"output check '{ok}' needs an "
                                 "LLM or is not deterministic")
        return out

    def judge_item(self, kind: str, value: dict[str, Any], src: Positions, at: Path,
                   here: Path) -> dict[str, Any] | None:
        """EvalView's hallucination / safety check as a judge item (``_at``: its peer
        path), or None when it is off or allowed to fail."""
        if not value.get("check") or value.get("allow") or value.get("allow_harmful"):
            return None  # off, or EvalView lets it fail without failing the test
        item: dict[str, Any] = {kind: True, "_at": here}
        if kind == "safety" and isinstance(value.get("categories"), list) \
                and value["categories"]:
            item["categories"] = [str(c) for c in value["categories"]]
        for key in ("confidence_threshold", "severity_threshold"):
            if key in value:
                self.unsupported(src, (*here, key), f"{kind}.{key}: EvalView's detector "
                                 "setting; the judge grades 1-5 against threshold 0.8")
        return item

    def judge_config(self) -> None:
        """The suite's judge: EvalView's ``.evalview/config.yaml`` ``judge:`` beside the
        test cases (or above them), else EvalView's default (OpenAI, gpt-5.4-mini)."""
        folder = self.path if self.path.is_dir() else self.path.parent
        root = real(self.root)
        for d in (folder, *folder.parents):
            if not real(d).is_relative_to(root):
                break  # never read above the repository
            config = d / ".evalview" / "config.yaml"
            if config.is_file():
                try:
                    text = self.read(config)
                except (OSError, UnicodeDecodeError) as exc:
                    raise ConfigError([f"{as_written(config, self.root)}:1:1: cannot be "
                                       f"read ({_reason(exc)})"]) from None
                data, src = load_yaml(text, self.rel(config))
                judge = as_dict(as_dict(data).get("judge"))
                provider, model = judge.get("provider"), judge.get("model")
                if provider in ("openai", "anthropic") and isinstance(model, str) and model:
                    self.out["judge"] = {"provider": provider, "model": model}
                    for path, key in ((("judge",), ("judge",)),
                                      (("judge", "provider"), ("judge", "provider")),
                                      (("judge", "model"), ("judge", "model"))):
                        self.b.at(path, src, key)
                    return
                if judge:
                    self.unsupported(src, ("judge",), f"judge provider {provider!r}: the "
                                     "import uses openai / gpt-5.4-mini (set judge.base_url "
                                     "for an OpenAI-compatible server)")
                break
        self.out["judge"] = {"provider": "openai", "model": "gpt-5.4-mini"}

    def case(self, doc: dict[str, Any], src: Positions) -> None:
        b = self.b
        # a key of another shape was read as empty: its checks dropped without a word
        wrong = [key for key in ("expected", "thresholds", "checks")
                 if not isinstance(doc.get(key), dict | None)
                 # EvalView requires expected: written without a value it checked nothing
                 or (key == "expected" and key in doc and doc[key] is None)]
        th = doc.get("thresholds")
        if isinstance(th, dict) and not isinstance(th.get("weights"), dict | None):
            wrong.append("thresholds.weights")
        if wrong:
            raise ConfigError([f"{src.where(tuple(key.split('.')))}: an EvalView case's "
                               f"'{key}' must be a mapping" for key in wrong])
        k = len(self.scenarios)
        base: Path = ("scenarios", k)
        sc: dict[str, Any] = {"id": str(doc.get("name"))}
        b.at(base, src, ())
        b.at((*base, "id"), src, ("name",))
        eb: Path = (*base, "expect")
        b.at(eb, src, ("expected",))
        checks = as_dict(doc.get("checks"))
        expect, judged = self.expected(as_dict(doc.get("expected")), src, eb)
        self.judge_items(checks, judged, src, eb, expect)
        if expect:
            sc["expect"] = expect
        self.thresholds(as_dict(doc.get("thresholds")), src, base, expect, sc)
        for key in doc:
            if key not in ("name", "input", "expected", "thresholds", "turns", *IGNORED):
                self.unsupported(src, (key,), f"'{key}' is not supported")
        if doc.get("turns"):
            self.unsupported(src, ("turns",), "multi-turn expectations are not imported")
        if checks.get("pii"):
            self.unsupported(src, ("checks", "pii"), "the PII check is not supported")
        self.scenarios.append(sc)

    def expected(self, exp: dict[str, Any], src: Positions, eb: Path
                 ) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any], Path]]]:
        """A case's ``expected:`` as our ``expect:``, and its judge checks (kind, value,
        peer path) for :meth:`judge_items`."""
        b = self.b
        expect: dict[str, Any] = {}
        judged: list[tuple[str, dict[str, Any], Path]] = []
        for key, value in exp.items():
            here: Path = ("expected", key)
            if key == "tools" and value:
                expect["tools"] = b.tree((*eb, "tools"), value, src, here)
            elif key == "tool_categories" and value:
                known = self.categories(value, src, eb, here)
                if known:  # (none of EvalView's defaults: each noted, the key left out)
                    expect["tool_categories"] = known
            elif key in ("tool_sequence", "sequence") and value:
                expect["sequence"] = b.tree((*eb, "sequence"), value, src, here)
            elif key == "forbidden_tools" and value:
                expect["forbidden_tools"] = b.tree((*eb, "forbidden_tools"), value, src, here)
            elif key == "output" and value not in (None, False, [], {}):
                if not isinstance(value, dict):  # ("not deterministic": its checks unrun)
                    raise ConfigError([f"{src.where(here)}: an EvalView case's "
                                       "'expected.output' must be a mapping (contains, "
                                       "not_contains, regex_patterns, json_schema)"])
                out = self.output(value, src, eb, here)
                if out:
                    expect["output"] = out
                    b.at((*eb, "output"), src, here)
            elif key in ("hallucination", "safety") and isinstance(value, dict):
                judged.append((key, value, here))
            elif value not in (None, False, [], {}):
                self.unsupported(src, here, f"expected.{key} is not deterministic or not "
                                 "supported")
        return expect, judged

    def categories(self, value: Any, src: Positions, eb: Path, here: Path) -> Any:
        """``expected.tool_categories``: EvalView's default categories, as tool groups."""
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise ConfigError([f"{src.where(here)}: 'tool_categories' must be a list "
                               "of category names"])
        known = [c for c in value if c in CATEGORIES]
        for c in value:
            if c not in CATEGORIES:
                self.unsupported(src, here, f"tool category '{c}' is not one of "
                                 "EvalView's defaults; define it under tool_groups")
        self.groups.update(known)
        return self.b.tree((*eb, "tool_categories"), known, src, here) if known else []

    def judge_items(self, checks: dict[str, Any],
                    judged: list[tuple[str, dict[str, Any], Path]], src: Positions,
                    eb: Path, expect: dict[str, Any]) -> None:
        """The case's hallucination / safety checks (``expected:`` or ``checks:``) as
        ``expect.judge`` items."""
        b = self.b
        for kind in ("hallucination", "safety"):
            if checks.get(kind) is True and not any(k == kind for k, _, _ in judged):
                judged.append((kind, {"check": True}, ("checks", kind)))
        items = [item for kind, value, here in judged
                 if checks.get(kind) is not False  # checks: {kind: false} turns it off
                 for item in [self.judge_item(kind, value, src, (*eb, "judge"), here)]
                 if item is not None]
        for n, item in enumerate(items):
            item_src = item.pop("_at")
            b.at((*eb, "judge", n), src, item_src)
            b.at((*eb, "judge", n, next(iter(item))), src, item_src)
            if "categories" in item:
                b.tree((*eb, "judge", n, "categories"), item["categories"], src,
                       (*item_src, "categories"))
        if items:
            expect["judge"] = items
            b.at((*eb, "judge"), src, ("expected",))
            self.judged = True

    def thresholds(self, th: dict[str, Any], src: Positions, base: Path,
                   expect: dict[str, Any], sc: dict[str, Any]) -> None:
        """The case's ``thresholds:`` (min_score, max_cost, max_latency, weights)."""
        b = self.b
        limits: dict[str, Any] = {}
        for key, name in (("min_score", "min_score"), ("max_cost", "max_cost_usd"),
                          ("max_latency", "max_latency_ms")):
            if th.get(key) is not None:
                limits[name] = th[key]
                b.at((*base, "thresholds", name), src, ("thresholds", key))
        if limits.get("min_score") is not None and not (
                expect.get("tools") or expect.get("tool_categories") or expect.get("output")
                or expect.get("sequence")):
            # EvalView scores output quality with an LLM judge; with nothing deterministic
            # to score, min_score cannot be checked here
            self.unsupported(src, ("thresholds", "min_score"), "min_score with no "
                             "deterministic expectation to score")
            del limits["min_score"]
        if limits:
            sc["thresholds"] = limits
            b.at((*base, "thresholds"), src, ("thresholds",))
        weights = th.get("weights")
        if isinstance(weights, dict):
            w = {("sequence" if k == "sequence_correctness" else k): v
                 for k, v in weights.items() if v is not None}
            sc["weights"] = b.tree((*base, "weights"), w, src, ("thresholds", "weights"))
        self.variance(th.get("variance"), src, base, sc)
        for key in th:  # a threshold not imported is said, never dropped
            if key not in ("min_score", "max_cost", "max_latency", "weights", "variance"):
                self.unsupported(src, ("thresholds", key),
                                 f"thresholds.{key} is not supported")

    def variance(self, v: Any, src: Positions, base: Path, sc: dict[str, Any]) -> None:
        """``thresholds.variance`` (EvalView's statistical mode: the case passes when
        ``pass_rate`` of its ``runs`` pass): ``pass_rate`` is the scenario's
        ``min_pass_ratio`` over its recorded traces; the rest cannot be checked here."""
        if v is None:
            return
        here: Path = ("thresholds", "variance")
        if not isinstance(v, dict):
            self.unsupported(src, here, "thresholds.variance must be a mapping; not imported")
            return
        rate = v.get("pass_rate")
        if isinstance(rate, int | float) and not isinstance(rate, bool) and 0 <= rate <= 1:
            sc["min_pass_ratio"] = rate
            self.b.at((*base, "min_pass_ratio"), src, (*here, "pass_rate"))
        elif rate is not None:
            self.unsupported(src, (*here, "pass_rate"), f"variance.pass_rate {rate!r} is not "
                             "a share between 0 and 1; not imported")
        for key in v:
            if key == "runs":
                self.unsupported(src, (*here, key), "variance.runs: agent-eval checks the "
                                 "traces recorded; record that many runs of the case (each "
                                 "trace naming the scenario) for pass_rate to apply")
            elif key != "pass_rate":
                self.unsupported(src, (*here, key), f"variance.{key} is not supported")

def translate(path: FsPath, root: FsPath, read: Callable[[FsPath], str],
              rel: Callable[[FsPath], str]) -> Translation:
    return _EvalView(path, root, read, rel).translate()


def _not_a_case(data: Any) -> str | None:
    """Why a file that looks like EvalView test cases is not read as one (None for another
    file of the folder, such as its config.yaml): a case lacks input or expected, or the
    file is a list of cases."""
    if isinstance(data, dict) and ("expected" in data or {"name", "input"} <= data.keys()):
        missing = "input" if "expected" in data else "expected"
        return (f"this EvalView test case has no {missing}: a case needs name, input and "
                "expected")
    if isinstance(data, list) and any(isinstance(c, dict) and "expected" in c for c in data):
        return ("a list of EvalView test cases is not read: write each case (name, input, "
                "expected) in a file of its own")
    return None


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, without where a link led."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    return exc.strerror or str(exc)
