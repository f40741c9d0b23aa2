"""The jinja2 environment the template-based renderers share (templates/ in the package).

jinja2 is imported only when a template is rendered, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


def environment(*, autoescape: bool) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("agent_eval.renderers", "templates"),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
