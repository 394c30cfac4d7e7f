"""How big a value would be as text, found without building the text.

The template sandbox (:mod:`advisor.documents.environment`) asks these before it lets an
operation run that turns values into text (printing, ``~``, ``%``, ``format``, ``join``,
``tojson``, ``indent``...): a bound checked after the text is built comes too late when the
text is 4 GB. Every estimate here is an upper bound on the characters the operation writes,
cheap to compute (one walk over the value, each object once) and stopping as soon as it
passes the budget it is given.
"""

from __future__ import annotations

__all__ = [
    "Measure",
    "dump_chars",
    "format_chars",
    "indent_chars",
    "int_bits",
    "measure_text",
    "power_bits",
    "product_bits",
    "text_chars",
    "translate_chars",
]

import math
import re
from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from typing import Any, NamedTuple

# Characters a float, a bool or None takes at most as text ('-1.2345678901234567e+308').
_SCALAR_CHARS = 24
# A printf conversion (flags, then width and precision) and a str.format replacement field.
_PRINTF_SPEC = re.compile(r"%[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?")
_FORMAT_FIELD = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_DIGITS = re.compile(r"\d+")


class Measure(NamedTuple):
    """A value as text: its characters, its items (containers and what they hold, each
    one line of an indented dump) and how deep its containers nest."""

    chars: int
    items: int
    depth: int


class _OverBudget(Exception):
    """The walk passed its budget: the caller only needs to know that."""


def int_bits(value: int) -> int:
    """Bits of an integer (at least 1)."""
    return max(value.bit_length(), 1)


def power_bits(base: Any, exponent: Any) -> int:
    """Bits of ``base ** exponent`` for integers (0 when Python would not build a big int:
    a float operand, a negative exponent, or a base of 0, 1 or -1)."""
    if not (_is_int(base) and _is_int(exponent)) or exponent <= 0 or abs(base) <= 1:
        return 0
    return int_bits(base) * int(exponent)


def product_bits(left: Any, right: Any) -> int:
    """Bits of ``left * right`` for two integers (0 otherwise)."""
    if not (_is_int(left) and _is_int(right)):
        return 0
    return int_bits(left) + int_bits(right)


def text_chars(value: Any, budget: int) -> int:
    """An upper bound on ``len(str(value))``, or ``budget + 1`` once it passes ``budget``.

    Strings nested in containers count as their ``repr`` (quotes and escapes); an object
    referred to many times counts each time (its text is written each time) but is walked
    once; an object that is not a string, number or container counts as its own ``str``.
    """
    return measure_text(value, budget).chars


def measure_text(value: Any, budget: int) -> Measure:
    """:func:`text_chars` with the items and nesting depth (for indented dumps); a value
    over budget measures ``budget + 1`` characters."""
    try:
        return _Walk(budget).measure(value, nested=False)
    except _OverBudget:
        return Measure(budget + 1, 0, 0)


def dump_chars(value: Any, indent: Any, budget: int) -> int:
    """Characters of ``tojson``/``pprint`` at most: each character may become a six-character
    JSON escape, and each item a line indented once per level it is nested in."""
    found = measure_text(value, budget)
    width = len(indent) if isinstance(indent, str) else max(int(indent or 0), 1)
    return 6 * found.chars + found.items * (found.depth * width + 1)


def indent_chars(text: str, indent: Any, first: bool = False) -> int:
    """Characters of Jinja2's ``indent`` filter's result: each line gains the indent."""
    width = len(indent) if isinstance(indent, str) else max(int(indent), 0)
    lines = len(text.splitlines()) + 1
    return len(text) + lines * (width + 1) + (width if first else 0)


def translate_chars(text: str, table: Any) -> int:
    """Characters of ``text.translate(table)`` at most: each character may become the
    longest replacement in the table."""
    longest = 1
    if isinstance(table, Mapping):
        for replacement in table.values():
            if isinstance(replacement, str):
                longest = max(longest, len(replacement))
    return len(text) * longest


def format_chars(template: str, args: Any, budget: int) -> int:
    """Characters of ``template % args`` or ``template.format(*args)`` at most.

    The template's own length, every width and precision written in it, the arguments as
    text, and, where a width is taken from the arguments (``%*d``, ``{:{}}``), every
    integer argument as a width.
    """
    widths = 0
    takes_width = False
    for match in _PRINTF_SPEC.finditer(template):
        for part in match.groups():
            if part == "*":
                takes_width = True
            elif part:
                widths += int(part)
    for field in _FORMAT_FIELD.finditer(template):
        inner = field.group()[1:-1]
        takes_width = takes_width or "{" in inner
        widths += sum(int(d) for d in _DIGITS.findall(inner.partition(":")[2]))
    values = list(args.values()) if isinstance(args, Mapping) else args
    if not isinstance(values, list | tuple):
        values = [values]
    if takes_width:
        widths += sum(abs(v) for v in values if _is_int(v))
    return len(template) + widths + text_chars(values, budget)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Walk:
    """One walk over a value: each container's measure by id, the running budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.known: dict[int, Measure] = {}

    def measure(self, value: Any, *, nested: bool) -> Measure:
        if isinstance(value, str):
            found = Measure(_repr_chars(value) if nested else len(value), 1, 0)
        elif _is_int(value):
            found = Measure(math.ceil(int_bits(value) * math.log10(2)) + 1, 1, 0)
        elif value is None or isinstance(value, float | bool):
            found = Measure(_SCALAR_CHARS, 1, 0)
        else:
            found = self._object(value)
        if found.chars > self.budget:
            raise _OverBudget
        return found

    def chars(self, value: Any, *, nested: bool) -> int:
        return self.measure(value, nested=nested).chars

    def _object(self, value: Any) -> Measure:
        key = id(value)
        if key in self.known:  # measured already, or a cycle (printed as [...])
            return self.known[key]
        self.known[key] = Measure(5, 1, 0)
        if isinstance(value, Mapping):
            inner = self._sum([*value.keys(), *value.values()], 4 * len(value) + 2)
        elif isinstance(value, list | tuple | set | frozenset | KeysView | ValuesView | ItemsView):
            inner = self._sum(value, 2 * len(value) + 12)
        elif _is_namespace(value):
            attrs = self.measure(object.__getattribute__(value, "_Namespace__attrs"), nested=True)
            inner = Measure(attrs.chars + 12, attrs.items + 1, attrs.depth + 1)
        else:
            inner = Measure(_str_chars(value), 1, 0)
        self.known[key] = inner
        return inner

    def _sum(self, items: Any, overhead: int) -> Measure:
        chars, count, depth = overhead, 1, 0
        for item in items:
            found = self.measure(item, nested=True)
            chars += found.chars
            count += found.items
            depth = max(depth, found.depth)
            if chars > self.budget:
                raise _OverBudget
        return Measure(chars, count, depth + 1)


def _repr_chars(text: str) -> int:
    """An upper bound on ``len(repr(text))``: a backslash or a quote may be escaped, and an
    unprintable character written as ``\\U0010ffff``."""
    if text.isprintable():
        return len(text) + 2 + text.count("\\") + text.count("'")
    return 10 * len(text) + 2


def _is_namespace(value: Any) -> bool:
    from jinja2.utils import Namespace

    return isinstance(value, Namespace)


def _str_chars(value: Any) -> int:
    """An object's own text (one of the context's plain records, a loop, a macro)."""
    try:
        return len(str(value))
    except Exception:  # an undefined value: the operation itself reports it
        return 0
