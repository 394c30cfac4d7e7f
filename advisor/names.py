"""File names made from user text: one safe component, and names made distinct.

Every generated file name that carries a site, cluster or topology name goes through
:func:`safe_name` (no path separators, hidden files, options or Windows device names);
names joined from several user names go through :func:`joined_names` (or
:func:`distinct_names`), so that two keys never share a file, even on a case-insensitive
file system. :mod:`advisor.safe_write` then writes them.
"""

from __future__ import annotations

__all__ = ["distinct_names", "joined_names", "safe_name"]

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from advisor.errors import AdvisorError

# Longest name safe_name returns [characters]: room for a suffix such as "-galera.cnf".
_SAFE_NAME_CHARS = 100
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
# Device names Windows refuses whatever the extension (a report may be copied there).
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}


def safe_name(text: str) -> str:
    """A file-name component made from user text (a site or topology name).

    Runs of characters outside ``[A-Za-z0-9_.-]`` become ``_``; a leading dot or dash gets a
    ``_`` before it (no hidden files, no ``..``, nothing a shell reads as an option); Windows
    device names get a ``_`` after them; long names are cut and given a hash suffix so that
    two long names stay distinct.

    >>> [safe_name(s) for s in ("paris-1", "../etc/passwd", "..", "", "São Paulo", "CON")]
    ['paris-1', '_.._etc_passwd', '_..', '_', 'S_o_Paulo', 'CON_']
    """
    name = _UNSAFE_CHARS.sub("_", text)
    if not name or name[0] in ".-":
        name = "_" + name
    stem = name.split(".")[0]
    if stem.lower() in _WINDOWS_RESERVED:
        name = stem + "_" + name[len(stem) :]
    if len(name) > _SAFE_NAME_CHARS:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = name[: _SAFE_NAME_CHARS - 13] + "-" + digest
    return name


def distinct_names(
    proposed: Mapping[tuple[str, ...], str], *, fold: Callable[[str], str] = str.casefold
) -> dict[tuple[str, ...], str]:
    """Each key's proposed name, made distinct: names that two keys share get a hash suffix.

    A generated name joins several user names (the two sites of a chart, the sites of a
    cluster), and joins can meet: ``a-b`` + ``c`` and ``a`` + ``b-c`` both give ``a-b-c``.
    Every name shared under ``fold`` (by default: ignoring case, as macOS and Windows file
    systems do) gets ``-`` and 8 hex digits of the SHA-256 of its key, so each keeps its
    readable part and the result is a function of the keys alone. Names nobody shares stay as
    proposed.

    >>> names = distinct_names({("a-b", "c"): "a-b-c", ("a", "b-c"): "a-b-c", ("x",): "x"})
    >>> names[("x",)], names[("a-b", "c")] != names[("a", "b-c")]
    ('x', True)
    >>> names[("a-b", "c")].startswith("a-b-c-"), len(names[("a-b", "c")])
    (True, 14)
    """
    names = dict(proposed)
    for attempt in range(8):
        holders: dict[str, list[tuple[str, ...]]] = {}
        for key, name in names.items():
            holders.setdefault(fold(name), []).append(key)
        shared = [key for keys in holders.values() if len(keys) > 1 for key in keys]
        if not shared:
            return names
        for key in shared:
            # A suffix could meet another key's plain name; the next round then suffixes again.
            names[key] = f"{names[key]}-{_key_digest(key, attempt)}"
    raise AdvisorError(f"cannot make distinct file names for {sorted(names)[:3]}...")


def joined_names(keys: Iterable[Sequence[str]], separator: str = "-") -> dict[tuple[str, ...], str]:
    """A file-name part per key: its names through :func:`safe_name`, joined, made distinct.

    For names built from several user names, such as a chart per site pair
    (``rtt-<a>-<b>.svg``) or a channel per pair of clusters.

    >>> names = joined_names([("paris", "berlin"), ("a-b", "c"), ("a", "b-c")])
    >>> names[("paris", "berlin")], names[("a-b", "c")][:6], names[("a", "b-c")][:6]
    ('paris-berlin', 'a-b-c-', 'a-b-c-')
    """
    return distinct_names({tuple(key): separator.join(safe_name(p) for p in key) for key in keys})


def _key_digest(key: tuple[str, ...], attempt: int) -> str:
    text = json.dumps([attempt, *key]) if attempt else json.dumps(list(key))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
