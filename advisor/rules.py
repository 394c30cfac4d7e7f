"""The rule pack: rules are data (``rules/*.yaml``), their logic one named predicate each.

A rule file holds ``id``, ``title``, ``severity``, ``parameters`` (thresholds with defaults),
``message`` (a ``str.format`` template over the values the predicate reports), ``rationale``,
``references``, ``examples`` and, for blockers, a ``remedy`` (what would remove it).
Users override a severity, a threshold, a title or a message
with their own files (``--rules DIR``): a file there needs only ``id`` and what changes.
Templates may only name plain fields (``{rtt_ms:.1f}``): no attribute or index access, so a
rule file cannot reach into Python objects. Nothing in a rule file is executed.
"""

from __future__ import annotations

__all__ = ["Rule", "RuleHit", "default_rules_dir", "load_rules", "render_message"]

import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError, Location

SEVERITIES = ("blocker", "warning", "info")
_REQUIRED = ("id", "title", "severity", "message", "rationale")
_ALLOWED = {*_REQUIRED, "parameters", "references", "examples", "applies_to", "remedy"}
_MAX_RULE_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: str
    message: str
    rationale: str
    parameters: Mapping[str, float] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    examples: Mapping[str, str] = field(default_factory=dict)
    applies_to: str = ""
    remedy: str = ""  # what would remove a blocker, a template over {subject}
    source: str = ""


@dataclass(frozen=True)
class RuleHit:
    """What a predicate found: about what, under which option, with which numbers."""

    subject: str
    values: Mapping[str, Any]
    option: str | None = None


def default_rules_dir() -> Path:
    """The shipped pack: inside the wheel, or the repository's ``rules/`` when editable."""
    packaged = Path(__file__).parent / "_data" / "rules"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "rules"


def load_rules(extra_dirs: Iterable[Path] = ()) -> dict[str, Rule]:
    """The shipped rules, overridden field by field by the files in ``extra_dirs``."""
    rules = {rule.id: rule for rule in _read_dir(default_rules_dir(), complete=True)}
    for directory in extra_dirs:
        if not Path(directory).is_dir():
            raise AdvisorError(
                "rules directory not found or not a directory", Location(str(directory))
            )
        for override in _read_dir(Path(directory), complete=False):
            base = rules.get(override.id)
            if base is None:
                raise AdvisorError(
                    f"unknown rule id {override.id!r}: a rule file can only adjust a shipped "
                    f"rule; shipped ids: {', '.join(sorted(rules))}",
                    Location(override.source),
                )
            rules[override.id] = _merge(base, override)
    return rules


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


def _merge(base: Rule, override: Rule) -> Rule:
    changes: dict[str, Any] = {
        k: v
        for k, v in vars(override).items()
        if v not in ("", (), {}, None) and k not in {"id", "parameters"}
    }
    unknown = set(override.parameters) - set(base.parameters)
    if unknown:
        raise AdvisorError(
            f"rule {base.id} has no parameter {sorted(unknown)[0]!r}; its parameters: "
            f"{', '.join(base.parameters) or 'none'}",
            Location(override.source, key="parameters"),
        )
    return replace(base, **changes, parameters={**base.parameters, **override.parameters})


def _read_dir(directory: Path, *, complete: bool) -> list[Rule]:
    files = sorted(p for p in directory.iterdir() if p.suffix in {".yaml", ".yml"})
    return [_read_rule(path, complete=complete) for path in files]


def _read_rule(path: Path, *, complete: bool) -> Rule:
    import yaml

    from advisor.loading import read_text_file

    text = read_text_file(path, _MAX_RULE_FILE_BYTES, what="rule file")
    try:
        data = yaml.safe_load(text)
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
    return _build(data, path)


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
    for key in ("title", "message", "rationale", "applies_to", "remedy"):
        if key in data and not isinstance(data[key], str):
            raise AdvisorError(f"{key} must be text", Location(str(path), key=key))
    _check_template(data.get("message", ""), where)
    _check_template(data.get("remedy", ""), where)
    return Rule(
        id=data["id"],
        title=data.get("title", "").strip(),
        severity=severity,
        message=" ".join(data.get("message", "").split()),
        rationale=data.get("rationale", "").strip(),
        parameters={k: float(v) for k, v in parameters.items()},
        references=tuple(str(r) for r in data.get("references") or ()),
        examples={str(k): str(v) for k, v in (data.get("examples") or {}).items()},
        applies_to=data.get("applies_to", ""),
        remedy=" ".join(data.get("remedy", "").split()),
        source=str(path),
    )


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
