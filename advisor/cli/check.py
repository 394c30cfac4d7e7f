"""``advisor check``: read the options, call :func:`advisor.check.check`, print the findings,
set the exit code (0 no finding as severe as ``--fail-on``, 1 one is, 2 bad input or a node
that cannot be read).

The connection options are ``advisor collect``'s (:func:`advisor.cli.collect._settings`: the
password from an environment variable or a my.cnf, never printed).
"""

from __future__ import annotations

__all__ = ["check_command"]

from pathlib import Path
from typing import Annotated, Literal

import typer

from advisor.cli.collect import (
    DefaultsFile,
    Host,
    PasswordEnv,
    Port,
    Socket,
    SslCa,
    SslCert,
    SslKey,
    SslVerifyIdentity,
    _settings,
    parse_duration_s,
)
from advisor.cli.output import EXIT_CHECK_FAILED, Exit, out, warn
from advisor.cli.recommend import FailOn
from advisor.vocabulary import SEVERITIES, Architecture


def check_command(
    file: Annotated[Path, typer.Argument(help="The topology.yaml the cluster was built from.")],
    host: Host = None,
    port: Port = None,
    user: Annotated[
        str | None,
        typer.Option(
            help="User (read-only; the channels need SLAVE MONITOR or REPLICATION CLIENT)."
        ),
    ] = None,
    password_env: PasswordEnv = None,
    defaults_file: DefaultsFile = None,
    socket: Socket = None,
    ssl_ca: SslCa = None,
    ssl_cert: SslCert = None,
    ssl_key: SslKey = None,
    ssl_verify_identity: SslVerifyIdentity = False,
    duration: Annotated[str, typer.Option(help="How long to watch (5m, 1h).")] = "5m",
    interval: Annotated[
        str | None,
        typer.Option(help="Time between samples [default: a tenth of the duration, 1s to 10s]."),
    ] = None,
    architecture: Annotated[
        Architecture | None,
        typer.Option("--architecture", help="The option that runs [default: the recommended one]."),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            help="The design's cluster of the node, when wsrep_cluster_name does not say."
        ),
    ] = None,
    output_format: Annotated[Literal["text", "json"], typer.Option("--format", "-f")] = "text",
    fail_on: Annotated[
        FailOn | None,
        typer.Option("--fail-on", help="Exit 1 if a finding is this severe (blocker, warning)."),
    ] = None,
    rules: Annotated[
        list[Path] | None, typer.Option("--rules", help="Folder of rule files (repeatable).")
    ] = None,
) -> None:
    """Watch a running node and report where the cluster drifted from its design."""
    from advisor.check.api import check
    from advisor.check.render import render_check
    from advisor.errors import AdvisorError

    duration_s = parse_duration_s(duration, "--duration")
    interval_s = None if interval is None else parse_duration_s(interval, "--interval")
    if interval_s is not None and interval_s > duration_s:
        raise AdvisorError(f"--interval ({interval}) must not exceed --duration ({duration})")
    settings = _settings(
        host,
        port,
        user,
        password_env,
        defaults_file,
        socket,
        ssl_ca,
        ssl_cert,
        ssl_key,
        ssl_verify_identity,
    )
    try:
        result = check(
            file,
            settings,
            duration_s,
            architecture=architecture,
            cluster=cluster,
            interval_s=interval_s,
            rules_dirs=tuple(rules or ()),
        )
    except KeyboardInterrupt:
        raise AdvisorError("interrupted before the check was done; nothing judged") from None
    out(render_check(result, output_format))
    if fail_on is not None:
        severe = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        hits = [f.id for f in result.findings if f.severity in severe]
        if hits:
            warn(f"{file}: --fail-on {fail_on}: {', '.join(sorted(set(hits)))}")
            raise Exit(EXIT_CHECK_FAILED)
