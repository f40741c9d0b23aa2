"""The command-line commands, one module each (``_cli`` dispatches to them); the
package itself exports nothing."""

from __future__ import annotations

__all__: list[str] = []
