"""``agent-eval import FILE --to suite``: a peer's config (Assay, EvalView, CIAgent) as a
native suite file (and native policy files), each key commented with the peer line it came
from; running it gives the same findings as running the peer config directly."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agent_eval.errors import ConfigError, ExitCode
from agent_eval.importers import detect, translator
from agent_eval.importers.base import Translation
from agent_eval.importers.emit import to_yaml
from agent_eval.judge.models import DEFAULT_STORE
from agent_eval.paths import real, rel, repo_root
from agent_eval.safetext import one_line
from agent_eval.suite import read_config_file
from agent_eval.yamlpos import load_yaml


def main(args: argparse.Namespace) -> ExitCode:
    source = Path(args.file).resolve()
    if not source.exists():
        raise ConfigError([f"{args.file}: not found"])
    root = repo_root(source if source.is_dir() else source.parent)

    def read(path: Path) -> str:
        """A file the peer's config names, as `run --dialect` reads it: a regular file
        inside the repository, bounded (a policy: /dev/zero or a FIFO is hostile)."""
        return read_config_file(path, source, root)

    dialect = args.dialect
    if dialect == "auto":
        if source.is_dir():
            dialect = "evalview"
        else:
            try:
                text = read(source)
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError([f"{args.file}: cannot read the config: {exc}"]) from None
            data, _ = load_yaml(text, rel(source, root))
            dialect = detect(data)
    if dialect == "native":
        raise ConfigError([f"{args.file}: this is already an agent-eval suite (or not a "
                           "config of Assay, EvalView or CIAgent); --dialect forces one"])

    try:
        t = translator(dialect)(source, root, read, lambda p: rel(p, root))
    except (OSError, UnicodeDecodeError) as exc:  # the config itself (--dialect given)
        raise ConfigError([f"{args.file}: cannot read the config: {exc}"]) from None
    folder = source if source.is_dir() else source.parent
    out = Path(args.output) if args.output else folder / "agent-eval.yaml"
    if args.traces:
        t.data = {**t.data, "traces": args.traces}
    if out.resolve().parent != folder:  # the files the suite names, from its folder
        _rebase_files(t.data, folder, out.resolve().parent)
    judge = t.data.get("judge")
    if isinstance(judge, dict) and "store" not in judge and out.resolve().parent != folder:
        # the judgements recorded for the peer's file (its store, beside it) serve the
        # imported suite too
        store = os.path.relpath(folder / DEFAULT_STORE, out.resolve().parent)
        t.data = {**t.data, "judge": {**judge, "store": Path(store).as_posix()}}
    written: list[Path] = []
    files = {out: to_yaml(t.data, t.positions, _header(dialect, rel(source, root), t))}
    out_root = real(repo_root(out.resolve().parent))
    for key, (data, positions) in t.policies.items():
        # where the suite names it: the peer's path from its config's folder, from the
        # suite's (../policies/x.yaml too: relative_to(folder) was a ValueError)
        policy = Path(os.path.normpath(out.resolve().parent / os.path.relpath(key, folder)))
        if not real(policy).is_relative_to(out_root):
            raise ConfigError([f"{rel(Path(key), root)}: the imported policy would be "
                               f"written outside the repository ({policy}); write the "
                               "suite (-o) where the policies' paths stay inside it"])
        if any(real(policy) == real(p) for p in files):  # one file would take the other
            raise ConfigError([f"{policy}: the policy imported from {positions.file} "
                               f"would be written over the suite ({out}); write the suite "
                               "(-o) under another name"])
        files[policy] = to_yaml(data, positions, f"agent-eval policy imported from "
                                f"{positions.file} ({dialect}); comments name the source line")
    folders = [p for p in files if p.is_dir()]  # even --force cannot write a file there
    if folders:  # ("[Errno 21] Is a directory", after --force was asked for)
        raise ConfigError([f"{p}: a folder, not a file; give the suite file to write "
                           f"(-o {out / 'agent-eval.yaml'})" if p == out else
                           f"{p}: a folder where the imported policy goes; move it, or "
                           "write the suite (-o) elsewhere" for p in folders])
    existing = [p for p in files if p.exists()]
    if existing and not args.force:
        raise ConfigError([f"{p}: exists; pass --force to overwrite" for p in existing])
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    for note in t.unsupported:  # (a note quotes the peer's file: one line, as the header)
        print(one_line(f"note: {note[0]}:{note[1]}:{note[2]}: {note[3]} (not imported)"),
              file=sys.stderr)
    print(one_line("Wrote " + ", ".join(str(p) for p in written)))
    return ExitCode.OK


def _rebase_files(data: dict[str, Any], folder: Path, to: Path) -> None:
    """Each judge check's ``context_file`` and each output ``json_schema`` file (relative
    to the peer file's ``folder``) as the same file from the folder ``to`` the suite is
    written in (written as they were, they were not found there)."""
    def rebase(node: Any, key: str) -> None:
        name = node.get(key) if isinstance(node, dict) else None
        if isinstance(name, str) and not os.path.isabs(name):
            node[key] = Path(os.path.relpath(folder / name, to)).as_posix()

    for sc in data.get("scenarios") or []:
        expect = sc.get("expect") if isinstance(sc, dict) else None
        if not isinstance(expect, dict):
            continue
        rebase(expect.get("output"), "json_schema")
        judge = expect.get("judge")
        for item in judge if isinstance(judge, list) else []:
            rebase(item, "context_file")


def _header(dialect: str, source: str, t: Translation) -> str:
    """The suite file's opening comment: where it came from and, one per line, what of
    the original it does not apply (the notes `import` prints: the suite's own runs do not
    repeat them, so the file keeps them in sight)."""
    text = (f"agent-eval suite imported from {one_line(source)} ({dialect}) by "
            "`agent-eval import`.\n"
            "Each comment names the line of the original it came from; see "
            "docs/migrating.md for what differs.")
    if t.unsupported:
        text += ("\nNot applied as in the original (review each; this suite's runs do not "
                 "report them):")
        for file, line, col, message in t.unsupported:
            text += "\n- " + one_line(f"{file}:{line}:{col}: {message}")
    return text
