"""Dotted-path changes to a scenario document: ``kernel.profile``, ``groups.svc.cpu_max``,
``groups.0.cpu_max``, ``tasks.worker.program.0.loop.body.1.sleep_exp``.

A path is a sequence of keys separated by dots. In a table a key names a field (a key
that itself contains dots, such as a cost-table override, is written in double quotes:
``machine.cost."cacheline.same_llc_ns"``). In a list (``groups``, ``tasks``,
``templates``, a program) a key is an index (``0``, ``-1`` for the last) or the
``name`` of an element. A missing table on the way is created (the core then says
whether the field exists).

Two conveniences follow the ``[machine]`` rule "exactly one of preset, topo, host":
setting ``machine.preset`` (or anything under ``machine.topo``, or ``machine.host``)
clears the other two, and ``machine`` = ``"NAME"`` or ``"topo(S,L,C,T)"`` is the same as
``--machine NAME`` of ``schedlab reproduce``.

:func:`apply_changes` returns the changed document and, per change, the *canonical*
path the core uses in its errors (``groups[0].cpu_max``), so that an error the core
finds in the changed document can be blamed on the change that caused it
(:func:`blame`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InputError

__all__ = ["ChangePathError", "split_path", "apply_changes", "blame", "value_text"]


class ChangePathError(InputError):
    """A change whose path does not lead anywhere in the document (unknown element name,
    index out of range, a path through a number or a string)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def split_path(path: str) -> list[str]:
    """``'machine.cost."cacheline.same_llc_ns"'`` -> ``['machine', 'cost', 'cacheline.same_llc_ns']``."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = False
    just_closed = False
    for ch in path:
        if ch == '"':
            quoted = not quoted
            just_closed = not quoted
            continue
        if ch == "." and not quoted:
            parts.append("".join(buf))
            buf = []
            just_closed = False
            continue
        buf.append(ch)
    if quoted:
        raise ChangePathError(path, "unbalanced double quote")
    parts.append("".join(buf))
    if any(p == "" for p in parts) and not just_closed:
        raise ChangePathError(path, "empty key (two dots in a row, or a leading or trailing dot)")
    return parts


def value_text(value: Any) -> str:
    """A value as a TOML/JSON reader would write it (strings quoted)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _list_index(path: str, node: list, key: str, where: str) -> int:
    try:
        i = int(key)
    except ValueError:
        i = None
    if i is not None:
        if not -len(node) <= i < len(node):
            raise ChangePathError(path, f"index {i} is out of range: {where} has {len(node)} element(s)")
        return i % len(node)
    matches = [k for k, item in enumerate(node) if isinstance(item, dict) and item.get("name") == key]
    if len(matches) == 1:
        return matches[0]
    names = [item.get("name") for item in node if isinstance(item, dict) and item.get("name") is not None]
    if matches:
        raise ChangePathError(path, f"{where} has {len(matches)} elements named '{key}': use an index")
    known = ", ".join(map(str, names)) if names else "none has a name"
    raise ChangePathError(path, f"{where} has no element named '{key}' (names: {known}; "
                                f"or an index 0..{len(node) - 1})" if node else f"{where} is empty")


def _machine_shorthand(value: Any) -> dict | None:
    if isinstance(value, str):
        from .machine_names import machine_spec

        return machine_spec(value)
    return None


def _set(doc: dict, path: str, value: Any) -> str:
    """Sets one path in ``doc`` (in place); returns its canonical form."""
    parts = split_path(path)
    if parts == ["machine"] and isinstance(value, str):
        machine = doc.get("machine") if isinstance(doc.get("machine"), dict) else {}
        doc["machine"] = machine
        machine.update({"preset": None, "topo": None, "host": False})
        machine.update(_machine_shorthand(value) or {})
        return "machine"
    node: Any = doc
    canon: list[str] = []
    for depth, key in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth]) or "the scenario"
        if isinstance(node, list):
            i = _list_index(path, node, key, where)
            canon_key = f"[{i}]"
            if last:
                node[i] = value
            else:
                if not isinstance(node[i], (dict, list)):
                    raise ChangePathError(path, f"{where}[{i}] is {value_text(node[i])}, not a table or a list")
                node = node[i]
            canon.append(canon_key)
            continue
        if not isinstance(node, dict):  # pragma: no cover - guarded below
            raise ChangePathError(path, f"{where} is not a table")
        canon.append(("." if canon else "") + key)
        if last:
            node[key] = value
        else:
            nxt = node.get(key)
            if nxt is None:
                nxt = {}
                node[key] = nxt
            elif not isinstance(nxt, (dict, list)):
                raise ChangePathError(path, f"{'.'.join(parts[:depth + 1])} is {value_text(nxt)}, "
                                            f"not a table or a list")
            node = nxt
    # [machine]: exactly one of preset / topo / host.
    if parts[0] == "machine" and len(parts) >= 2 and parts[1] in ("preset", "topo", "host"):
        machine = doc["machine"]
        for other in ("preset", "topo", "host"):
            if other != parts[1]:
                machine[other] = False if other == "host" else None
    return "".join(canon)


def apply_changes(doc: Mapping[str, Any], changes: Mapping[str, Any]) -> tuple[dict, dict[str, str]]:
    """Returns (a changed deep copy of ``doc``, {path: canonical path}), changes applied in
    order. Raises :class:`ChangePathError` for a path that leads nowhere."""
    out = copy.deepcopy(dict(doc))
    canon: dict[str, str] = {}
    for path, value in changes.items():
        canon[path] = _set(out, path, copy.deepcopy(value))
    return out, canon


def blame(field: str, canon: Mapping[str, str]) -> list[str]:
    """The changes an error on ``field`` (the core's canonical path) is attributed to: those
    whose canonical path is the field, lies under it or contains it; failing that, none."""
    def related(a: str, b: str) -> bool:
        return a == b or a.startswith(b + ".") or a.startswith(b + "[") or b.startswith(a + ".") \
            or b.startswith(a + "[")

    if not field:
        return []
    return [p for p, c in canon.items() if related(c, field)]


def describe(changes: Mapping[str, Any], paths: Sequence[str]) -> str:
    """``a = 1, b = "x"`` for the given paths of ``changes``."""
    return ", ".join(f"{p} = {value_text(changes[p])}" for p in paths)


def _lookup(doc: Any, path: str) -> Any:
    node = doc
    for key in split_path(path):
        if isinstance(node, list):
            try:
                node = node[_list_index(path, node, key, "")]
            except ChangePathError:
                return None
        elif isinstance(node, dict):
            node = node.get(key)
        else:
            return None
    return node


def parse_assignment(text: str, doc: Mapping[str, Any] | None = None) -> tuple[str, Any]:
    """``"KEY=VALUE"`` (as ``--set`` takes it) -> (key, value). VALUE is read as a TOML
    value (``8``, ``2.5``, ``true``, ``"a b"``, ``[1, 2]``); text that is not one, or a
    number where ``doc`` holds a string at KEY (``kernel.profile=5.4``), stays text."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    key, eq, raw = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise InputError(f"--set '{text}': expected KEY=VALUE, e.g. kernel.profile=6.5")
    split_path(key)  # a malformed path fails here, naming itself
    raw = raw.strip()
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    if doc is not None and not isinstance(value, str) and isinstance(_lookup(doc, key), str):
        value = raw
    return key, value
