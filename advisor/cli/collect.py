"""``advisor collect``: read the options, call :func:`advisor.collect.collect`, write what it
gathered (a file, ``--into`` a topology.yaml, or standard output) and say so on stderr.

Only typer is imported here at start-up; the driver and numpy load when the command runs.
Every problem the user can cause raises :class:`advisor.errors.AdvisorError`, which the app
prints as one line (exit 2); the library (:mod:`advisor.collect`) prints nothing.
"""

from __future__ import annotations

__all__ = ["collect_command", "parse_duration_s"]

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from advisor.errors import AdvisorError

if TYPE_CHECKING:
    from advisor.collect.api import CollectedEvidence
    from advisor.collect.connection import ConnectionSettings


# The connection options, declared once for `collect` and `check` (typer reads them from each
# command's signature).
Host = Annotated[str | None, typer.Option(help="Host of one node of the cluster.")]
Port = Annotated[int | None, typer.Option(help="Its MySQL port [default: 3306].")]
PasswordEnv = Annotated[
    str | None,
    typer.Option(
        "--password-env",
        metavar="VAR",
        help="Read the password from this environment variable.",
    ),
]
DefaultsFile = Annotated[
    Path | None,
    typer.Option(
        "--defaults-file",
        metavar="FILE",
        help="A my.cnf file whose [client] group gives user, password, host, port.",
    ),
]
Socket = Annotated[str | None, typer.Option(help="Unix socket instead of host and port.")]
SslCa = Annotated[Path | None, typer.Option("--ssl-ca", help="CA certificate (PEM).")]
SslCert = Annotated[Path | None, typer.Option("--ssl-cert", help="Client certificate.")]
SslKey = Annotated[Path | None, typer.Option("--ssl-key", help="Client key.")]
SslVerifyIdentity = Annotated[
    bool,
    typer.Option("--ssl-verify-identity", help="Check the server certificate names the host."),
]

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)")
_UNIT_S = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration_s(text: str, option: str = "duration") -> float:
    """Seconds in ``10s``, ``10m``, ``1h``, ``500ms``, ``1m30s`` or a plain number of seconds.

    >>> [parse_duration_s(text) for text in ("10m", "500ms", "1m30s", "2.5")]
    [600.0, 0.5, 90.0, 2.5]
    """
    spelled = text.strip().lower()
    seconds: float | None = None
    try:
        seconds = float(spelled)
    except ValueError:
        parts = _DURATION_PART.findall(spelled)
        if parts and "".join(number + unit for number, unit in parts) == spelled:
            seconds = sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    if seconds is None or not 0 < seconds < float("inf"):
        raise AdvisorError(
            f"{option}: expected a positive duration such as 10s, 10m, 1h or 500ms, got {text!r}"
        )
    return seconds


def _settings(
    host: str | None,
    port: int | None,
    user: str | None,
    password_env: str | None,
    defaults_file: Path | None,
    socket: str | None,
    ssl_ca: Path | None,
    ssl_cert: Path | None,
    ssl_key: Path | None,
    ssl_verify_identity: bool,
) -> ConnectionSettings:
    from advisor.collect.connection import ConnectionSettings, read_defaults_file

    password = None
    if password_env is not None:
        if password_env not in os.environ:
            raise AdvisorError(f"--password-env: environment variable {password_env} is not set")
        password = os.environ[password_env]
    settings = ConnectionSettings(
        host=host or ConnectionSettings.host,
        port=port if port is not None else ConnectionSettings.port,
        user=user,
        password=password,
        socket=socket,
        ssl_ca=ssl_ca,
        ssl_cert=ssl_cert,
        ssl_key=ssl_key,
        ssl_verify_identity=ssl_verify_identity,
    )
    if defaults_file is not None:
        settings = read_defaults_file(defaults_file, settings)
    for option, path in (
        ("--ssl-ca", settings.ssl_ca),
        ("--ssl-cert", settings.ssl_cert),
        ("--ssl-key", settings.ssl_key),
    ):
        if path is not None and not Path(path).is_file():
            raise AdvisorError(f"{option}: no such file {str(path)!r}")
    if settings.user is None:
        raise AdvisorError("give --user (or user= in the [client] group of --defaults-file)")
    return settings


def _run_with_progress(
    settings: ConnectionSettings, interval_s: float, duration_s: float, top: int, window_s: int
) -> CollectedEvidence:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from advisor.collect.api import collect

    console = Console(stderr=True)
    if not console.is_terminal:
        return collect(
            settings,
            interval_s=interval_s,
            duration_s=duration_s,
            top_rows=top,
            hot_row_window_s=window_s,
        )
    console.print(
        f"watching {settings.describe()} for {duration_s:g}s, a sample every "
        f"{interval_s:g}s (Ctrl-C ends early and still writes)",
        highlight=False,
    )
    columns = (
        TextColumn("collecting"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("collect", total=1.0)
        return collect(
            settings,
            interval_s=interval_s,
            duration_s=duration_s,
            top_rows=top,
            hot_row_window_s=window_s,
            progress=lambda done: bar.update(task, completed=done),
        )


def collect_command(
    host: Host = None,
    port: Port = None,
    user: Annotated[
        str | None, typer.Option(help="User (read-only; the binary log needs REPLICATION SLAVE).")
    ] = None,
    password_env: PasswordEnv = None,
    defaults_file: DefaultsFile = None,
    socket: Socket = None,
    ssl_ca: SslCa = None,
    ssl_cert: SslCert = None,
    ssl_key: SslKey = None,
    ssl_verify_identity: SslVerifyIdentity = False,
    interval: Annotated[str, typer.Option(help="Time between samples (10s, 1m, 500ms).")] = "10s",
    duration: Annotated[str, typer.Option(help="How long to watch (10m, 1h).")] = "10m",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the sections to this file (default: standard output)."
        ),
    ] = None,
    into: Annotated[
        Path | None,
        typer.Option(
            "--into", help="Update workload and galera in this topology.yaml, keeping the rest."
        ),
    ] = None,
    top: Annotated[int, typer.Option(help="How many hot rows to report.", min=1)] = 10,
    hot_row_window: Annotated[
        str, typer.Option(help="Sliding window for a row's peak rate.")
    ] = "10s",
) -> None:
    """Watch a running Galera node and write the workload and galera sections of topology.yaml."""
    from advisor.collect.writer import evidence_to_yaml, merge_into, write_text_atomic

    if output is not None and into is not None:
        raise AdvisorError("give either -o FILE or --into FILE, not both")
    interval_s = parse_duration_s(interval, "--interval")
    duration_s = parse_duration_s(duration, "--duration")
    window_s = max(1, round(parse_duration_s(hot_row_window, "--hot-row-window")))
    if interval_s > duration_s:
        raise AdvisorError(f"--interval ({interval}) must not exceed --duration ({duration})")
    if into is not None and not into.is_file():
        raise AdvisorError(f"--into: no such file {str(into)!r} (use -o to write a new one)")
    if into is not None:
        from advisor.collect.writer import check_into

        check_into(into)  # a file --into cannot update is refused before, not after, collecting
    if output is not None:
        from advisor.safe_write import check_file_target

        check_file_target(output)  # a FIFO or device is refused before, not after, collecting
    if output is None and into is None:
        from advisor.cli.output import require_stdout

        require_stdout()  # a closed standard output is refused before, not after, collecting
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
        evidence = _run_with_progress(settings, interval_s, duration_s, top, window_s)
    except KeyboardInterrupt:
        raise AdvisorError(
            "interrupted before the evidence was gathered; nothing written"
        ) from None
    summary = (
        f"collected {evidence.status.samples} samples over {evidence.duration_s:.0f}s "
        f"from {evidence.target}" + (" (ended early)" if evidence.ended_early else "")
    )
    if into is not None:
        merge_into(into, evidence)
        typer.echo(f"{summary}; updated workload and galera in {into}", err=True)
    elif output is not None:
        write_text_atomic(output, evidence_to_yaml(evidence))
        typer.echo(f"{summary}; wrote {output}", err=True)
    else:
        from advisor.cli.output import out

        out(evidence_to_yaml(evidence).rstrip("\n"))
        typer.echo(summary, err=True)
