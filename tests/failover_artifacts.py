"""Every failover file of a design, as ``advisor doc`` writes it.

advisor/documents/render.py renders the four failover files it names; the return script and
the switchover (``FailoverFiles.artifacts``) are rendered here with the same environment and
context until it renders every artifact of ``FailoverFiles.artifacts()`` itself (then this
adds nothing: a file already rendered is kept as rendered).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def failover_artifacts(analysis: Any, rendered: dict[str, str]) -> dict[str, str]:
    """``rendered`` plus every failover file of the plan that it lacks."""
    from advisor.config.plan import plan_configuration
    from advisor.documents.context import document_context
    from advisor.documents.environment import make_environment, render_template

    context = document_context(analysis)
    plan = context["plan"]
    assert plan == plan_configuration(analysis)
    env = make_environment(None)
    out = dict(rendered)
    base = {"plan": plan, "topology": context["topology"]}
    for f in plan.failovers:
        for name, template in f.artifacts():
            if name not in out:
                out[name] = render_template(env, template, {**base, "f": f})
    return out


def write_missing(design: Path, analysis: Any) -> list[Path]:
    """Write into ``design`` the failover files ``advisor doc`` did not; return them."""
    written = []
    for name, text in failover_artifacts(analysis, {}).items():
        path = design / name
        if not path.exists():
            path.write_text(text)
            written.append(path)
    return written
