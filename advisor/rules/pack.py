"""The rule pack: rules are data (``rules/*.yaml``), their logic one named predicate each.

A rule file holds ``id``, ``title``, ``severity``, ``applies_to`` (its scope: ``link``,
``cluster``, ``hot_row`` or ``cross_cluster``), ``remedy_cost`` (how hard a blocker of this
rule is to remove, 1 a design decision, 2 more capacity, 3 physics), ``parameters``
(thresholds with defaults), ``message`` (a ``str.format`` template over the values the
predicate reports), ``rationale``, ``references``, ``examples`` and a ``remedy`` (what would
remove it). Users override a severity, a remedy cost, a threshold, a title or a message with
their own files (``--rules DIR``): a file there needs only ``id`` and what changes. The scope
belongs to the predicate and cannot be overridden.
Templates may only name plain fields (``{rtt_ms:.1f}``): no attribute or index access, so a
rule file cannot reach into Python objects. Nothing in a rule file is executed.
"""

from __future__ import annotations

__all__ = [
    "SCOPES",
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
_ALLOWED = {*_REQUIRED, "parameters", "references", "examples", "remedy"}
_MAX_RULE_FILE_BYTES = 256 * 1024


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
    references: tuple[str, ...] = ()
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
    """The shipped rules, overridden field by field by the files in ``extra_dirs``."""
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
        if k in overridden and k not in {"id", "parameters", "applies_to"}
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
    return replace(base, **changes, parameters={**base.parameters, **override.parameters})


def _read_dir(directory: Path, *, complete: bool) -> list[tuple[Rule, frozenset[str]]]:
    """The rules of a folder, each with the keys its file sets."""
    files = sorted(p for p in directory.iterdir() if p.suffix in {".yaml", ".yml"})
    return [_read_rule(path, complete=complete) for path in files]


def _read_rule(path: Path, *, complete: bool) -> tuple[Rule, frozenset[str]]:
    import yaml

    from advisor.inputs.loading import read_text_file

    text = read_text_file(path, _MAX_RULE_FILE_BYTES, what="rule file")
    try:
        data = _parse_yaml(text)
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
    return _build(data, path), frozenset(data)


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
    except yaml.YAMLError:
        return yaml.safe_load(text)  # raises with the pure parser's wording and position


def _build(data: dict[str, Any], path: Path) -> Rule:
    where = Location(str(path))
    severity = data.get("severity", "")
    if severity and severity not in SEVERITIES:
        raise AdvisorError(
            f"severity must be one of {', '.join(SEVERITIES)}, got {severity!r}",
            Location(str(path), key="severity"),
        )
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in parameters.values()
    ):
        raise AdvisorError(
            "parameters must map names to numbers", Location(str(path), key="parameters")
        )
    for name, value in parameters.items():
        if not math.isfinite(value):  # '.nan' compares false with everything: a silent off
            raise AdvisorError(
                f"must be a finite number, got {value!r}",
                Location(str(path), key=f"parameters.{name}"),
            )
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
        parameters={k: float(v) for k, v in parameters.items()},
        references=_references(data.get("references"), path),
        examples=_examples(data.get("examples"), path),
        applies_to=scope,
        remedy_cost=cost,
        remedy=" ".join(data.get("remedy", "").split()),
        source=str(path),
    )


def _references(value: object, path: Path) -> tuple[str, ...]:
    """``references``: a list of text, at most a rule file's size in all (aliases count
    every time they are used, so an alias bomb is refused instead of expanded)."""
    where = Location(str(path), key="references")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise AdvisorError("references must be a list of text (one source per item)", where)
    _check_size(value, where)
    return tuple(value)


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
        if spec and any(int(n) > _MAX_FORMAT_NUMBER for n in re.findall(r"\d+", spec)):
            raise AdvisorError(
                f"message template field {{{name}:{spec}}}: widths and precisions are at most "
                f"{_MAX_FORMAT_NUMBER}",
                where,
            )
