"""What several commands do with their options: the output formats, colour, the
output folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from agent_eval.errors import ConfigError
from agent_eval.outputs import output_folder
from agent_eval.paths import not_utf8
from agent_eval.renderers import RENDERERS
from agent_eval.suite import Suite
from agent_eval.textdist import suggest

__all__ = ["check_baseline_options", "check_format", "color_wanted", "output_dir",
           "parse_formats"]


def parse_formats(values: list[str] | None) -> list[str] | None:
    """The formats of repeatable / comma-separated ``--format`` options (None: not given);
    an unknown one is a ``ConfigError`` (exit 2) with a "did you mean"."""
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    if not out:
        raise ConfigError(["--format: no format given; " + _known_formats()])
    for name in out:
        check_format(name)
    return out


def check_baseline_options(baseline: str | None, baseline_ref: str | None = None) -> None:
    """``--baseline FILE`` and ``--baseline-ref REF`` as given: an empty one (an unset
    variable in a CI script, ``--baseline "$BASE"``) or both at once is a ``ConfigError``
    (exit 2). Either would otherwise run without the comparison it asked for, or with
    another than the one named, and the regression gates would not be judged against
    it (docs/results.md "The baseline")."""
    for option, value in (("--baseline", baseline), ("--baseline-ref", baseline_ref)):
        if value is not None and not value.strip():
            raise ConfigError([f"{option} is empty (an unset variable?): the run would not "
                               "be compared with a base run and the regression gates would "
                               f"not be judged; give {option} a "
                               f"{'results file' if option == '--baseline' else 'git revision'}"
                               ", or leave the option out to run without a comparison"])
        if value is not None and not_utf8(value):
            # the results name the base run by it: results.json
            # could not be written (an internal error, once every trace was evaluated)
            shown = repr(value)[1:-1]
            what = "path" if option == "--baseline" else "name"
            raise ConfigError([f"{option} {shown}: its {what} holds bytes that are not "
                               "UTF-8, which no output can name; give "
                               + ("a copy of the file under a UTF-8 name"
                                  if option == "--baseline" else "the commit's sha")])
    if baseline is not None and baseline_ref is not None:
        raise ConfigError(["--baseline and --baseline-ref both name a base run; give one "
                           "of them"])


def _known_formats(known: Sequence[str] | None = None) -> str:
    return "known formats: " + ", ".join(known if known is not None else RENDERERS)


def check_format(name: str, known: Sequence[str] | None = None,
                 option: str = "--format") -> None:
    """Raise ``ConfigError`` unless ``name`` is an output format (of ``known``, by default
    every renderer's)."""
    options = list(known if known is not None else RENDERERS)
    if name in options:
        return
    raise ConfigError([f"{option}: unknown output format '{name}'{suggest(name, options)}; "
                       + _known_formats(options)])


def color_wanted(choice: str, stream: object) -> bool:
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if choice == "always":
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def output_dir(option: str | None, suite: Suite) -> Path:
    """The output folder (``--output-dir``, else the suite's ``output.dir``, else
    ``agent-eval-results``), created, once it is known to be safe to write
    (:func:`agent_eval.outputs.output_folder`: never outside the repository)."""
    if option:
        return output_folder(Path(option), suite.root)
    configured = suite.model.output.dir
    if configured:
        pos = suite.positions.get(("output", "dir"))
        return output_folder(suite.base_dir / configured, suite.root,
                             f"{suite.file}:{pos.line}:{pos.col}")
    return output_folder(Path("agent-eval-results"), suite.root)
