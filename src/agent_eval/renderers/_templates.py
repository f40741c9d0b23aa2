"""The jinja2 environment the template-based renderers share (templates/ in the package).

jinja2 is imported only when a template is rendered, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


def environment(*, autoescape: bool,
                finalize: Callable[[Any], Any] | None = None) -> jinja2.Environment:
    """The environment; ``finalize``: applied to the value of every ``{{ … }}`` before
    it is escaped (jinja2's own hook)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("agent_eval.renderers", "templates"),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
    )
