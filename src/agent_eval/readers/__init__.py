"""Readers: trace files in any supported format -> canonical traces.

``READERS`` is the registry (one line per format). ``expand`` turns globs into files;
``read_sources`` streams traces, input errors and ignored-event counts from them.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from agent_eval.errors import InputError, MoreInputErrors
from agent_eval.jsonutil import reading
from agent_eval.limits import DEFAULT, LimitError, Limits
from agent_eval.model import Trace
from agent_eval.paths import not_utf8
from agent_eval.readers import native
from agent_eval.readers._foreign import is_native
from agent_eval.readers.base import (
    FileRead,
    IgnoredEvents,
    Reader,
    ReadItem,
    SourceFile,
    bad_figure,
    negative_figure,
)
from agent_eval.readers.sniffs import SNIFFS
from agent_eval.registry import LazyRegistry
from agent_eval.rule_ids import (
    INPUT_LIMIT_EXCEEDED,
    INPUT_NO_TRACES,
    INPUT_OUTSIDE_ROOT,
    INPUT_PARSE_ERROR,
    INPUT_READER_ERROR,
    INPUT_UNKNOWN_FORMAT,
    INPUT_UNREADABLE_FILE,
)
from agent_eval.safetext import clean_text, clean_trace

# The registry, in the order auto-detection tries the readers: `"name": "module:READER"`.
# A reader's module is imported when its format is read or its sniff is asked (start-up
# time, docs/performance.md).
READERS: LazyRegistry[Reader] = LazyRegistry("agent_eval.readers", {
    # containers of other formats' payloads first: Inspect logs, LangSmith runs and
    # LangChain messages embed raw OpenAI / Anthropic bodies
    "inspect": "inspect:READER",
    "langsmith": "langsmith:READER",
    "langchain": "langchain:READER",
    # OTLP / OpenAI / Codex: their sniffs exclude the other formats
    "codex": "codex:READER",
    "openai_agents": "openai_agents:READER",
    "otlp": "otlp:READER",
    "openai_responses": "openai:RESPONSES_READER",
    "openai_chat": "openai:CHAT_READER",
    # a Managed Agents session's events carry Anthropic fields (tool_use_id): before
    # the Anthropic reader (its sniff wants lines starting ["client.beta.sessions.)
    "anthropic_agents": "anthropic_agents:READER",
    # the more specific first (Claude Code rows may hold Anthropic blocks)
    "claude_code": "claude_code:READER",
    "mcp": "mcp:READER",
    "anthropic": "anthropic:READER",
    # other agent formats (each sniff is specific to its own format)
    "atif": "atif:READER",
    "gemini_cli": "gemini_cli:READER",
    "openhands": "openhands:READER",
    "vercel_ai": "vercel_ai:READER",
    # Assay's recorded traces: its episode events share native's "tool_call" type name
    # (its sniff wants "episode_id"), so before the native reader, the last
    "assay": "assay:READER",
    "native": "native:READER",
})
# The readers whose sniff may accept a file the native sniff accepts: every other sniff
# asks is_native first and says no (tests/readers/test_detection.py checks it). A native
# file is offered only to these, in the registry's order, then to native: detecting it
# imports no other reader. Inspect takes a zip archive, OTLP its own and Jaeger's marks,
# OpenAI and Anthropic their VCR cassettes, Assay its episode events.
SNIFFS_NATIVE = ("inspect", "otlp", "openai_responses", "openai_chat", "anthropic", "assay")
_FOR_NATIVE = tuple(n for n in READERS if n in SNIFFS_NATIVE or n == native.READER.name)
SNIFF_BYTES = 8192

__all__ = ["READERS", "ErrorBound", "FileRead", "IgnoredEvents", "ReadItem", "Reader",
           "SourceFile", "expand", "read_file", "read_sources"]


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, root)).as_posix()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _glob(pattern: str, base: str) -> list[str]:
    """``glob.glob(pattern, root_dir=base, recursive=True)``, except that ``**`` never
    enters a symbolic link to a directory (a link to ``..`` would make it walk forever)."""
    if not glob.has_magic(pattern):
        return [pattern] if os.path.lexists(os.path.join(base, pattern)) else []
    anchor = Path(pattern).anchor
    if anchor:  # an absolute glob: walked from its anchor, its matches absolute too
        return [os.path.join(anchor, m) for m in _glob(pattern[len(anchor):], anchor)]
    parts: list[str] = []
    for p in pattern.split("/"):
        if p not in ("", ".") and not (p == "**" and parts and parts[-1] == "**"):
            parts.append(p)  # **/** is **: each more made the walk exponential
    out: list[str] = []
    stack: list[tuple[str, int]] = [("", 0)]  # (folder relative to base, next part)
    seen: set[tuple[str, int]] = set()  # a folder reached twice at one part (*/**/x)
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        folder, i = state
        if i == len(parts):
            if folder:
                out.append(folder)
            continue
        part = parts[i]
        here = os.path.join(base, folder) if folder else base
        if part == "**":
            stack.append((folder, i + 1))  # ** matches no folder at all, too
            last = i + 1 == len(parts)
            for entry in _entries(here):
                if entry.name.startswith("."):
                    continue
                if _real_dir(entry):
                    stack.append((_join(folder, entry.name), i))
                elif last:  # a final ** matches the files below it too
                    out.append(_join(folder, entry.name))
        elif glob.has_magic(part):
            hidden = part.startswith(".")
            for entry in _entries(here):
                visible = hidden or not entry.name.startswith(".")
                if (visible and fnmatch.fnmatchcase(entry.name, part)
                        and (i + 1 == len(parts) or _is_dir(entry))):
                    stack.append((_join(folder, entry.name), i + 1))
        elif os.path.lexists(os.path.join(here, part)):
            stack.append((_join(folder, part), i + 1))
    return out


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _real_dir(entry: os.DirEntry[str]) -> bool:
    """A folder that is not a symbolic link (what ``**`` walks into)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


OUTSIDE = ("outside the repository: agent-eval reads only files inside the repository "
           "(the folder holding .git above the suite file); move the traces into it")


def expand(patterns: Iterable[str], base: Path, root: Path, config_dir: Path,
           where: tuple[str, int] | None, limits: Limits = DEFAULT,
           ) -> tuple[list[SourceFile], list[InputError]]:
    """Files matched by ``patterns`` (relative to ``base``), sorted and without
    repeats. A pattern that matches nothing is an input error located at ``where``
    (the config file and the line of its ``traces:`` key) or, for patterns given on
    the command line or to the library (``where`` None), at the pattern itself.

    Patterns written in the suite (``where`` given) never read outside ``root``: one
    that leaves it (``../x/*.jsonl``, an absolute path) is an input error before
    anything is listed, and a match that is a symbolic link leading out of it is an
    input error naming the link (whether or not its target exists). A pattern from the
    command line or the library that leaves ``root`` is the operator's own choice and
    is read where it points; one inside ``root`` is confined as a suite's is (the
    operator chose a folder of the repository, not where a committed link in it
    leads). ``**`` never follows symbolic links to folders."""
    files: list[SourceFile] = []
    errors: list[InputError] = []
    seen: set[Path] = set()
    reported: set[str] = set()  # the matches already reported, under any pattern
    real_root = os.path.realpath(root)
    shown_base = _rel(base.resolve(), root.resolve()) or "."
    for pattern in patterns:
        file, line = where if where is not None else (pattern, 0)
        if _has_control(pattern) or not_utf8(pattern):
            errors.append(INPUT_OUTSIDE_ROOT.input_error(
                # the pattern names the error: escaped (a line break in it was printed by
                # convert as given, a workflow command at the next line's start)
                repr(file)[1:-1] if not_utf8(file) or _has_control(file) else file, line,
                "a trace path or glob holds control characters or bytes that are not "
                "UTF-8; rename the files"))
            continue
        lexical = os.path.normpath(os.path.join(os.path.abspath(base), pattern))
        inside = _inside(lexical, os.path.normpath(os.path.abspath(root)))
        confined = where is not None or inside
        if confined and not inside:
            errors.append(INPUT_OUTSIDE_ROOT.input_error(file, line,
                                                         f"'{pattern}' is {OUTSIDE}"))
            continue
        hit = False  # a file, or an entry reported, matched this pattern
        for m in sorted(_glob(pattern, str(base))):
            joined = Path(base, m)
            matched = Path(os.path.normpath(os.path.abspath(joined)))
            shown = _rel(matched, root)  # the path as matched, never where a link leads
            real = os.path.realpath(joined)
            if confined and not _inside(real, real_root):
                hit = True
                if shown not in reported:
                    reported.add(shown)
                    errors.append(INPUT_OUTSIDE_ROOT.input_error(
                        shown, 0,
                        f"a symbolic link that leads {OUTSIDE}; it was "
                        "not read"))
                continue
            kind = _kind(joined)
            if kind == "folder":
                continue  # a glob's folder is not a trace file: passed over, as glob does
            hit = True
            if shown in reported:
                continue
            unshowable = _has_control(shown) or not_utf8(shown)
            if kind != "file":
                reported.add(shown)
                errors.append(INPUT_UNREADABLE_FILE.input_error(
                    shown if not unshowable else repr(shown)[1:-1], 0,
                    f"{kind}; a trace glob reads regular files only: it was not read"))
                continue
            if unshowable:
                reported.add(shown)
                errors.append(INPUT_OUTSIDE_ROOT.input_error(
                    repr(shown)[1:-1], 0,
                    "the file name holds control characters or bytes that are not UTF-8; "
                    "rename the file (it was not read)"))
                continue
            p = Path(real)
            if p not in seen:  # one file read once, under the first name that matched it
                seen.add(p)
                reported.add(shown)
                files.append(SourceFile(str(p), shown, _rel(matched, config_dir), limits))
        if not hit:
            origin = ("relative to the suite file's folder" if where is not None
                      else f"relative to {shown_base}")
            # a folder named whole: "no trace file matches" it, though it is there
            todo = (f"'{pattern}' is a folder: give a glob of its files, such as "
                    f"'{pattern.rstrip('/')}/*.jsonl'" if os.path.isdir(lexical)
                    # the suite's traces: (run --traces and the action's traces input
                    # give others); a pattern given (run --traces, convert, the library)
                    else "check the glob, or give others (run --traces, the action's "
                    "traces input)" if where is not None else "check the path or glob")
            errors.append(INPUT_NO_TRACES.input_error(
                file, line, f"no trace file matches '{pattern}' ({origin}); {todo}"))
    return files, errors


def _kind(path: Path) -> str:
    """What a match is, its links followed, without opening it (a FIFO would block):
    ``file``, ``folder``, or why it is not a file to read."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link in a loop (it leads back to itself)"
        if exc.errno == errno.ENOENT:
            return "a symbolic link to nothing (what it leads to does not exist)"
        return f"an entry that cannot be looked at ({exc.strerror})"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    what = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "an entry")
    return f"{what}, not a regular file"


def _read_head(path: str) -> bytes:
    """The first ``SNIFF_BYTES`` of a file, or all of a shorter one (what ``read`` of an
    ``open(path, "rb")`` file gives, in about half its time: no buffered file made).
    O_BINARY (Windows only): there ``os.open`` opens a file as text, read with CRLF as
    LF and ending at a Ctrl-Z."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        head = os.read(fd, SNIFF_BYTES)
        while 0 < len(head) < SNIFF_BYTES:
            more = os.read(fd, SNIFF_BYTES - len(head))
            if not more:
                break
            head += more
    finally:
        os.close(fd)
    return head


def pick_reader(source: SourceFile, fmt: str) -> Reader | InputError:
    fmt = source.format or fmt  # a file of a known format (a live session) keeps its reader
    if fmt not in ("auto", ""):
        return READERS[fmt]
    try:
        head = _read_head(source.path)
    except OSError:
        try:  # again as before, for the error's words (os.open opens a folder)
            with open(source.path, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            return INPUT_UNREADABLE_FILE.input_error(source.file, 0,
                                                     f"cannot read the file: {exc}")
    # The first reader whose sniff accepts the head. Nearly every sniff first asks whether
    # the file is native (is_native, which keeps its answer for this head): the native
    # sniff runs once per file, here first, and a native file is offered only to the
    # readers that may take one (SNIFFS_NATIVE) before native.
    try:
        native_head = is_native(head, source)
    except Exception:  # said by the first sniff that asks, with its reader's name
        native_head = False
    # The sniffs are asked apart from their readers (readers/sniffs.py): only the module of
    # the reader picked is imported.
    for name in _FOR_NATIVE if native_head else READERS:
        try:
            found = SNIFFS[name](head, source)
        except Exception as exc:  # a sniff never takes the run down either
            return _failed(name, source, exc)
        if found:
            return READERS[name]
    return INPUT_UNKNOWN_FORMAT.input_error(
        source.file, 0,
        f"no reader recognises this file (tried: {', '.join(READERS)}); "
        "set 'format:' in the suite or convert the file")


def _failed(name: str, source: SourceFile, exc: BaseException) -> InputError:
    if isinstance(exc, LimitError):
        return INPUT_LIMIT_EXCEEDED.input_error(source.file, getattr(exc, "line", 0),
                                                str(exc))
    if isinstance(exc, RecursionError):
        return INPUT_LIMIT_EXCEEDED.input_error(
            source.file, 0,
            "the file nests values too deeply to be read (limits.max_depth)")
    if isinstance(exc, MemoryError):
        return INPUT_LIMIT_EXCEEDED.input_error(
            source.file, 0,
            "the file needs more memory than there is; lower the limits "
            "(docs/security.md) or split the file")
    return INPUT_READER_ERROR.input_error(
        source.file, 0,
        f"the {name} reader stopped on this file: {type(exc).__name__}: "
        f"{clean_text(str(exc), 500)}; the other files were still read")


def _clean_error(item: InputError, limits: Limits) -> InputError:
    """An input error with its trace text made safe to show. A JSON text over a limit is
    reported by the readers as not valid JSON (they all catch ``JSONDecodeError``): it
    is filed under its own rule."""
    rule, message = item.rule, item.message
    if rule == INPUT_PARSE_ERROR.id and "(limits." in message:
        rule = INPUT_LIMIT_EXCEEDED.id
    if not message.isprintable() or len(message) > limits.max_value_chars:
        message = clean_text(message, limits.max_value_chars)
    if rule is item.rule and message is item.message:
        return item
    return InputError(rule, item.file, item.line, message)


class ErrorBound:
    """The input errors of one file, bounded: the first ``limit``
    (``limits.max_input_errors``) are kept, each with its line; the others are counted,
    by rule and with the least and greatest of their lines, into one
    :class:`~agent_eval.errors.MoreInputErrors` (:meth:`more`), so that a file of a
    million bad lines is a thousand and one input errors, not a million records in
    memory, and none is skipped unsaid. A ``MoreInputErrors`` given to :meth:`keep` (a
    part of the file read apart, ``--jobs``) is counted in with what it counted: the
    errors of a file's parts, bounded again in read order, are those of the whole file."""

    __slots__ = ("file", "first", "kept", "last", "limit", "rules")

    def __init__(self, file: str, limit: int) -> None:
        self.file = file
        self.limit = limit
        self.kept = 0
        self.rules: dict[str, int] = {}
        self.first = 0  # the least and greatest line of the errors counted (0: none)
        self.last = 0

    def keep(self, error: InputError) -> bool:
        """Whether ``error`` is kept (one of the first ``limit``); if not, it is counted."""
        if isinstance(error, MoreInputErrors):
            for rule, n in error.rules:
                self._count(rule, n, error.first, error.last)
            return False
        if self.kept < self.limit:
            self.kept += 1
            return True
        self._count(error.rule, 1, error.line, error.line)
        return False

    def _count(self, rule: str, n: int, first: int, last: int) -> None:
        self.rules[rule] = self.rules.get(rule, 0) + n
        if first > 0 and (self.first == 0 or first < self.first):
            self.first = first
        self.last = max(self.last, last)

    def more(self) -> MoreInputErrors | None:
        """The one input error that says what was counted (None: nothing was)."""
        if not self.rules:
            return None
        total = sum(self.rules.values())
        rules = tuple(sorted(self.rules.items()))
        which = ", ".join(f"{n:,} {rule}" for rule, n in rules)
        first, last = self.first, self.last
        where = ("the file as a whole" if first == 0 else f"line {first}" if first == last
                 else f"lines {first}-{last}")
        return MoreInputErrors(
            INPUT_LIMIT_EXCEEDED.id, self.file, first,
            f"{total:,} more input error(s) on {where} are counted, not listed ({which}): "
            f"only the first {self.limit:,} found in this file are listed "
            "(limits.max_input_errors); fix those, or raise the limit to list more",
            rules, first, last)


def read_file(reader: Reader, source: SourceFile) -> Iterator[ReadItem]:
    """``reader.read(source)``, where every failure is an input error for this file
    (the files before and after it are still read), within the file's limits, with
    every trace's names made safe to show (:func:`agent_eval.safetext.clean_trace`),
    and with at most ``limits.max_input_errors`` input errors, then one that counts the
    others (:class:`ErrorBound`)."""
    bound = ErrorBound(source.file, source.limits.max_input_errors)
    for item in _read_file(reader, source):
        if isinstance(item, InputError) and not bound.keep(item):
            continue
        yield item
    more = bound.more()
    if more is not None:
        yield more


def _read_file(reader: Reader, source: SourceFile) -> Iterator[ReadItem]:
    reading(source.limits)
    limits = source.limits
    try:
        items = reader.read(source)
    except Exception as exc:
        yield _failed(reader.name, source, exc)
        return
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as exc:  # a corrupt archive, a bug: an input error, not a crash
            yield _failed(reader.name, source, exc)
            return
        if type(item) is Trace:
            for loc, size in clean_trace(item, limits):
                yield INPUT_LIMIT_EXCEEDED.input_error(
                    loc.file, loc.line,
                    f"the tool name is {size:,} characters long, longer than "
                    f"limits.max_name_chars ({limits.max_name_chars:,}): it was cut, and the "
                    "rules were matched against its first characters only; raise "
                    "limits.max_name_chars to check the whole name")
            yield from negative_figures(item)
        elif type(item) is InputError:
            item = _clean_error(item, limits)
        yield item


_FIGURES = ("input_tokens", "output_tokens", "total_tokens", "cost_usd", "latency_ms")
_NUMBERS = (int, float)  # a figure of any other type is the reader's to report, not compared


def negative_figures(trace: Trace) -> list[InputError]:
    """Token counts, costs, latencies and durations of ``trace`` that are below 0, over
    :data:`~agent_eval.readers.base.FIGURE_MAX` (10^15), infinite or NaN, each an input
    error at its line and made unknown (None) in place, whatever the format: such a
    figure can only come from a broken or edited trace; summed with the others a
    negative one would hide a budget overrun, and a huge one would overflow the sums
    and means to infinity. An LLM call with a negative
    token count has no total either (it may have been made from it); one whose total is
    below its token counts has their sum as its total. The tool
    calls of a very long trace (a CallLog) are checked by the native reader as it reads
    them (docs/formats.md "Numbers")."""
    errors: list[InputError] = []
    for key in ("duration_ms", "cost_usd", "total_tokens"):
        value = getattr(trace, key)
        if value is not None and type(value) in _NUMBERS and bad_figure(value):
            end = trace.end_location
            errors.append(negative_figure("the trace's ", key, value, end.file, end.line))
            setattr(trace, key, None)
    for call in trace.llm_calls:
        for key in _FIGURES:
            value = getattr(call, key)
            if value is not None and type(value) in _NUMBERS and bad_figure(value):
                loc = call.location
                errors.append(negative_figure("", key, value, loc.file, loc.line))
                setattr(call, key, None)
                if key in ("input_tokens", "output_tokens"):
                    call.total_tokens = None
        # a total below its own (recorded) parts contradicts them: read as their sum, as a
        # trace's total below its calls' is (a total of 10 for 900,000 + 100,000 tokens
        # would hide a budget overrun)
        t = call.total_tokens
        if t is not None and type(t) in _NUMBERS:
            i, o = call.input_tokens, call.output_tokens  # (no generator: once per call)
            parts = ((i if i is not None and type(i) in _NUMBERS else 0)
                     + (o if o is not None and type(o) in _NUMBERS else 0))
            if t < parts:
                call.total_tokens = parts
    calls = trace.tool_calls
    if type(calls) is list:
        for tool_call in calls:
            value = tool_call.latency_ms
            if value is not None and type(value) in _NUMBERS and bad_figure(value):
                loc = tool_call.location
                errors.append(negative_figure(f"{tool_call.name}: ", "latency_ms", value,
                                              loc.file, loc.line))
                tool_call.latency_ms = None
    return errors


def read_sources(sources: Iterable[SourceFile], fmt: str = "auto") -> Iterator[ReadItem]:
    for source in sources:
        reading(source.limits)
        reader = pick_reader(source, fmt)
        if isinstance(reader, InputError):
            yield reader
            continue
        yield FileRead(source.file, reader.name)
        yield from read_file(reader, source)
