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
    "MAX_OUTPUT_CHARS",
    "RENDER_TIME_LIMIT_S",
    "Limits",
    "default_templates_dir",
    "make_environment",
    "render_template",
]

import operator
import re
import sys
import time
from collections.abc import Callable, Mapping
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


class _Sandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _TickingCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%"})

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
            "*": operator.mul,
            "**": operator.pow,
            "%": operator.mod,
        }
        return self._bounded(ops[operator_name](left, right))

    def _check_repeat(self, left: Any, right: Any) -> None:
        for seq, count in ((left, right), (right, left)):
            if (
                isinstance(seq, str | list | tuple)
                and isinstance(count, int)
                and len(seq) * count > self.limits.output_chars
            ):
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
        return self._bounded(super().call(__context, __obj, *args, **kwargs))

    def _bounded(self, value: Any) -> Any:
        if isinstance(value, str | list | tuple) and len(value) > self.limits.output_chars:
            raise _Stopped(f"built a value of more than {self.limits.output_chars} characters")
        return value


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
        loaders.append(jinja2.FileSystemLoader(str(templates_dir)))
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
    for name in ("center", "indent", "wordwrap", "format", "truncate"):
        env.filters[name] = _bounded_filter(env, env.filters[name])
    return env


def _bounded_filter(env: _Sandbox, function: Callable[..., Any]) -> Callable[..., Any]:
    def bounded(value: Any, *args: Any, **kwargs: Any) -> Any:
        numbers = [a for a in (*args, *kwargs.values()) if isinstance(a, int)]
        if any(n > env.limits.output_chars for n in numbers) or (
            isinstance(value, str)
            and _HUGE_WIDTH.search(value)
            and function.__name__ == "do_format"
        ):
            raise _Stopped(f"refused filter {function.__name__} with a huge width")
        return env._bounded(function(value, *args, **kwargs))

    bounded.__name__ = function.__name__
    return bounded


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
