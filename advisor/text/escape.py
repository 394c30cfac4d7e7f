"""Text from the input made safe for where it lands: a terminal, or inline Markdown.

Names come from files people copy around. The loader refuses control characters in names
(advisor.inputs.topology), but rule files, file paths and messages quoting them reach the
output too, so every report passes through :func:`terminal` before it is printed: an escape
sequence (OSC 52 writes the clipboard, OSC 8 hides a link, CSI clears the screen) shows as
its code instead of acting. Markdown output escapes with :func:`markdown_inline`, the same
function the design documents use.
"""

from __future__ import annotations

__all__ = ["markdown_inline", "one_line", "terminal"]

import re
from typing import Any

# C0 controls but newline and tab, DEL, C1 controls, and the bidirectional marks, overrides
# and isolates that reorder what a reader sees (CVE-2021-42574, "Trojan Source").
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MD_SPECIAL = re.compile(r"([\\`*\[\]|<>#])")
_WHITESPACE = re.compile(r"\s+")


def terminal(text: str) -> str:
    r"""``text`` with every control character shown as its escape, newlines and tabs kept.

    >>> terminal("a\x1b]52;c;aGk=\x07b\nc")
    'a\\x1b]52;c;aGk=\\x07b\nc'
    >>> terminal("\u202eevil")
    '\\u202eevil'
    """
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(value: Any) -> str:
    """Text on one line: every run of whitespace (newlines included) becomes one space."""
    return _WHITESPACE.sub(" ", str(value)).strip()


def markdown_inline(value: Any) -> str:
    r"""Inline Markdown text: one line, no HTML, no links, no headings, no table breaks, no
    code spans or fences; control characters shown as escapes.

    >>> markdown_inline("# <b>x</b> [a](http://e) | `y`")
    '\\# &lt;b&gt;x&lt;/b&gt; \\[a\\](http://e) \\| \\`y\\`'
    """
    text = terminal(one_line(value)).replace("&", "&amp;")
    return _MD_SPECIAL.sub(
        lambda m: {"<": "&lt;", ">": "&gt;"}.get(m.group(1), "\\" + m.group(1)), text
    )
