"""The rule pack: rules are data (``rules/*.yaml``), their logic one named predicate each.

A rule file holds ``id``, ``title``, ``severity``, ``applies_to`` (its scope: ``link``,
``cluster``, ``hot_row`` or ``cross_cluster``), ``remedy_cost`` (how hard a blocker of this
rule is to remove, 1 a design decision, 2 more capacity, 3 physics), ``parameters``
(thresholds with defaults), ``message`` (a ``str.format`` template over the values the
predicate reports), ``rationale``, ``references`` (each a :class:`Reference`: ``{title, url}``
for a public document, ``{title, source_file}`` for a file of the advisor source such as its
lab measurements, or plain text as older packs write it), ``examples`` and a ``remedy`` (what
would remove it), and ``bounds`` (each parameter's range, ``[low, high]``: the values the
predicate can compute with). Users override a severity, a remedy cost, a threshold (within
its bounds), a title or a message with their own files (``--rules DIR``): a file there needs
only ``id`` and what changes. The scope and the bounds belong to the shipped rule and cannot
be overridden. One folder defines a rule id once; folders given later adjust what the
earlier ones set. Numbers may be written as YAML 1.2 reads them (``1e3``), which PyYAML's
YAML 1.1 reads as text.
Templates may only name plain fields (``{rtt_ms:.1f}``): no attribute or index access, so a
rule file cannot reach into Python objects. Nothing in a rule file is executed.
"""

from __future__ import annotations

__all__ = [
    "SCOPES",
    "Reference",
    "Rule",
    "RuleHit",
    "RulesDirs",
    "Scope",
    "default_rules_dir",
    "load_rules",
    "render_message",
]

import math
import os
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from advisor.errors import AdvisorError, Location
from advisor.vocabulary import SEVERITIES, Severity

# What a rule judges: the evidence of one site pair, one cluster of an option, one hot row
# under an option, or how an option's clusters relate (the grouping search asks the cluster
# and hot-row rules of each candidate group, and the cross-cluster rules of a partition).
Scope = Literal["link", "cluster", "hot_row", "cross_cluster"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
_REQUIRED = ("id", "title", "severity", "applies_to", "remedy_cost", "message", "rationale")
_ALLOWED = {*_REQUIRED, "parameters", "bounds", "references", "examples", "remedy"}
_MAX_RULE_FILE_BYTES = 256 * 1024
# A number as YAML 1.2's core schema reads it: PyYAML (YAML 1.1) wants a dot and a signed
# exponent, and reads 1e3 as text (https://yaml.org/spec/1.2.2/#1023-core-schema).
_YAML12_NUMBER = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True)
class Reference:
    """One source a rule rests on, with the title a reader sees.

    ``url`` is a public document (``https://``; ``http://`` is accepted from a user's pack);
    ``source_file`` a file of the advisor source, for evidence that is this project's own (its
    lab measurements, its model), shown as such rather than as a link. A reference written as
    plain text, as rule packs before the titled form did, keeps its text in ``title`` with
    neither set: the documents then link any address inside it.
    """

    title: str
    url: str = ""
    source_file: str = ""

    def __str__(self) -> str:
        """The reference as one line of plain text (the old plain-string form)."""
        if self.url:
            return f"{self.title}: {self.url}"
        if self.source_file:
            return f"{self.title} ({self.source_file} {IN_THE_SOURCE})"
        return self.title


# How a reference to a file of the project is shown: a reader of a design document has no
# checkout, so the path says where it lives.
IN_THE_SOURCE = "in the advisor source"


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: Severity
    message: str
    rationale: str
    applies_to: Scope = "cluster"
    remedy_cost: int = 0  # 0 in an override: keep the shipped cost
    parameters: Mapping[str, float] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    references: tuple[Reference, ...] = ()
    examples: Mapping[str, str] = field(default_factory=dict)
    remedy: str = ""  # what would remove a blocker, a template over {subject}
    source: str = ""


@dataclass(frozen=True)
class RuleHit:
    """What a predicate found: about what, under which option, with which numbers."""

    subject: str
    values: Mapping[str, Any]
    option: str | None = None
    remedy: str | None = None  # the kind of change that removes it (advisor.verdict.REMEDIES)


def default_rules_dir() -> Path:
    """The shipped pack: inside the wheel, or the repository's ``rules/`` when editable."""
    package = Path(__file__).parent.parent  # advisor/
    packaged = package / "_data" / "rules"
    return packaged if packaged.is_dir() else package.parent / "rules"


# Folders of override files: one path, or several (``rules_dirs="my-rules"`` is one folder,
# not a list of one-letter folders).
RulesDirs = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


def load_rules(extra_dirs: RulesDirs = ()) -> dict[str, Rule]:
    """The shipped rules, overridden field by field by the files in ``extra_dirs``.

    Raises
    ------
    AdvisorError
        A rule file that cannot be read or used, naming the file and, where the problem is
        one key, the key and its line and column.
    """
    try:
        return _load_rules(extra_dirs)
    except AdvisorError as error:
        raise _with_line(error) from None


def _load_rules(extra_dirs: RulesDirs) -> dict[str, Rule]:
    rules = {rule.id: rule for rule, _ in _read_dir(default_rules_dir(), complete=True)}
    for directory in _rules_dirs(extra_dirs):
        if not Path(directory).is_dir():
            raise AdvisorError(
                "rules directory not found or not a directory", Location(str(directory))
            )
        for override, keys in _read_dir(Path(directory), complete=False):
            base = rules.get(override.id)
            if base is None:
                raise AdvisorError(
                    f"unknown rule id {override.id!r}: a rule file can only adjust a shipped "
                    f"rule; shipped ids: {', '.join(sorted(rules))}",
                    Location(override.source),
                )
            rules[override.id] = _merge(base, override, overridden=keys)
    return rules


def _with_line(error: AdvisorError) -> AdvisorError:
    """``error`` with the line and column of its key in its file, where both are known (the
    file is read again, only for an error)."""
    import yaml

    from advisor.inputs.loading import read_text_file

    where = error.location
    if where.file is None or where.line is not None or not where.key:
        return error
    try:
        text = read_text_file(Path(where.file), _MAX_RULE_FILE_BYTES, what="rule file")
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (AdvisorError, yaml.YAMLError, RecursionError):
        return error
    for part in where.key.split("."):
        if not isinstance(node, yaml.MappingNode):
            return error
        found = [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part]
        if not found:
            return error
        node = found[0]
    if node is None:
        return error
    mark = node.start_mark
    return AdvisorError(error.message, replace(where, line=mark.line + 1, column=mark.column + 1))


def _rules_dirs(extra_dirs: object) -> list[Path]:
    """``extra_dirs`` as a list of folders: a single path is one folder."""
    if isinstance(extra_dirs, str | os.PathLike):
        return [Path(extra_dirs)]
    if not isinstance(extra_dirs, Iterable) or isinstance(extra_dirs, bytes | Mapping):
        raise AdvisorError(
            f"rules_dirs must be a folder or a list of folders, got {type(extra_dirs).__name__}"
        )
    folders = list(extra_dirs)
    wrong = [f for f in folders if not isinstance(f, str | os.PathLike)]
    if wrong:
        raise AdvisorError(
            f"rules_dirs must be a folder or a list of folders, got a {type(wrong[0]).__name__} "
            "in the list"
        )
    return [Path(f) for f in folders]


def render_message(rule: Rule, values: Mapping[str, Any]) -> str:
    """Fill a rule's message template; a field the predicate does not report is an error."""
    try:
        return rule.message.format_map(dict(values)).strip()
    except (KeyError, ValueError, TypeError) as error:
        raise AdvisorError(
            f"rule {rule.id}: message cannot be filled ({error}); available fields: "
            f"{', '.join(sorted(values))}",
            Location(rule.source),
        ) from None


def _merge(base: Rule, override: Rule, *, overridden: frozenset[str]) -> Rule:
    if "applies_to" in overridden and override.applies_to != base.applies_to:
        raise AdvisorError(
            f"rule {base.id} applies to {base.applies_to}: the scope belongs to its predicate "
            "and cannot be overridden",
            Location(override.source, key="applies_to"),
        )
    changes: dict[str, Any] = {
        k: v
        for k, v in vars(override).items()
        if k in overridden and k not in {"id", "parameters", "applies_to", "bounds"}
    }
    if overridden & {"message", "remedy"}:
        # A template that cannot be filled is the override's mistake: name its file.
        changes["source"] = override.source
    unknown = set(override.parameters) - set(base.parameters)
    if unknown:
        raise AdvisorError(
            f"rule {base.id} has no parameter {sorted(unknown)[0]!r}; its parameters: "
            f"{', '.join(base.parameters) or 'none'}",
            Location(override.source, key="parameters"),
        )
    for name, value in override.parameters.items():
        _check_bound(base, name, value, Location(override.source, key=f"parameters.{name}"))
    return replace(base, **changes, parameters={**base.parameters, **override.parameters})


def _check_bound(rule: Rule, name: str, value: float, where: Location) -> None:
    """A parameter within its rule's bounds (a queue at a utilisation of 2 waits forever)."""
    low, high = rule.bounds[name]
    if not low <= value <= high:
        raise AdvisorError(
            f"must be from {low:g} to {high:g} (rule {rule.id}), got {value:g}", where
        )


def _read_dir(directory: Path, *, complete: bool) -> list[tuple[Rule, frozenset[str]]]:
    """The rules of a folder, each with the keys its file sets; an id defined twice in one
    folder is refused (which one wins would depend on the file names' order)."""
    files = sorted(p for p in directory.iterdir() if p.suffix in {".yaml", ".yml"})
    rules = [_read_rule(path, complete=complete) for path in files]
    first: dict[str, str] = {}
    for rule, _ in rules:
        if rule.id in first:
            raise AdvisorError(
                f"rule {rule.id} is also defined in {first[rule.id]}: one file per rule id "
                "in a folder",
                Location(rule.source, key="id"),
            )
        first[rule.id] = rule.source
    return rules


def _read_rule(path: Path, *, complete: bool) -> tuple[Rule, frozenset[str]]:
    import yaml

    from advisor.inputs.loading import read_text_file

    text = read_text_file(path, _MAX_RULE_FILE_BYTES, what="rule file")
    try:
        data = _parse_yaml(text)
    except RecursionError:  # the pure loader's constructor and composer recurse per level
        raise AdvisorError("YAML nested too deeply", Location(str(path))) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = Location(str(path), mark.line + 1 if mark else None)
        raise AdvisorError(
            f"YAML syntax error: {getattr(error, 'problem', error)}", where
        ) from None
    where = Location(str(path))
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise AdvisorError("a rule file is a mapping with at least an 'id' (text)", where)
    unknown = set(data) - _ALLOWED
    if unknown:
        raise AdvisorError(
            f"unknown key {sorted(unknown)[0]!r}; expected one of {', '.join(sorted(_ALLOWED))}",
            where,
        )
    missing = [k for k in _REQUIRED if k not in data] if complete else []
    if missing:
        raise AdvisorError(f"rule {data['id']} misses {', '.join(missing)}", where)
    if "bounds" in data and not complete:
        raise AdvisorError(
            "bounds belong to the shipped rule: an override sets parameters within them",
            Location(str(path), key="bounds"),
        )
    return _build(data, path, complete=complete), frozenset(data)


def _parse_yaml(text: str) -> Any:
    """The YAML of a rule file, with libyaml's C parser when PyYAML was built with it.

    The pure-Python loader takes about 5 ms per rule file, the C one a tenth of that: on
    every run that is most of the pack's cost. Both build the same objects (one safe
    constructor), but their error wording differs, so a file the C parser refuses is parsed
    again by the pure one: the user sees the same message and line either way.
    """
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is None:
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=fast)  # CSafeLoader: the safe constructor
    except yaml.YAMLError as fast_error:
        try:
            return yaml.safe_load(text)  # raises with the pure parser's wording and position
        except RecursionError:  # libyaml stops at 1,000 levels; the pure parser recurses
            raise fast_error from None


def _build(data: dict[str, Any], path: Path, *, complete: bool) -> Rule:
    where = Location(str(path))
    severity = data.get("severity", "")
    if "severity" in data and (not isinstance(severity, str) or severity not in SEVERITIES):
        read_as = " (YAML reads an unquoted no, off, yes or on as a boolean)"
        raise AdvisorError(
            f"severity must be one of {', '.join(SEVERITIES)}, got {severity!r}"
            + (read_as if isinstance(severity, bool) else ""),
            Location(str(path), key="severity"),
        )
    parameters = _numbers(data.get("parameters") or {}, Location(str(path), key="parameters"))
    bounds = _bounds(data.get("bounds"), parameters, path) if complete else {}
    for key in ("title", "message", "rationale", "applies_to", "remedy"):
        if key in data and not isinstance(data[key], str):
            raise AdvisorError(f"{key} must be text", Location(str(path), key=key))
    scope = data.get("applies_to", "cluster")
    if scope not in SCOPES:
        raise AdvisorError(
            f"applies_to must be one of {', '.join(SCOPES)}, got {scope!r}",
            Location(str(path), key="applies_to"),
        )
    cost = data.get("remedy_cost", 0)
    if "remedy_cost" in data and (
        not isinstance(cost, int) or isinstance(cost, bool) or not 1 <= cost <= 100
    ):
        raise AdvisorError(
            f"remedy_cost must be a whole number from 1 to 100, got {cost!r}",
            Location(str(path), key="remedy_cost"),
        )
    _check_template(data.get("message", ""), where)
    _check_template(data.get("remedy", ""), where)
    return Rule(
        id=data["id"],
        title=data.get("title", "").strip(),
        severity=severity,
        message=" ".join(data.get("message", "").split()),
        rationale=data.get("rationale", "").strip(),
        parameters=parameters,
        bounds=bounds,
        references=_references(data.get("references"), path),
        examples=_examples(data.get("examples"), path),
        applies_to=scope,
        remedy_cost=cost,
        remedy=" ".join(data.get("remedy", "").split()),
        source=str(path),
    )


def _numbers(value: object, where: Location) -> dict[str, float]:
    """``parameters``: names to finite numbers (YAML 1.2's ``1e3`` read as one)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise AdvisorError("parameters must map names to numbers", where)
    numbers: dict[str, float] = {}
    for name, number in value.items():
        if isinstance(number, str) and _YAML12_NUMBER.fullmatch(number.strip()):
            number = float(number)
        if not isinstance(number, int | float) or isinstance(number, bool):
            raise AdvisorError("parameters must map names to numbers", where)
        try:
            numbers[name] = float(number)
        except OverflowError:  # a 400-digit integer
            numbers[name] = math.inf
        if not math.isfinite(numbers[name]):  # '.nan' compares false with everything
            raise AdvisorError(
                f"must be a finite number, got {number!r}"[:200],
                Location(where.file, key=f"parameters.{name}"),
            )
    return numbers


def _bounds(
    value: object, parameters: dict[str, float], path: Path
) -> dict[str, tuple[float, float]]:
    """``bounds`` of a shipped rule: ``[low, high]`` for every parameter, its default inside."""
    where = Location(str(path), key="bounds")
    value = {} if value is None else value
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and len(v) == 2 for v in value.values()
    ):
        raise AdvisorError("bounds must map each parameter to [low, high]", where)
    lows = _numbers({k: v[0] for k, v in value.items()}, where)
    highs = _numbers({k: v[1] for k, v in value.items()}, where)
    bounds = {name: (lows[name], highs[name]) for name in value}
    if any(low > high for low, high in bounds.values()):
        raise AdvisorError("bounds must map each parameter to [low, high], low <= high", where)
    missing = [name for name in parameters if name not in bounds]
    if missing:
        raise AdvisorError(f"parameter {missing[0]!r} has no bounds ([low, high])", where)
    rule = Rule(id=path.stem, title="", severity="info", message="", rationale="", bounds=bounds)
    for name, default in parameters.items():
        _check_bound(rule, name, default, Location(str(path), key=f"parameters.{name}"))
    return bounds


def _references(value: object, path: Path) -> tuple[Reference, ...]:
    """``references``: a list of plain text or of ``{title, url}`` / ``{title, source_file}``
    mappings, at most a rule file's size in all (aliases count every time they are used, so
    an alias bomb is refused instead of expanded)."""
    where = Location(str(path), key="references")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(r, str | dict) for r in value):
        raise AdvisorError("references must be a list of text (one source per item)", where)
    texts: list[str] = []
    for item in value:
        texts += [item] if isinstance(item, str) else _reference_texts(item, where)
    _check_size(texts, where)
    return tuple(
        Reference(title=item) if isinstance(item, str) else _titled_reference(item, where)
        for item in value
    )


_REFERENCE_KEYS = ("title", "url", "source_file")
# A public address: http(s), no whitespace, nothing that closes a Markdown link, a Markdown
# table cell or an HTML attribute (the documents put it in all three).
_PUBLIC_URL = re.compile(r"https?://[^\s<>\"'()\[\]`\\|]+")
# A file of the advisor source: a relative path of plain names, never a way out of it.
_SOURCE_FILE = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")


def _reference_texts(item: dict[Any, Any], where: Location) -> list[str]:
    """The texts of a ``{title, url}`` mapping, refused before any use if it is not one."""
    unknown = [k for k in item if k not in _REFERENCE_KEYS]
    if unknown or not all(isinstance(v, str) for v in item.values()):
        raise AdvisorError(
            "a reference is text or a mapping of title, url or source_file to text"
            + (f", got key {str(unknown[0])[:40]!r}" if unknown else ""),
            where,
        )
    return list(item.values())


def _titled_reference(item: dict[str, str], where: Location) -> Reference:
    title = " ".join(item.get("title", "").split())
    url = item.get("url", "").strip()
    source_file = item.get("source_file", "").strip()
    if not title:
        raise AdvisorError("a reference mapping needs a title (what a reader sees)", where)
    if url and source_file:
        raise AdvisorError(
            f"reference {title[:60]!r}: a url or a source_file, not both (one source per item)",
            where,
        )
    if url and not _PUBLIC_URL.fullmatch(url):
        raise AdvisorError(
            f"reference {title[:60]!r}: url must be an http(s) address without spaces, "
            f"quotes or brackets, got {url[:80]!r}",
            where,
        )
    if source_file and (not _SOURCE_FILE.fullmatch(source_file) or ".." in source_file.split("/")):
        raise AdvisorError(
            f"reference {title[:60]!r}: source_file must be a path inside the advisor source "
            f"(relative, no ..), got {source_file[:80]!r}",
            where,
        )
    return Reference(title=title, url=url, source_file=source_file)


def _examples(value: object, path: Path) -> dict[str, str]:
    """``examples``: a mapping of a name (``fires``, ``quiet``) to a topology as text."""
    where = Location(str(path), key="examples")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise AdvisorError("examples must map names (fires, quiet) to a topology as text", where)
    _check_size([*value, *value.values()], where)
    return dict(value)


def _check_size(texts: list[str], where: Location) -> None:
    total = sum(map(len, texts))
    if total > _MAX_RULE_FILE_BYTES:
        raise AdvisorError(
            f"{total:,} characters once YAML aliases are expanded; a rule file holds at most "
            f"{_MAX_RULE_FILE_BYTES:,}",
            where,
        )


# Widths and precisions in a message's format specs (``{rtt_ms:.1f}``): a finding is a line
# of prose, and '{x:100000000}' builds a 100 MB string per message.
_MAX_FORMAT_NUMBER = 100


def _check_template(template: str, where: Location) -> None:
    """Only plain field names, in the template and in any format spec nested inside it."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise AdvisorError(f"message template: {error}", where) from None
    for _, name, spec, _ in parts:
        if name is not None and not name.isidentifier():
            raise AdvisorError(
                f"message template field {{{name}}} must be a plain name "
                "(no attribute access, indexing or positional fields)",
                where,
            )
        if spec and "{" in spec:
            _check_template(spec, where)  # '{x:{y.__class__}}' hides a field in the spec
            # '{x:{y}}' takes its width from a value at run time: no bound could hold.
            raise AdvisorError(
                f"message template field {{{name}:{spec}}}: a format spec must be literal "
                "(no nested fields)",
                where,
            )
        if spec and any(
            len(n) > 3 or int(n) > _MAX_FORMAT_NUMBER for n in re.findall(r"\d+", spec)
        ):
            raise AdvisorError(
                f"message template field {{{name}:{_shown(spec)}}}: widths and precisions are "
                f"at most {_MAX_FORMAT_NUMBER}",
                where,
            )


def _shown(spec: str) -> str:
    """A format spec as an error quotes it: a 5,000-digit width is not echoed whole."""
    return spec if len(spec) <= 40 else spec[:37] + "..."
