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
  ``"x".center(n)``, a list printed or joined, ``indent``) and no document may pass
  :data:`MAX_OUTPUT_CHARS`, checked before the value is built
  (:mod:`advisor.documents.sizes`); no integer may pass :data:`MAX_INT_BITS` (a power of
  powers holds the interpreter in C, where the deadline cannot stop it); no template file
  may pass :data:`MAX_TEMPLATE_BYTES` (its size is read before the file, and compiling it
  checks the deadline too).

Templates are found on a search path, pdoc style: the user's ``--templates`` folder first,
then the shipped templates, which are also reachable under the ``default/`` prefix so that
a user template can ``{% extends "default/design.md.j2" %}`` and override one block.
"""

from __future__ import annotations

__all__ = [
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_OUTPUT_CHARS",
    "MAX_TEMPLATE_BYTES",
    "RENDER_TIME_LIMIT_S",
    "Limits",
    "default_templates_dir",
    "make_environment",
    "render_template",
]

import functools
import operator
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

from advisor.documents import sizes
from advisor.documents.filters import FILTERS
from advisor.errors import AdvisorError, Location
from advisor.text.escape import terminal

# Seconds one template may render before it is stopped: the shipped documents take a few
# milliseconds; overridable per call (Limits) for very large topologies.
RENDER_TIME_LIMIT_S = 10.0
# Characters one rendered file, or any one value built inside a template, may hold.
MAX_OUTPUT_CHARS = 20_000_000
# Items in any list a template builds or hands to a filter: a sort of a million items takes
# about a second, so no single filter call (which the deadline cannot interrupt) runs long.
MAX_ITEMS = 1_000_000
# Bits of any integer a template computes: 2**65536 is 19,729 digits, beyond what Python
# prints (4,300 digits by default); 9**999**999 would take minutes in C, out of the
# deadline's reach.
MAX_INT_BITS = 65_536
# Bytes of one template file: the shipped design.md.j2 is 24 KB; compiling a dense
# template costs about 1.6 s per MB in Python's compile(), the one step with no deadline
# check (measured with Jinja2 3.1 on the project's machine).
MAX_TEMPLATE_BYTES = 512 * 1024
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
# Filters slow enough per character that one call on a document-sized input would outrun
# the deadline, which is checked only between calls: urlize took 19.7 s on 10 million
# characters here (wordwrap 4.2 s, title 3.7 s); it is refused past 2 million.
_SLOW_FILTER_CHARS = {"urlize": 2_000_000}


@dataclass(frozen=True)
class Limits:
    """Bounds on one template's rendering."""

    time_s: float = RENDER_TIME_LIMIT_S
    output_chars: int = MAX_OUTPUT_CHARS
    template_bytes: int = MAX_TEMPLATE_BYTES


def default_templates_dir() -> Path:
    """The shipped templates: inside the wheel, or the repository's ``templates/``."""
    package = Path(__file__).parent.parent  # advisor/
    packaged = package / "_data" / "templates"
    return packaged if packaged.is_dir() else package.parent / "templates"


class _TickingCodeGenerator(CodeGenerator):
    """Compiles every block body (loop iteration, macro call, template) with a deadline check,
    and checks the deadline itself as it compiles."""

    def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
        self.environment.advisor_tick()  # type: ignore[attr-defined]
        return super().visit(node, *args, **kwargs)

    def blockvisit(self, nodes: Any, frame: Frame) -> None:
        self.writeline("environment.advisor_tick()")
        super().blockvisit(nodes, frame)

    def visit_Concat(self, node: Any, frame: Frame) -> None:
        # 'a ~ b' doubles a string in a loop or a macro, and 'list ~ ""' prints a list: the
        # operands' text is measured before it is joined, the result bounded after.
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        else:
            join = "markup_join" if frame.eval_ctx.autoescape else "str_join"
        self.write(f"environment._bounded({join}(environment._operands((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))))")


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

    def _tokenize(
        self, source: str, name: str | None, filename: str | None = None, state: str | None = None
    ) -> jinja2.lexer.TokenStream:
        """The lexer's tokens, with a deadline check every thousand (a large template's
        compilation is on the clock)."""
        stream = super()._tokenize(source, name, filename, state)
        return jinja2.lexer.TokenStream(self._ticking(stream), name, filename)

    def _ticking(self, stream: jinja2.lexer.TokenStream) -> Iterator[jinja2.lexer.Token]:
        for count, token in enumerate(stream):
            if not count % 1000:
                self.advisor_tick()
            yield token

    def finalize_output(self, value: Any) -> Any:
        """What ``{{ value }}`` prints: measured before it becomes text, and with every
        control character shown as its escape (``\\x1b``): a rule file's message may hold
        an ESC, which autoescaping keeps and a terminal showing the file acts on."""
        self._check_text(value, "print")
        if isinstance(value, str):
            shown = terminal(value)
            if shown != value:
                return markupsafe.Markup(shown) if isinstance(value, markupsafe.Markup) else shown
        return value

    def _operands(self, operands: tuple[Any, ...]) -> tuple[Any, ...]:
        """The operands of ``~``, measured before they are joined."""
        self._check_text(operands, "concatenate")
        return operands

    def _check_text(self, value: Any, what: str, chars: int | None = None) -> None:
        bound = self.limits.output_chars
        if chars is None:
            chars = sizes.text_chars(value, bound)
        if chars > bound:
            raise _Stopped(f"refused to {what} a value of more than {bound} characters")

    def call_binop(
        self, context: jinja2.runtime.Context, operator_name: str, left: Any, right: Any
    ) -> Any:
        if operator_name == "**" and isinstance(right, int | float) and abs(right) > 1000:
            raise _Stopped(f"refused a power with exponent {right}")
        if operator_name == "**":
            self._check_bits(sizes.power_bits(left, right), "power")
        if operator_name == "%" and isinstance(left, str):
            if _HUGE_WIDTH.search(left):
                raise _Stopped("refused a format with a huge width")
            bound = self.limits.output_chars
            self._check_text(right, "format", sizes.format_chars(left, right, bound))
        if operator_name == "*":
            self._check_repeat(left, right)
            self._check_bits(sizes.product_bits(left, right), "product")
        if operator_name == "+":
            self._check_sum(left, right)
        ops: dict[str, Callable[[Any, Any], Any]] = {
            "+": operator.add,
            "*": operator.mul,
            "**": operator.pow,
            "%": operator.mod,
        }
        return self._bounded(ops[operator_name](left, right))

    def _check_bits(self, bits: int, what: str) -> None:
        if bits > MAX_INT_BITS:
            raise _Stopped(f"refused a {what} of about {bits} bits (more than {MAX_INT_BITS})")

    def _check_sum(self, left: Any, right: Any) -> None:
        """'+' of two strings or two lists: the result's size, before it is built."""
        if isinstance(left, str) and isinstance(right, str):
            self._check_text(None, "concatenate", len(left) + len(right))
        elif (
            isinstance(left, list | tuple)
            and isinstance(right, list | tuple)
            and len(left) + len(right) > MAX_ITEMS
        ):
            raise _Stopped(f"built a list of more than {MAX_ITEMS} items")

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
            if name == "expandtabs" and args and isinstance(args[0], int):
                chars = len(owner) + owner.count("\t") * max(args[0], 0)
                self._check_text(owner, "expand", chars)
            if name == "translate" and args:
                self._check_text(owner, "translate", sizes.translate_chars(owner, args[0]))
            if name == "replace" and len(args) >= 2:
                self._check_replace(owner, *args[:2])
            if name == "join" and args:
                self._check_join(args[0], owner)
        return self._bounded(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` and ``format_map``, which Jinja2 wraps when they are looked up (not
        when called), measured before they run."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        template: str = value.__self__
        is_map = value.__name__ == "format_map"

        @functools.wraps(wrapped)
        def measured(*args: Any, **kwargs: Any) -> str:
            if _HUGE_WIDTH.search(template):
                raise _Stopped("refused a format with a huge width")
            values = args[0] if is_map and args else [*args, *kwargs.values()]
            chars = sizes.format_chars(template, values, self.limits.output_chars)
            self._check_text(values, "format", chars)
            return wrapped(*args, **kwargs)

        return measured

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
        """Refuse a join whose items or separators would pass the bound."""
        if not isinstance(items, Sized) or not isinstance(separator, str):
            return
        if len(items) > MAX_ITEMS or len(items) * len(separator) > self.limits.output_chars:
            raise _Stopped(f"refused a join of more than {self.limits.output_chars} characters")
        chars = len(items) * len(separator) + sizes.text_chars(items, self.limits.output_chars)
        if chars > self.limits.output_chars:
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
    env.finalize = env.finalize_output
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
        positional = list(args[2 if passes else 1 :])
        rest = [*positional, *kwargs.values()]
        _check_filter_input(env, name, function.__name__, value, rest)
        _check_filter_output(env, name, value, positional, kwargs)
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
    slow_bound = _SLOW_FILTER_CHARS.get(name)
    if slow_bound is not None and sizes.text_chars(value, slow_bound) > slow_bound:
        raise _Stopped(f"refused filter {name} over more than {slow_bound} characters")
    if name == "join":
        env._check_join(value, rest[0] if rest else "")
    # Every filter's input, as text, within what a document may hold: a list of 400 copies
    # of a 10 MB string is 4 GB once a filter prints it.
    bound = env.limits.output_chars
    chars = sum(sizes.text_chars(v, bound) for v in [value, *rest])
    env._check_text(value, f"pass filter {name}", chars)


def _argument(positional: list[Any], kwargs: dict[str, Any], index: int, key: str) -> Any:
    """A filter's argument by position (after the value) or by name, else None."""
    return positional[index] if len(positional) > index else kwargs.get(key)


def _check_filter_output(
    env: _Sandbox, name: str, value: Any, positional: list[Any], kwargs: dict[str, Any]
) -> None:
    """The filters whose result may be many times their input: measured before they run."""
    bound = env.limits.output_chars
    if name == "indent" and isinstance(value, str):
        width = _argument(positional, kwargs, 0, "width")
        chars = sizes.indent_chars(value, 4 if width is None else width)
        env._check_text(value, "indent", chars)
    elif name == "wordwrap" and isinstance(value, str):
        wrap = _argument(positional, kwargs, 2, "wrapstring")
        chars = len(value) * (1 + (len(wrap) if isinstance(wrap, str) else 1))
        env._check_text(value, "wrap", chars)
    elif name == "format" and isinstance(value, str):
        env._check_text(value, "format", sizes.format_chars(value, positional or kwargs, bound))
    elif name == "tojson":
        indent = _argument(positional, kwargs, 0, "indent")
        env._check_text(value, "dump", sizes.dump_chars(value, indent, bound))
    elif name == "pprint":
        env._check_text(value, "dump", sizes.dump_chars(value, 1, bound))
    elif name == "sum":
        lengths = [len(v) for v in value if isinstance(v, Sized)] if isinstance(value, list) else []
        if sum(lengths) > MAX_ITEMS:
            raise _Stopped(f"refused filter sum over more than {MAX_ITEMS} items")


class _ContainedLoader(jinja2.FileSystemLoader):
    """A folder's templates, refusing a file whose real path (links resolved) leaves it (a
    link in the user's folder to /etc/passwd must not be included) or whose size passes
    :attr:`Limits.template_bytes` (its size is read first, and never more than that)."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        assert isinstance(environment, _Sandbox)
        environment.advisor_tick()  # an include of many templates is on the clock
        pieces = jinja2.loaders.split_template_path(template)
        for root in self.searchpath:
            path = Path(root, *pieces)
            if not path.is_file():
                continue
            real = path.resolve()
            if not real.is_relative_to(Path(root).resolve()):
                raise jinja2.exceptions.SecurityError(
                    f"template {template!r} links outside the templates folder (to {real})"
                )
            source = _read_bounded(path, environment.limits.template_bytes)
            return source, str(path), functools.partial(_unchanged, path, path.stat().st_mtime)
        raise jinja2.TemplateNotFound(template)


def _read_bounded(path: Path, limit_bytes: int) -> str:
    """A template's text, refused by its size before it is read, and read no further than
    the limit (a file that grows meanwhile)."""
    too_big = f"template is larger than {limit_bytes} bytes (render limit)"
    with path.open("rb") as file:
        if os.fstat(file.fileno()).st_size > limit_bytes:
            raise AdvisorError(too_big, Location(str(path)))
        data = file.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise AdvisorError(too_big, Location(str(path)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AdvisorError(
            f"template is not UTF-8 text (byte {error.start})", Location(str(path))
        ) from None


def _unchanged(path: Path, mtime: float) -> bool:
    try:
        return path.stat().st_mtime == mtime
    except OSError:
        return False


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
