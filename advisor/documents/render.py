"""Design documents and configuration artifacts, rendered from Jinja2 templates.

:func:`render_documents` renders everything in memory (documents, SVG charts, configuration
files) and :func:`write_documents` writes it all at once through
:func:`advisor.safe_write.write_files`, so that a failing template writes nothing. Templates
run sandboxed with a time limit (:mod:`advisor.documents.environment`); what they read is plain data
(:mod:`advisor.documents.context`): the Recommendation, the configuration plan, the rules'
rationale and the charts.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_LIMITS",
    "DOCUMENTS",
    "Limits",
    "default_templates_dir",
    "render_documents",
    "write_documents",
]

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.documents.environment import (
    Limits,
    default_templates_dir,
    make_environment,
    render_template,
)
from advisor.errors import AdvisorError

if TYPE_CHECKING:
    from advisor.analysis import Analysis

DEFAULT_LIMITS = Limits()
# Document format -> (template, file written).
DOCUMENTS = {
    "md": ("design.md.j2", "design.md"),
    "html": ("design.html.j2", "design.html"),
    "adr": ("adr.md.j2", "adr.md"),
}


def render_documents(
    analysis: Analysis,
    formats: Sequence[str] = ("md", "html", "adr"),
    templates_dir: Path | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, str]:
    """Every file of the design document, relative name -> content.

    Parameters
    ----------
    analysis
        What :func:`advisor.analysis.analyse` returned.
    formats
        Documents to render: ``md`` (design.md, with its SVG charts under ``charts/``),
        ``html`` (design.html, self-contained) and ``adr`` (adr.md, MADR layout). The
        configuration artifacts under ``config/`` are always rendered.
    templates_dir
        A folder of templates searched before the shipped ones; the shipped ones stay
        reachable as ``default/<name>``.
    limits
        Time and size bounds of each template's rendering.

    Raises
    ------
    AdvisorError
        An unknown format, or a template that fails, names an undefined value, leaves the
        sandbox or passes a limit.
    """
    from advisor.documents.context import chart_files, document_context

    unknown = [f for f in formats if f not in DOCUMENTS]
    if unknown:
        raise AdvisorError(
            f"unknown document format {unknown[0]!r}; expected one of {', '.join(DOCUMENTS)}"
        )
    env = make_environment(templates_dir, limits=limits)
    context = document_context(analysis)
    files: dict[str, str] = {}
    for fmt in DOCUMENTS:
        if fmt in formats:
            template, name = DOCUMENTS[fmt]
            files[name] = render_template(env, template, context)
    if "md" in formats:
        files.update(chart_files(context))
    files.update(_artifacts(env, context))
    _check_distinct([*context["plan"].files(), context["alerts"].file])
    return files


def _check_distinct(names: Sequence[str]) -> None:
    """Two generated files under one name would lose one silently: fail loudly instead."""
    seen: dict[str, str] = {}
    for name in names:
        if name.casefold() in seen:
            raise AdvisorError(
                f"two generated files are both named {name!r} (a bug in advisor's naming; "
                "please report it with the topology)"
            )
        seen[name.casefold()] = name


def _artifacts(env: Any, context: dict[str, Any]) -> dict[str, str]:
    from advisor.config.alerts import render_alerts
    from advisor.names import safe_name

    plan = context["plan"]
    base = {"plan": plan, "topology": context["topology"]}
    files = {}
    for cluster in plan.clusters:
        for site in cluster.site_plans:
            files[site.file] = render_template(
                env, "config/galera.cnf.j2", {**base, "cluster": cluster, "site": site}
            )
            for host, settings in site.per_node.items():
                files[f"config/nodes/{safe_name(host)}.cnf"] = render_template(
                    env,
                    "config/node.cnf.j2",
                    {**base, "cluster": cluster, "site": site, "host": host, "settings": settings},
                )
        if cluster.garbd is not None:
            files[cluster.garbd.file] = render_template(
                env, "config/garbd.conf.j2", {**base, "cluster": cluster}
            )
    files[plan.proxysql.file] = render_template(env, "config/proxysql.sql.j2", base)
    for link in plan.async_links:
        files[link.file] = render_template(
            env, "config/async-replication.sql.j2", {**base, "link": link}
        )
    files[plan.os.file] = render_template(env, "config/sysctl.sh.j2", base)
    files[plan.certificates.file] = render_template(env, "config/make-certificates.sh.j2", base)
    if plan.heartbeat is not None:
        for beat in plan.heartbeat.files:
            files[beat.file] = render_template(
                env, "config/heartbeat.sql.j2", {**base, "beat": beat}
            )
    for f in plan.failovers:
        for name, template in f.artifacts():
            files[name] = render_template(env, template, {**base, "f": f})
    for b in plan.bootstraps:
        files[b.file] = render_template(env, "config/bootstrap.sql.j2", {**base, "b": b})
    # Written as YAML by advisor.config.alerts, not a template: every name from user text
    # stays a quoted YAML string and a PromQL literal.
    files[context["alerts"].file] = render_alerts(context["alerts"])
    return files


def write_documents(
    analysis: Analysis,
    out_dir: Path,
    *,
    formats: Sequence[str] = ("md", "html", "adr"),
    templates_dir: Path | None = None,
    force: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[Path]:
    """Render every file first, then write them all into ``out_dir``; return the paths.

    Nothing is written when rendering fails. Files the tool did not write are not replaced
    unless ``force`` (see :func:`advisor.safe_write.write_files`).
    """
    from advisor.safe_write import write_files

    files = render_documents(analysis, formats, templates_dir, limits=limits)
    return write_files(Path(out_dir), files, force=force)
