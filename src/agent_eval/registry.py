"""A registry whose entries are imported when first used (start-up time, docs/performance.md).

A registry package (``checks``, ``readers``) lists its entries one line each: the name and
where the entry is, ``"module:ATTRIBUTE"`` inside the package. Listing the names (iterating,
``in``, ``len``) imports nothing; looking one entry up imports its module, once; ``values()``
and ``items()`` import the entries in order, each when it is reached, so a loop that stops
at the first match imports only the modules before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class LazyRegistry(Mapping[str, T], Generic[T]):
    def __init__(self, package: str, entries: dict[str, str]) -> None:
        self._package = package
        self._where = dict(entries)  # name -> "module:ATTRIBUTE", in the registry's order
        self._loaded: dict[str, T] = {}

    def __getitem__(self, name: str) -> T:
        try:
            return self._loaded[name]
        except KeyError:
            pass
        module, _, attribute = self._where[name].partition(":")  # KeyError: not an entry
        entry: T = getattr(import_module(f"{self._package}.{module}"), attribute)
        self._loaded[name] = entry
        return entry

    def __contains__(self, name: Any) -> bool:
        return name in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __repr__(self) -> str:
        return f"LazyRegistry({self._package!r}, {self._where!r})"

    def module_of(self, name: str) -> str:
        """The module of entry ``name`` (``agent_eval.checks.args_valid``), not imported."""
        return f"{self._package}.{self._where[name].partition(':')[0]}"
