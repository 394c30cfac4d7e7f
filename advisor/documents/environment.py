"""The Jinja2 environment for documents: sandboxed, strict, bounded, user templates first.

User templates are untrusted (SECURITY.md): they run in a
:class:`jinja2.sandbox.ImmutableSandboxedEnvironment` (no ``__class__`` and the like, and no
mutating the shared data: a user template cannot change what later templates render), with
:class:`jinja2.StrictUndefined` (a misspelt name fails loudly) and two bounds a runaway
template hits:

- **time**: every block body of every template (each loop iteration, each macro call)
  checks a deadline, :data:`RENDER_TIME_LIMIT_S` by default, so that an endless loop or a
  deep recursion stops with an :class:`~advisor.errors.AdvisorError`;
- **size**: no value a template builds (``"x" * n``, ``"%099999999d" | format``,
  ``"x".center(n)``) and no document may pass :data:`MAX_OUTPUT_CHARS`.

Templates are found on a search path, pdoc style: the user's ``--templates`` folder first,
then the shipped templates, which are also reachable under the ``default/`` prefix so that
a user template can ``{% extends "default/design.md.j2" %}`` and override one block.
"""

from __future__ import annotations

__all__ = [
    "MAX_ITEMS",
    "MAX_OUTPUT_CHARS",
    "RENDER_TIME_LIMIT_S",
    "Limits",
    "default_templates_dir",
    "make_environment",
    "render_template",
]

import functools
import operator
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

from advisor.documents.filters import FILTERS
from advisor.errors import AdvisorError, Location

# Seconds one template may render before it is stopped: the shipped documents take a few
# milliseconds; overridable per call (Limits) for very large topologies.
RENDER_TIME_LIMIT_S = 10.0
# Characters one rendered file, or any one value built inside a template, may hold.
MAX_OUTPUT_CHARS = 20_000_000
# Items in any list a template builds or hands to a filter: a sort of a million items takes
# about a second, so no single filter call (which the deadline cannot interrupt) runs long.
MAX_ITEMS = 1_000_000
# Filters that walk their input item by item (a string's characters included).
_ITERATING_FILTERS = frozenset(
    {
        "batch", "dictsort", "groupby", "join", "list", "map", "max", "min", "reject",
        "rejectattr", "reverse", "select", "selectattr", "slice", "sort", "sum", "unique",
    }
)  # fmt: skip
# A width or repeat count in a format spec beyond this is refused (7 digits and more).
_HUGE_WIDTH = re.compile(r"\d{7,}")
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


@dataclass(frozen=True)
class Limits:
    """Bounds on one template's rendering."""

    time_s: float = RENDER_TIME_LIMIT_S
    output_chars: int = MAX_OUTPUT_CHARS


def default_templates_dir() -> Path:
    """The shipped templates: inside the wheel, or the repository's ``templates/``."""
    package = Path(__file__).parent.parent  # advisor/
    packaged = package / "_data" / "templates"
    return packaged if packaged.is_dir() else package.parent / "templates"


class _TickingCodeGenerator(CodeGenerator):
    """Compiles every block body (loop iteration, macro call, template) with a deadline check."""

    def blockvisit(self, nodes: Any, frame: Frame) -> None:
        self.writeline("environment.advisor_tick()")
        super().blockvisit(nodes, frame)

    def visit_Concat(self, node: Any, frame: Frame) -> None:
        # 'a ~ b' doubles a string in a loop or a macro: each result is bounded as it is built.
        self.write("environment._bounded(")
        super().visit_Concat(node, frame)
        self.write(")")


class _Sandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _TickingCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, limits: Limits, **options: Any) -> None:
        super().__init__(**options)
        self.limits = limits
        self.deadline = float("inf")

    def advisor_tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _Stopped(f"took longer than {self.limits.time_s:g} s")

    def call_binop(
        self, context: jinja2.runtime.Context, operator_name: str, left: Any, right: Any
    ) -> Any:
        if operator_name == "**" and isinstance(right, int | float) and abs(right) > 1000:
            raise _Stopped(f"refused a power with exponent {right}")
        if operator_name == "%" and isinstance(left, str) and _HUGE_WIDTH.search(left):
            raise _Stopped("refused a format with a huge width")
        if operator_name == "*":
            self._check_repeat(left, right)
        ops: dict[str, Callable[[Any, Any], Any]] = {
            "+": operator.add,
            "*": operator.mul,
            "**": operator.pow,
            "%": operator.mod,
        }
        return self._bounded(ops[operator_name](left, right))

    def _check_repeat(self, left: Any, right: Any) -> None:
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(count, int):
                bound = self.limits.output_chars if isinstance(seq, str) else MAX_ITEMS
                if len(seq) * count > bound:
                    raise _Stopped(f"refused to repeat a value {count} times")

    def call(self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(__obj, "__name__", "")
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            if name in _PADDING_METHODS and any(
                isinstance(a, int) and a > self.limits.output_chars for a in args
            ):
                raise _Stopped(
                    f"refused str.{name} to more than {self.limits.output_chars} characters"
                )
            if name in ("format", "format_map") and _HUGE_WIDTH.search(owner):
                raise _Stopped("refused a format with a huge width")
            if name == "replace" and len(args) >= 2:
                self._check_replace(owner, *args[:2])
            if name == "join" and args:
                self._check_join(args[0], owner)
        return self._bounded(super().call(__context, __obj, *args, **kwargs))

    def _bounded(self, value: Any) -> Any:
        if isinstance(value, str) and len(value) > self.limits.output_chars:
            raise _Stopped(f"built a value of more than {self.limits.output_chars} characters")
        if isinstance(value, list | tuple | dict) and len(value) > MAX_ITEMS:
            raise _Stopped(f"built a list of more than {MAX_ITEMS} items")
        return value

    def _check_replace(self, text: Any, old: Any, new: Any) -> None:
        """Refuse a replace whose result would pass the bound, before building it."""
        if not all(isinstance(v, str) for v in (text, old, new)):
            return
        hits = text.count(old) if old else len(text) + 1
        if len(text) + hits * (len(new) - len(old)) > self.limits.output_chars:
            raise _Stopped(f"refused a replace of more than {self.limits.output_chars} characters")

    def _check_join(self, items: Any, separator: Any) -> None:
        """Refuse a join whose separators alone would pass the bound."""
        if not isinstance(items, Sized) or not isinstance(separator, str):
            return
        if len(items) > MAX_ITEMS or len(items) * len(separator) > self.limits.output_chars:
            raise _Stopped(f"refused a join of more than {self.limits.output_chars} characters")

    def bounded_items(self, items: Iterator[Any]) -> Iterator[Any]:
        """An iterator a filter returned (map, select, batch...), counted and on the clock."""
        for count, item in enumerate(items, 1):
            if count > MAX_ITEMS:
                raise _Stopped(f"built a list of more than {MAX_ITEMS} items")
            if not count % 10_000:
                self.advisor_tick()
            yield item


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept for the life of the process, keyed by name and source hash.

    Compiling the shipped templates costs more than rendering them; a changed template
    (another checksum) is compiled again. Only :class:`_Sandbox` environments use it, so
    every cached template carries the deadline checks.
    """

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = self._store.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_BYTECODE_CACHE = _MemoryBytecodeCache()


class _Stopped(Exception):
    """A template hit a render limit."""


def make_environment(
    templates_dir: Path | None = None, *, limits: Limits | None = None
) -> jinja2.Environment:
    """A fresh sandboxed environment over the user's folder (if any) and the shipped one."""
    shipped = jinja2.FileSystemLoader(str(default_templates_dir()))
    loaders: list[jinja2.BaseLoader] = []
    if templates_dir is not None:
        if not Path(templates_dir).is_dir():
            raise AdvisorError(
                "templates folder not found or not a folder", Location(str(templates_dir))
            )
        loaders.append(_ContainedLoader(str(templates_dir)))
    loaders += [jinja2.PrefixLoader({"default": shipped}), shipped]
    env = _Sandbox(
        limits or Limits(),
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_BYTECODE_CACHE,
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "html.j2"), default_for_string=False
        ),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    for unsafe in ("lipsum", "cycler", "joiner"):
        env.globals.pop(unsafe, None)
    env.filters.update(FILTERS)
    for name, function in list(env.filters.items()):
        env.filters[name] = _bounded_filter(env, name, function)
    return env


def _bounded_filter(env: _Sandbox, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its input and output bounded; Jinja2's pass_environment, pass_context
    and pass_eval_context markers are kept (wordwrap and truncate need their environment)."""
    passes = jinja2.utils._PassArg.from_obj(function) is not None

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        value = args[1] if passes and len(args) > 1 else (args[0] if args else None)
        rest = [*args[2 if passes else 1 :], *kwargs.values()]
        _check_filter_input(env, name, function.__name__, value, rest)
        result = function(*args, **kwargs)
        if isinstance(result, Iterator):
            return env.bounded_items(result)
        return env._bounded(result)

    return bounded


def _check_filter_input(
    env: _Sandbox, name: str, function_name: str, value: Any, rest: list[Any]
) -> None:
    numbers = [a for a in rest if isinstance(a, int) and not isinstance(a, bool)]
    if any(n > env.limits.output_chars for n in numbers) or (
        name == "format" and isinstance(value, str) and _HUGE_WIDTH.search(value)
    ):
        raise _Stopped(f"refused filter {function_name} with a huge width")
    if name in _ITERATING_FILTERS and isinstance(value, Sized) and len(value) > MAX_ITEMS:
        raise _Stopped(f"refused filter {name} over more than {MAX_ITEMS} items")
    if name == "replace" and len(rest) >= 2:
        env._check_replace(str(value), str(rest[0]), str(rest[1]))
    if name == "join":
        env._check_join(value, rest[0] if rest else "")


class _ContainedLoader(jinja2.FileSystemLoader):
    """A folder's templates, refusing a file whose real path (links resolved) leaves it:
    a link in the user's folder to /etc/passwd must not be included."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        pieces = jinja2.loaders.split_template_path(template)
        for root in self.searchpath:
            path = Path(root, *pieces)
            if path.is_file():  # the one super() reads: check it before it is opened
                real = path.resolve()
                if not real.is_relative_to(Path(root).resolve()):
                    raise jinja2.exceptions.SecurityError(
                        f"template {template!r} links outside the templates folder (to {real})"
                    )
                break
        return super().get_source(environment, template)


def render_template(env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> str:
    """Render one template; any failure becomes one AdvisorError naming template and line."""
    assert isinstance(env, _Sandbox)
    env.deadline = time.monotonic() + env.limits.time_s
    try:
        template = env.get_template(name)
        chunks: list[str] = []
        size = 0
        for chunk in template.generate(context):
            size += len(chunk)
            if size > env.limits.output_chars:
                raise _Stopped(f"wrote more than {env.limits.output_chars} characters")
            chunks.append(chunk)
        return "".join(chunks)
    except jinja2.TemplateSyntaxError as error:
        raise AdvisorError(
            f"template syntax error: {error.message}",
            Location(error.filename or error.name or name, error.lineno),
        ) from None
    except jinja2.TemplateNotFound as error:
        raise AdvisorError(f"template not found: {error.name}", Location(name)) from None
    except _Stopped as error:
        raise AdvisorError(
            f"template stopped: it {error} (render limit)", _where(name, sys.exc_info()[2])
        ) from None
    except RecursionError:
        raise AdvisorError(
            "template stopped: recursion too deep", _where(name, sys.exc_info()[2])
        ) from None
    except jinja2.UndefinedError as error:
        raise AdvisorError(
            f"template uses an undefined value: {error.message}", _where(name, sys.exc_info()[2])
        ) from None
    except jinja2.exceptions.SecurityError as error:
        raise AdvisorError(
            f"template refused by the sandbox: {error}", _where(name, sys.exc_info()[2])
        ) from None
    except AdvisorError:
        raise
    except Exception as error:  # a user template may fail in any way: report, never crash
        raise AdvisorError(
            f"template failed: {type(error).__name__}: {error}", _where(name, sys.exc_info()[2])
        ) from None
    finally:
        env.deadline = float("inf")


def _where(name: str, trace: Any) -> Location:
    """The innermost template frame of a traceback: its file and line."""
    found = Location(name)
    while trace is not None:
        filename = trace.tb_frame.f_code.co_filename
        if filename.endswith(".j2") or filename == "<template>":
            found = Location(_display(filename), trace.tb_lineno)
        trace = trace.tb_next
    return found


def _display(filename: str) -> str:
    shipped = str(default_templates_dir())
    if filename.startswith(shipped):
        return "default/" + filename[len(shipped) :].lstrip("/")
    return filename
