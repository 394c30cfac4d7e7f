"""Jinja2 filters of the document templates: numbers with units, and escaping per format.

Numbers are written the way a DBA reads them (``9.8 ms``, ``1,500/s``, ``48 %``). Text from
the user (site and hot row names, descriptions, messages quoting them) is escaped for the
place it lands: a Markdown table cell, a configuration comment, an SQL string, a Mermaid
label. HTML is escaped by the environment's autoescape.
"""

from __future__ import annotations

import math

__all__ = ["FILTERS"]

import re
import textwrap
from collections.abc import Callable
from typing import Any

from markupsafe import Markup, escape

from advisor.rules.pack import IN_THE_SOURCE, Reference
from advisor.text.escape import markdown_inline
from advisor.units import ms_text
from advisor.vocabulary import ARCHITECTURES

_WHITESPACE = re.compile(r"\s+")


def ms(value: float | None, digits: int | None = None) -> str:
    """A duration in milliseconds: 3 significant figures below 100 ms, whole ms above."""
    if value is None:
        return "n/a"
    if digits is not None and math.isfinite(value):
        return f"{value:.{digits}f} ms"
    return ms_text(value)


def rate(value: float | None) -> str:
    """A rate per second: ``1,500/s``, ``64.4/s``, ``0.52/s``."""
    if value is None:
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}/s"
    return f"{value:.3g}/s"


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as a percentage: 0.48 -> ``48 %``."""
    return "n/a" if value is None else f"{value * 100:.{digits}f} %"


def number(value: float | None, digits: int = 1) -> str:
    """A plain number with thousands separators."""
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return "unbounded"
    return f"{value:,.{digits}f}" if digits else f"{value:,.0f}"


def size(value: float | None) -> str:
    """Bytes in the unit people use: ``1,800 bytes``, ``48 KB``, ``20 MB`` (10^3 steps)."""
    if value is None:
        return "n/a"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= 10 * scale:
            return f"{value / scale:,.0f} {unit}"
    return f"{value:,.0f} bytes"


def one_line(value: Any) -> str:
    """Text on one line: every run of whitespace (newlines included) becomes one space."""
    return _WHITESPACE.sub(" ", str(value)).strip()


def commented(value: Any, prefix: str = "# ", width: int = 99) -> str:
    """Text as comment lines of at most ``width`` characters (long words kept whole)."""
    lines = textwrap.wrap(
        one_line(value),
        width=max(width - len(prefix) - 2, 20),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]
    return "\n".join([prefix + lines[0], *(prefix + "  " + line for line in lines[1:])])


def md(value: Any) -> str:
    """Inline Markdown text: one line, no HTML, no links, no table breaks, no code spans (the
    same escaping as ``advisor recommend --format markdown``)."""
    return markdown_inline(value)


def comment(value: Any) -> str:
    """Text for a ``#`` or ``--`` comment: one line, so it cannot start a new setting."""
    return one_line(value)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def sqlite_str(value: Any) -> str:
    """An SQL string literal for ProxySQL's admin interface (SQLite: quotes doubled).

    SQLite has no escapes: control characters (newlines) become a space, so that a literal
    stays on its line, even in a commented-out statement.
    """
    text = _CONTROL.sub(" ", str(value))
    return "'" + text.replace("'", "''") + "'"


def mysql_str(value: Any) -> str:
    """An SQL string literal for MySQL and MariaDB (backslash and quote escaped)."""
    text = str(value).replace("\x00", "").replace("\\", "\\\\").replace("'", "\\'")
    return "'" + text.replace("\n", "\\n").replace("\r", "\\r") + "'"


def sql_value(value: Any, dialect: str = "mysql", raw: bool = False) -> str:
    """A setting's value in SQL: numbers as they are, keywords raw, text as a literal."""
    if raw or (isinstance(value, int | float) and not isinstance(value, bool)):
        return str(value)
    return sqlite_str(value) if dialect == "sqlite" else mysql_str(value)


def mermaid(value: Any) -> str:
    """A Mermaid node or edge label: quotes and angle brackets as entities."""
    text = one_line(value)
    for char, entity in (('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(char, entity)
    return text


# A public web address in a rule's reference: http(s) only, up to a space or a character that
# would close a Markdown link or an HTML attribute; a trailing full stop or comma is prose.
_URL = re.compile(r"https?://[^\s<>\"'()\[\]]+")


def _reference_parts(value: Any) -> list[tuple[str, str | None]]:
    """A reference split into (text, address) pairs: each address with the words before it
    as its title ("Codership docs, Galera Arbitrator: https://..." -> the title links there);
    words after the last address come with None."""
    text = one_line(value)
    parts: list[tuple[str, str | None]] = []
    start = 0
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:")
        title = text[start : match.start()].strip().removesuffix(":").strip()
        parts.append((title or url, url))
        start = match.start() + len(url)
    tail = text[start:].strip()
    if tail or not parts:
        parts.append((tail, None))
    return parts


def reference_html(value: Any) -> Markup:
    """A rule's reference for the HTML page: a titled link to a public document, a titled
    file of the advisor source (its lab data, its model) named as such, or, for plain text
    (a user's pack), each address in it a link titled by the words before it. Every piece
    is escaped: a rule pack may come from a user."""
    if isinstance(value, Reference) and value.url:
        return Markup('<a href="{}">{}</a>').format(value.url, value.title)
    if isinstance(value, Reference) and value.source_file:
        return Markup("{} (<code>{}</code> {})").format(
            value.title, value.source_file, IN_THE_SOURCE
        )
    pieces = []
    for title, url in _reference_parts(value.title if isinstance(value, Reference) else value):
        if url is None:
            pieces.append(escape(title))
        else:
            pieces.append(Markup('<a href="{}">{}</a>').format(url, title))
    return Markup(" ").join(pieces)


def reference_md(value: Any) -> str:
    """A rule's reference in Markdown: ``[title](address)``, a file of the advisor source by
    its title and path, or plain text with each address linked; text escaped."""
    if isinstance(value, Reference) and value.url:
        return f"[{markdown_inline(value.title)}]({value.url})"
    if isinstance(value, Reference) and value.source_file:
        # a source file is plain path characters (the pack refuses others): a code span holds it
        return f"{markdown_inline(value.title)} (`{value.source_file}` {IN_THE_SOURCE})"
    pieces = []
    for title, url in _reference_parts(value.title if isinstance(value, Reference) else value):
        pieces.append(
            markdown_inline(title) if url is None else f"[{markdown_inline(title)}]({url})"
        )
    return " ".join(pieces)


def arch(value: str) -> str:
    """An architecture id in words."""
    words = ARCHITECTURES.get(value)  # type: ignore[call-overload]
    return words.phrase if words else value


def explain(rows: Any) -> list[tuple[Any, list[Any]]]:
    """Rows with the columns whose reason was not given yet: each reason is said once."""
    seen: set[tuple[str, str]] = set()
    result = []
    for row in rows:
        fresh = [c for c in row.columns if (c.name, c.reason) not in seen]
        seen.update((c.name, c.reason) for c in row.columns)
        result.append((row, fresh))
    return result


FILTERS: dict[str, Callable[..., Any]] = {
    "arch": arch,
    "comment": comment,
    "commented": commented,
    "explain": explain,
    "md": md,
    "mermaid": mermaid,
    "ms": ms,
    "mysql_str": mysql_str,
    "number": number,
    "one_line": one_line,
    "pct": pct,
    "rate": rate,
    "reference_html": reference_html,
    "reference_md": reference_md,
    "size": size,
    "sql_value": sql_value,
    "sqlite_str": sqlite_str,
}
