"""Pydantic validation errors as ``FILE:LINE:COL: message`` problems, at the line of the
key that is wrong, with a "did you mean" for a misspelt key or tag."""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel

from agent_eval.textdist import suggest
from agent_eval.yamlpos import Path, Positions

__all__ = ["describe", "position_of", "union_noise"]


def position_of(problem: str) -> tuple[int, int]:
    """(line, column) of a ``FILE:LINE:COL: message`` problem (for sorting)."""
    parts = problem.split(": ", 1)[0].rsplit(":", 2)
    try:
        return int(parts[-2]), int(parts[-1])
    except (IndexError, ValueError):
        return 0, 0


def _walk(data: Any, loc: tuple[Any, ...], kind: str) -> Path:
    """The data path of a pydantic error location: union-member tags in ``loc`` are
    skipped; the last step of a ``missing`` error (a key not in the data) is kept."""
    path: list[str | int] = []
    node = data
    for n, step in enumerate(loc):
        in_dict = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if in_dict or in_list:
            node = node[step]
            path.append(step)
        elif n == len(loc) - 1 and isinstance(step, str) and kind == "missing":
            path.append(step)
    return tuple(path)


def union_noise(errors: list[Any], data: Any) -> list[Any]:
    """The errors of a union (``str | list[str]``, ``bool | TextExpect``) as one says them:
    pydantic reports each member's failure, so ``traces: [a, 3]`` was also "traces: Input
    should be a valid string", though a list is fine, and ``forbidden_tools: {a: 1}`` was
    two problems at one key. A member's type error at a value ("Input should be a valid
    string") is dropped when the value has the shape of another member, which says what is
    wrong (an error inside the value, or another kind of error at it); the members' type
    errors at one value become one ("a valid string or a valid list")."""
    paths = [_walk(data, tuple(e["loc"]), e["type"]) for e in errors]
    member = [str(e["type"]).endswith("_type") and len(e["loc"]) > len(path)
              and isinstance(e["loc"][-1], str) for e, path in zip(errors, paths, strict=True)]
    out: list[Any] = []
    merged: dict[Path, Any] = {}
    for e, path, is_member in zip(errors, paths, member, strict=True):
        if not is_member:
            out.append(e)
            continue
        if any(other[:len(path)] == path and (len(other) > len(path) or not m)
               for other, m in zip(paths, member, strict=True)):
            continue  # the member the value has the shape of says what is wrong
        first = merged.get(path)
        if first is None:
            merged[path] = e = dict(e)
            out.append(e)
        else:
            want = str(e["msg"]).removeprefix("Input should be ")
            if want not in first["msg"]:
                first["msg"] = f"{first['msg']} or {want}"
    return out


def _unwrap(annotation: Any, value: Any) -> Any:
    """The model (or container type) that validates ``value``: ``Annotated`` and
    ``Optional`` are stripped, and a union of models is resolved by its ``Literal``
    tag fields (``type: before`` -> BeforeRule)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return annotation
    members = [_strip(a) for a in typing.get_args(annotation) if a is not type(None)]
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if isinstance(value, dict) and models:
        for m in models:
            tags = {name: typing.get_args(f.annotation) for name, f in m.model_fields.items()
                    if typing.get_origin(f.annotation) is typing.Literal}
            if tags and all(value.get(name) in allowed for name, allowed in tags.items()):
                return m
        if len(models) == 1:
            return models[0]
        return None
    containers = [m for m in members if typing.get_origin(m) in (list, dict)]
    if isinstance(value, list | dict) and containers:
        want = list if isinstance(value, list) else dict
        return next((c for c in containers if typing.get_origin(c) is want), None)
    return None


def _strip(annotation: Any) -> Any:
    """A type without its ``Annotated`` wrappers (union members tagged for a
    discriminator)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _model_at(model: type[BaseModel], data: Any, path: Path) -> type[BaseModel] | None:
    """The model that validates the mapping at ``path`` of ``data`` (for "did you
    mean")."""
    current: Any = model
    node = data
    for step in path:
        current = _unwrap(current, node)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            name = next((n for n, f in fields.items() if step in (n, f.alias)), None)
            if name is None:
                return None
            current = fields[name].annotation
        elif typing.get_origin(current) in (list, dict):
            current = typing.get_args(current)[-1]
        else:
            return None
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            node = None
    current = _unwrap(current, node)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _field_names(model: type[BaseModel]) -> set[str]:
    return {f.alias or n for n, f in model.model_fields.items()}


def _name(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "value"


def describe(err: Any, model: type[BaseModel], data: Any, positions: Positions,
              prefix: Path) -> str:
    loc = tuple(err["loc"])
    kind = err["type"]
    path = _walk(data, loc, kind)
    full = (*prefix, *path)
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        owner = _model_at(model, data, path[:-1])
        hint = suggest(key, _field_names(owner)) if owner else ""
        allowed = f"; allowed: {', '.join(sorted(_field_names(owner)))}" if owner else ""
        return f"{positions.where(full)}: unknown key '{key}'{hint}{allowed}"
    if kind == "missing":
        key = str(path[-1]) if path else str(loc[-1])
        where = positions.where(full[:-1] if path else full)
        owner_path = path[:-1] if path else path
        return f"{where}: '{_name(owner_path)}' is missing required key '{key}'" \
            if owner_path else f"{where}: missing required key '{key}'"
    ctx = err.get("ctx") or {}
    if kind == "union_tag_invalid":
        tag_key = str(ctx.get("discriminator", "type")).strip("'")
        tags = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",")]
        tag = str(ctx.get("tag", ""))
        return (f"{positions.where((*full, tag_key))}: {_name(path)}: unknown {tag_key} "
                f"'{tag}'{suggest(tag, tags)}; known: {', '.join(tags)}")
    if kind == "union_tag_not_found":
        tag_key = str(ctx.get("discriminator", "type")).strip("'")
        return f"{positions.where(full)}: {_name(path)}: missing required key '{tag_key}'"
    msg = str(err["msg"])
    for noise in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(noise)
    got = err.get("input")
    shown = f" (got {got!r})" if not isinstance(got, dict | list) and got is not None else ""
    if kind in ("value_error", "assertion_error"):
        shown = ""
    if kind == "string_type" and isinstance(got, int | float):
        # `suite: 2024`, `id: 123`: YAML reads a number (or true/false) where a text is
        # wanted; quoted, it is the text as written
        shown += "; quote the value to write it as text"
    if kind == "literal_error" and isinstance(got, str):
        # one of a fixed set (output.format, sequence_mode, ...): the closest one
        shown += suggest(got, re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
    return f"{positions.where(full)}: {_name(path)}: {msg}{shown}"
