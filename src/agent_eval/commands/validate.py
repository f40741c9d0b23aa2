"""``agent-eval validate``: the suite and its policies, no traces."""

from __future__ import annotations

import argparse

from agent_eval.api import load_suite
from agent_eval.errors import ExitCode
from agent_eval.outputs import check_output_folder
from agent_eval.safetext import one_line


def main(args: argparse.Namespace) -> ExitCode:
    suite = load_suite(args.config, dialect=getattr(args, "dialect", "auto"))  # as run
    # run refuses the suite's output.dir outside the repository ("ok" was said); with
    # --output-dir (the folder run will be given instead, as the action's), it is not used
    if suite.model.output.dir and not getattr(args, "output_dir", None):
        pos = suite.positions.get(("output", "dir"))
        check_output_folder(suite.base_dir / suite.model.output.dir, suite.root,
                            f"{suite.file}:{pos.line}:{pos.col}")
    policies = len(suite.policies)
    scenarios = ""
    if suite.scenarios is not None:
        n, c = len(suite.scenarios.scenarios), len(suite.scenarios.criteria)
        scenarios = f", {n} scenario(s), {c} criteri{'on' if c == 1 else 'a'}"
    # a peer config's keys agent-eval cannot apply: a run reports each (import/unsupported,
    # a warning, so it is at best warn); "ok" alone would say every check will run
    for note in suite.notes:
        at = note.config
        print(one_line(f"{note.severity}: {at.file}:{at.line}:{at.col}: not applied: "
                       f"{note.message} [{note.rule}]"))
    skipped = ""
    if suite.notes:
        n = len(suite.notes)
        skipped = (f"; {n} key(s) of the {suite.dialect} config not applied (a run warns "
                   f"of {'it' if n == 1 else 'each'}: at best warn)")
    print(one_line(f"ok: {suite.file}: suite '{suite.name}', {len(suite.tests)} test(s), "
                   f"{policies} polic{'y' if policies == 1 else 'ies'}{scenarios}{skipped}"))
    return ExitCode.OK
