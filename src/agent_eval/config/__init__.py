"""The config's models (``models``, ``policy``), the JSON Schema compiler and the
validation messages; the package itself exports nothing (import the modules)."""

from __future__ import annotations

__all__: list[str] = []
