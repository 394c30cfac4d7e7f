"""Read ``topology.yaml`` into a validated :class:`~advisor.inputs.topology.Topology`.

PyYAML composes the document into nodes that carry their line and column; we build the plain
Python data ourselves from those nodes, remembering where every key and value sat, so that a
pydantic error location such as ``("sites", 1, "nodes")`` becomes
``topology.yaml:14:12: sites[1].nodes: must be >= 0, got -2``.

Building the data ourselves also bounds it: aliases are expanded by us, so an alias bomb
(a billion laughs) stops at :data:`Limits.yaml_nodes`, and self-referencing aliases or deep
nesting stop at :data:`Limits.yaml_depth`. Only YAML's safe scalar types are constructed.
"""

from __future__ import annotations

__all__ = ["Limits", "LoadedTopology", "TopologyError", "load_topology", "parse_topology"]

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import yaml
from pydantic import ValidationError

from advisor.errors import AdvisorError, Location
from advisor.inputs.topology import FieldError, Topology
from advisor.measurements.reading import open_regular

KeyPath = tuple[str | int, ...]
# Patterns matched whole (fullmatch): '$' of re.match also accepts a final newline.
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")
# Numbers as YAML 1.2's core schema writes them. YAML 1.1, which PyYAML implements, also reads
# '1:30' as 90 (base 60), '017' as 15 (octal), '0b11', '1_000' and '+.5' alike: a plain
# scalar it resolves to a number but YAML 1.2 does not is refused, naming the key.
_YAML12_NUMBER = {
    "tag:yaml.org,2002:int": re.compile(r"(?:[-+]?(?:0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+)"),
    "tag:yaml.org,2002:float": re.compile(
        r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))"
    ),
}
# Longest integer read [characters]: the largest bound of any key is 1e16 bytes (17 digits).
_INT_DIGITS = 30
# The tags of YAML's safe schema; any other (!!python/object/apply:..., !custom) is refused.
_SAFE_TAGS = frozenset(tag for tag in yaml.SafeLoader.yaml_constructors if tag is not None)
Positions = dict[KeyPath, tuple[int, int]]


@dataclass(frozen=True)
class Limits:
    """Bounds on what the loader accepts; raise them where a real topology needs more."""

    file_bytes: int = 10 * 2**20  # a topology is a few KB; 10 MB is generous
    yaml_nodes: int = 1_000_000  # after alias expansion
    yaml_depth: int = 64
    measurement_bytes: int = 200 * 2**20  # a day of ping -D with timestamps is about 100 MB


class TopologyError(AdvisorError):
    """A topology file is invalid; ``errors`` lists every problem found, in file order."""

    def __init__(self, errors: list[AdvisorError]) -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first.message + more, first.location)
        self.errors = errors


@dataclass
class LoadedTopology:
    """A validated topology, the file it came from, and where each key sat in it."""

    topology: Topology
    path: Path | None
    positions: dict[KeyPath, tuple[int, int]] = field(repr=False)
    key_positions: dict[KeyPath, tuple[int, int]] = field(repr=False, default_factory=dict)
    # A second folder measurement files may come from (``--measurements-root``); by default
    # they must lie inside the topology's own folder (SECURITY.md).
    measurements_root: Path | None = None
    limits: Limits = field(default_factory=lambda: Limits(), repr=False)

    def location(self, *key: str | int) -> Location:
        """The file, line and column of ``key`` (or of its nearest known parent)."""
        file = str(self.path) if self.path else None
        line, column = _nearest(self.positions, key)
        return Location(file, line, column, format_key(key) or None)

    @property
    def folder(self) -> Path:
        """The folder ``file:`` references are relative to."""
        return self.path.parent if self.path else Path.cwd()

    def resolve(self, reference: str) -> Path:
        """A measurement ``file:`` reference, relative to the YAML file's folder."""
        return self.folder / reference

    def resolve_inside(self, reference: str, *key: str | int) -> Path:
        """:meth:`resolve`, refusing a file that lies, links resolved, outside the folder.

        A topology copied from elsewhere must not make advisor read ``/etc/shadow`` or
        ``~/.ssh`` and echo it in an error. ``measurements_root`` is a second allowed folder.
        """
        path = self.resolve(reference)
        try:
            real = path.resolve()
        except (OSError, ValueError) as error:  # a name too long, a link loop, a NUL
            reason = getattr(error, "strerror", None) or str(error)
            raise AdvisorError(
                f"cannot open {reference!r}: {reason}", self.location(*key)
            ) from None
        base = self.folder.resolve()
        roots = [base] + ([self.measurements_root.resolve()] if self.measurements_root else [])
        if not any(real == root or root in real.parents for root in roots):
            raise AdvisorError(
                f"{reference!r} resolves to {real}, outside the topology's folder {base}; "
                "measurement files must be inside it (see SECURITY.md)",
                self.location(*key),
            )
        return path


def load_topology(
    path: str | os.PathLike[str],
    limits: Limits = Limits(),
    *,
    measurements_root: str | os.PathLike[str] | None = None,
) -> LoadedTopology:
    """Read and validate a topology file; raise :class:`AdvisorError` for any problem.

    ``measurements_root`` allows measurement files from that folder too (by default only
    from the topology's own folder and below).
    """
    if not isinstance(path, str | os.PathLike):
        raise AdvisorError(f"load_topology takes a file path, got {type(path).__name__}")
    path = Path(path)
    text = read_text_file(path, limits.file_bytes, what="topology file")
    loaded = parse_topology(text, source=path, limits=limits)
    loaded.limits = limits
    if measurements_root is not None:
        loaded.measurements_root = Path(measurements_root)
    return loaded


def parse_topology(
    text: str, *, source: Path | None = None, limits: Limits = Limits()
) -> LoadedTopology:
    """Validate topology YAML given as text; ``source`` names it in errors."""
    name = str(source) if source else "<topology>"
    if not isinstance(text, str):
        raise AdvisorError(
            f"parse_topology takes the YAML as text (str), got {type(text).__name__}; "
            "for a file use load_topology(path)",
            Location(name),
        )
    data, positions, key_positions = _compose(text, name, limits)
    if data is None:
        raise AdvisorError(
            "the file is empty; expected a mapping with at least 'name' and 'sites'",
            Location(name),
        )
    if not isinstance(data, dict):
        raise AdvisorError(
            f"expected a mapping with keys such as name, sites and links at the top level, "
            f"got a {_yaml_type(data)}",
            Location(name, *positions.get((), (1, 1))),
        )
    try:
        topology = Topology.model_validate(data)
    except ValidationError as error:
        raise TopologyError(_errors(error, positions, key_positions, name)) from None
    return LoadedTopology(topology, source, positions, key_positions)


def read_text_file(path: Path, max_bytes: int, *, what: str) -> str:
    """Read a regular UTF-8 text file of bounded size, or raise a one-line AdvisorError."""
    where = Location(str(path))
    try:
        info = path.stat()
        _check_regular(info, max_bytes, what, where)  # before opening: a device is never opened
        with open_regular(path) as stream:
            _check_regular(os.fstat(stream.fileno()), max_bytes, what, where)  # swapped since?
            raw = stream.read(max_bytes + 1)
    except FileNotFoundError:
        raise AdvisorError(f"{what} not found", where) from None
    except OSError as error:
        raise AdvisorError(f"cannot read {what}: {error.strerror}", where) from None
    except ValueError as error:  # a NUL in the path
        raise AdvisorError(f"cannot read {what}: {error}", where) from None
    if len(raw) > max_bytes:
        raise AdvisorError(f"{what} is larger than the limit of {max_bytes:,} bytes", where)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise AdvisorError(
            f"{what} is UTF-16 text (a PowerShell '>' redirect?); save it as UTF-8", where
        )
    if b"\0" in raw:
        raise AdvisorError(f"{what} holds binary data (NUL bytes); expected text", where)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise AdvisorError(
            f"{what} is not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})",
            Location(str(path), line),
        ) from None
    return text


def _check_regular(info: os.stat_result, max_bytes: int, what: str, where: Location) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise AdvisorError(f"{what} is a directory; expected a file", where)
    if not stat.S_ISREG(info.st_mode):
        raise AdvisorError(f"{what} is not a regular file (a device, fifo or socket)", where)
    if info.st_size > max_bytes:
        raise AdvisorError(
            f"{what} is {info.st_size:,} bytes; the limit is {max_bytes:,} bytes", where
        )


def format_key(path: KeyPath) -> str:
    """``("sites", 1, "nodes")`` -> ``sites[1].nodes``."""
    text = ""
    for part in path:
        part = part if isinstance(part, int) or part.isprintable() else repr(part)  # one line
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


# ---------------------------------------------------------------------------------------------
# YAML nodes to plain data, with positions


def _check_flow_depth(text: str, name: str, limits: Limits) -> None:
    """Refuse flow collections nested beyond the limit before libyaml sees them.

    libyaml's composer recurses once per level: about 100,000 nested brackets crash the
    interpreter, so the depth is counted here first (brackets inside quoted strings count
    too; they would need to be unbalanced by dozens of levels to matter).
    """
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.isin(data, (ord("["), ord("{"))).view(np.int8) - np.isin(
        data, (ord("]"), ord("}"))
    ).view(np.int8)
    depth = np.cumsum(step, dtype=np.int32)  # 4 bytes a character, not 8 or 12
    if depth.size and int(depth.max()) > limits.yaml_depth:
        offset = int(np.argmax(depth > limits.yaml_depth))
        before = data[:offset]
        line = int(np.count_nonzero(before == ord("\n"))) + 1
        newlines = np.flatnonzero(before == ord("\n"))
        column = offset - (int(newlines[-1]) + 1 if newlines.size else 0) + 1
        raise AdvisorError(
            f"nested deeper than {limits.yaml_depth} levels (or a self-referencing alias)",
            Location(name, line, column),
        )


def _compose(text: str, name: str, limits: Limits) -> tuple[Any, Positions, Positions]:
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if text.count("[") + text.count("{") > limits.yaml_depth:
        _check_flow_depth(text, name, limits)
    try:
        if len(text) > _COUNT_FIRST_CHARS:
            _count_before_composing(text, name, limits)
        node = yaml.compose(text, Loader=loader_class)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        if mark is None:
            raise AdvisorError(f"YAML syntax error: {problem}", Location(name)) from None
        raise AdvisorError(
            f"YAML syntax error: {problem}", Location(name, mark.line + 1, mark.column + 1)
        ) from None
    except yaml.YAMLError as error:
        raise AdvisorError(f"YAML error: {error}", Location(name)) from None
    if node is None:
        return None, {}, {}
    builder = _Builder(name, limits)
    return builder.build(node, ()), builder.positions, builder.key_positions


# Above this size the parser's events are counted before composing (about a third of the
# time of composing and building): a topology is a few KB; 64 KB compose in a tenth of a second.
_COUNT_FIRST_CHARS = 2**16


def _count_before_composing(text: str, name: str, limits: Limits) -> None:
    """Refuse a list longer than its key allows, or more nodes than the limit, from the
    parser's events, before any node is composed: 330,000 sites took 10 s and 740 MB to
    compose and build before the model refused them; now the 1,001st site stops the reading.

    Each event is one step; the bounds are the models' own (``max_length`` of a list).
    """
    frames: list[list[Any]] = []  # per open collection: [path, is_mapping, index or key state]
    nodes = 0
    safe_loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # events only
    for event in yaml.parse(text, Loader=safe_loader_class):
        if isinstance(event, yaml.CollectionEndEvent):
            frames.pop()
            _value_done(frames)
            continue
        if not isinstance(event, yaml.ScalarEvent | yaml.AliasEvent | yaml.CollectionStartEvent):
            continue
        nodes += 1
        if nodes > limits.yaml_nodes:
            _fail_at(event, name, f"more than {limits.yaml_nodes:,} YAML nodes")
        parent = frames[-1] if frames else None
        if parent is not None and parent[1] and parent[2] is _KEY:  # a key of a mapping
            parent[2] = event.value if isinstance(event, yaml.ScalarEvent) else None
            if isinstance(event, yaml.CollectionStartEvent):
                frames.append([None, isinstance(event, yaml.MappingStartEvent), _KEY])
            continue
        path = _child_path(parent)
        if parent is not None and not parent[1]:
            parent[2] += 1
            most = _max_items(parent[0])
            if most is not None and parent[2] > most:
                _fail_at(
                    event,
                    name,
                    f"more than {most:,} items; at most {most:,} are allowed",
                    format_key(parent[0]),
                )
        if isinstance(event, yaml.CollectionStartEvent):
            is_mapping = isinstance(event, yaml.MappingStartEvent)
            frames.append([path, is_mapping, _KEY if is_mapping else 0])
        else:
            _value_done(frames)


_KEY = object()  # a mapping's next node is a key


def _child_path(parent: list[Any] | None) -> KeyPath | None:
    if parent is None:
        return ()
    if parent[0] is None:
        return None
    if parent[1]:
        return (*parent[0], parent[2]) if isinstance(parent[2], str) else None
    return (*parent[0], parent[2])


def _value_done(frames: list[list[Any]]) -> None:
    if frames and frames[-1][1]:
        frames[-1][2] = _KEY


def _fail_at(event: Any, name: str, message: str, key: str | None = None) -> NoReturn:
    mark = event.start_mark
    raise AdvisorError(message, Location(name, mark.line + 1, mark.column + 1, key))


_MAX_ITEMS: dict[tuple[str, ...], int | None] = {}


def _max_items(path: KeyPath | None) -> int | None:
    """The most items the list at ``path`` may hold, from its field's ``max_length``."""
    if path is None:
        return None
    keys = tuple(part for part in path if isinstance(part, str))
    if keys not in _MAX_ITEMS:
        _MAX_ITEMS[keys] = _declared_max_items(keys)
    return _MAX_ITEMS[keys]


def _declared_max_items(keys: tuple[str, ...]) -> int | None:
    model: Any = Topology
    field_info = None
    for key in keys:
        fields = getattr(model, "model_fields", None)
        field_info = fields.get(key) if fields else None
        if field_info is None:
            return None
        model = _model_in(field_info.annotation)
    if field_info is None:
        return None
    return _max_length(field_info.metadata) or _max_length_in(field_info.annotation)


def _max_length(metadata: Any) -> int | None:
    return next((m.max_length for m in metadata if hasattr(m, "max_length")), None)


def _max_length_in(annotation: Any) -> int | None:
    for arg in getattr(annotation, "__args__", ()):
        found = _max_length(getattr(arg, "__metadata__", ())) or _max_length(
            getattr(getattr(arg, "__metadata__", [None])[0], "metadata", ())
        )
        if found:
            return found
    return None


class _Builder:
    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self.positions: dict[KeyPath, tuple[int, int]] = {}
        self.key_positions: dict[KeyPath, tuple[int, int]] = {}
        self.count = 0
        self.merging: set[int] = set()  # the mappings whose merge keys are being expanded
        self.constructor = yaml.SafeLoader("")  # scalar resolution and construction only

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        if node.tag not in _SAFE_TAGS:  # a tag on a list or mapping would be silently dropped
            self._fail(node, f"the YAML tag {node.tag!r} is not allowed: a topology is plain data")
        self.count += 1
        if self.count > self.limits.yaml_nodes:
            self._fail(
                node,
                f"more than {self.limits.yaml_nodes:,} YAML nodes after alias "
                "expansion (an alias bomb?)",
            )
        if len(path) > self.limits.yaml_depth:
            self._fail(
                node,
                f"nested deeper than {self.limits.yaml_depth} levels (or a self-referencing alias)",
            )
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: KeyPath = ()) -> Any:
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag in _YAML12_NUMBER
            and not node.style
            and not _YAML12_NUMBER[node.tag].fullmatch(node.value)
        ):
            self._fail(
                node,
                f"{node.value!r} is a number only in YAML 1.1 (base 60, octal, binary or "
                "digit separators); write it in plain decimal, or quote it for text",
                path,
            )
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag == "tag:yaml.org,2002:str"
            and not node.style
            and _YAML12_FLOAT.fullmatch(node.value)
        ):
            return float(node.value)  # YAML 1.2 reads 1e9 as a number; YAML 1.1 as text
        if node.tag == "tag:yaml.org,2002:int" and len(node.value) > _INT_DIGITS:
            # int() of over 4,300 decimal digits raises, and a smaller huge one cannot be
            # shown in an error (repr raises too); no key takes a number this long.
            self._fail(
                node,
                f"an integer of {len(node.value):,} characters; no key takes a number of more "
                f"than {_INT_DIGITS} digits",
                path,
            )
        try:
            value = self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            self._fail(node, f"cannot read value: {getattr(error, 'problem', error)}")
        if not isinstance(value, str | int | float | bool | type(None)):
            # Safe tags that are not plain data (timestamps, binary, sets): treat as text.
            return str(node.value)
        return value

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        explicit: set[Any] = set()
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self._merge(value_node, path, result, explicit)
                continue
            key = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                self._fail(key_node, "mapping keys must be plain text")
            if key in explicit:
                first = self.key_positions[(*path, key)][0]
                self._fail(key_node, f"duplicate key {key!r} (first given on line {first})")
            explicit.add(key)
            self.key_positions[(*path, key)] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            result[key] = self.build(value_node, (*path, key))
        return result

    def _merge(
        self, node: yaml.Node, path: KeyPath, result: dict[Any, Any], explicit: set[Any]
    ) -> None:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self._fail(source, "a merge key (<<) needs a mapping or a list of mappings")
            if id(source) in self.merging:  # `&a {<<: *a}` recursed until Python gave up
                self._fail(node, "a merge key (<<) refers to a mapping that holds it", path)
            self.merging.add(id(source))
            try:
                merged = self._mapping(source, path)
            finally:
                self.merging.discard(id(source))
            for key, value in merged.items():
                if key not in explicit:
                    result.setdefault(key, value)

    def _fail(self, node: yaml.Node, message: str, path: KeyPath = ()) -> NoReturn:
        mark = node.start_mark
        where = Location(self.name, mark.line + 1, mark.column + 1, format_key(path) or None)
        raise AdvisorError(message, where)


# ---------------------------------------------------------------------------------------------
# pydantic errors to located, readable messages


def _errors(
    error: ValidationError, positions: Positions, key_positions: Positions, name: str
) -> list[AdvisorError]:
    found = []
    for item in error.errors(include_url=False):
        path = _clean_loc(item["loc"])
        ctx = item.get("ctx") or {}
        cause = ctx.get("error")
        if isinstance(cause, FieldError):
            path = (*path, *cause.path)
        message = _message(item, cause)
        where = key_positions if item["type"] == "extra_forbidden" else positions
        line, column = _nearest(where, path)
        found.append(AdvisorError(message, Location(name, line, column, format_key(path) or None)))
    # One error per key is enough (a union or a before-validator can report the same key twice).
    unique = {str(e): e for e in found}
    return sorted(unique.values(), key=lambda e: (e.location.line or 0, e.location.column or 0))


def _clean_loc(loc: tuple[Any, ...]) -> KeyPath:
    # Drop pydantic's internal steps such as function-after[...] and tagged-union names.
    return tuple(part for part in loc if isinstance(part, int) or "[" not in str(part))


def _nearest(positions: Positions, path: KeyPath) -> tuple[int | None, int | None]:
    for end in range(len(path), -1, -1):
        if path[:end] in positions:
            return positions[path[:end]]
    return None, None


_TYPE_NAMES = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "text",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _message(item: Any, cause: Any) -> str:
    kind, ctx, value = item["type"], item.get("ctx") or {}, item.get("input")
    if kind == "value_error" and cause is not None:
        return str(cause)
    if kind == "missing":
        return f"required key {item['loc'][-1]!r} is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(_clean_loc(item["loc"])[:-1])
        hint = f"; expected one of {', '.join(allowed)}" if allowed else ""
        return f"unknown key {item['loc'][-1]!r}{hint}"
    if kind in _TYPE_NAMES:
        return f"expected {_TYPE_NAMES[kind]}, got {_yaml_type(value)} {_show(value)}"
    if kind in {"greater_than_equal", "greater_than", "less_than_equal", "less_than"}:
        op = {
            "greater_than_equal": ">=",
            "greater_than": ">",
            "less_than_equal": "<=",
            "less_than": "<",
        }[kind]
        bound = next(iter(ctx.values()))
        bound_text = f"{bound:g}" if isinstance(bound, int | float) else str(bound)
        return f"must be {op} {bound_text}, got {_show(value)}"
    if kind == "finite_number":
        return f"must be a finite number, got {_show(value)}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', '')}, got {_show(value)}"
    if kind == "string_pattern_mismatch":
        return f"{_show(value)} is not allowed here; expected text matching {ctx.get('pattern')}"
    if kind in {"too_short", "too_long"}:
        return f"{item['msg'].lower()}, got {_show(value)}"
    return f"{item['msg']}, got {_show(value)}"


def _allowed_keys(path: KeyPath) -> list[str]:
    """The keys the model at ``path`` accepts, found by walking the annotations."""
    model: Any = Topology
    for part in path:
        if isinstance(part, int):
            continue
        field_info = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        model = _model_in(field_info.annotation) if field_info else None
        if model is None:
            return []
    return list(model.model_fields) if hasattr(model, "model_fields") else []


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _yaml_type(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "text",
        list: "list",
        dict: "mapping",
    }.get(type(value), type(value).__name__)
