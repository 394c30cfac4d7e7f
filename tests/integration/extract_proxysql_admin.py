"""Extract ProxySQL's admin schema, variable names and admin commands from its source.

The generated ``proxysql.sql`` is checked against what ProxySQL itself defines (ProxySQL is
not packaged for the CI machine, so the check runs the file against its admin schema in
SQLite). Run by hand when moving to another ProxySQL release::

    python tests/integration/extract_proxysql_admin.py /path/to/sysown/proxysql [ref]

It reads, at ``ref`` (default ``HEAD``) of a git clone of https://github.com/sysown/proxysql:

- ``lib/ProxySQL_Admin.cpp``: every ``insert_into_tables_defs(tables_defs_admin, name, DEF)``
  (the tables of the admin interface's ``main`` schema), ``DEF`` resolved through its
  ``#define`` chain to the ``CREATE TABLE`` text; ``admin_variables_names[]``; the admin
  commands (the ``LOAD``/``SAVE`` literals and ``generate_load_save_disk_commands``);
- ``lib/MySQL_Thread.cpp``: ``mysql_thread_variables_names[]`` (``mysql-`` variables).

and writes ``tests/data/proxysql_admin_schema.sql``, ``tests/data/proxysql_variables.txt`` and
``tests/data/proxysql_admin_commands.txt``, each naming the source and commit on top.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
_DEFINE = re.compile(r"^#define\s+(\w+)\s+(.*)$")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_TABLE_DEF = re.compile(r'insert_into_tables_defs\(tables_defs_admin,\s*"(\w+)",\s*(\w+)\)')
_COMMAND = re.compile(r'"((?:LOAD|SAVE) [A-Z_ ]+ (?:TO|FROM) [A-Z]+)"')
_DISK = re.compile(r'generate_load_save_disk_commands\("\w+",\s*"([A-Z ]+)"\)')


def _show(repo: Path, ref: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{ref}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _defines(source: str) -> dict[str, str]:
    """``#define NAME value`` (continuation lines joined), value as written."""
    lines = source.replace("\\\n", " ").splitlines()
    found = {}
    for line in lines:
        match = _DEFINE.match(line.strip())
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def _resolve(name: str, defines: dict[str, str]) -> str:
    value = defines[name]
    for _ in range(20):
        literals = _LITERAL.findall(value)
        if literals:
            return "".join(literals).replace('\\"', '"')
        value = defines[value.split()[0]]
    raise ValueError(f"{name}: #define chain too long")


def _names(source: str, array: str) -> list[str]:
    body = source.split(f"{array}[]", 1)[1].split("};", 1)[0]
    return [name for name in _LITERAL.findall(body) if name]


def main(repo: Path, ref: str = "HEAD") -> None:
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    admin = _show(repo, ref, "lib/ProxySQL_Admin.cpp")
    thread = _show(repo, ref, "lib/MySQL_Thread.cpp")
    defines = _defines(admin)
    origin = f"https://github.com/sysown/proxysql at commit {commit}"

    tables = dict(_TABLE_DEF.findall(admin))
    schema = [
        f"-- ProxySQL admin schema (the 'main' database of the admin interface), from {origin}:",
        "-- lib/ProxySQL_Admin.cpp, every insert_into_tables_defs(tables_defs_admin, ...) with",
        "-- its #define resolved. Written by tests/integration/extract_proxysql_admin.py.",
    ]
    schema += [f"{_resolve(macro, defines)};" for macro in tables.values()]
    (DATA / "proxysql_admin_schema.sql").write_text("\n".join(schema) + "\n")

    variables = [f"mysql-{name}" for name in _names(thread, "mysql_thread_variables_names")]
    variables += [f"admin-{name}" for name in _names(admin, "admin_variables_names")]
    (DATA / "proxysql_variables.txt").write_text(
        f"# ProxySQL global_variables names, from {origin}:\n"
        "# lib/MySQL_Thread.cpp mysql_thread_variables_names[] (prefixed mysql-) and\n"
        "# lib/ProxySQL_Admin.cpp admin_variables_names[] (prefixed admin-).\n"
        "# Written by tests/integration/extract_proxysql_admin.py.\n"
        + "".join(f"{name}\n" for name in sorted(set(variables)))
    )

    commands = set(_COMMAND.findall(admin))
    for name in _DISK.findall(admin):
        commands |= {f"LOAD {name} TO MEMORY", f"LOAD {name} TO MEM", f"LOAD {name} FROM DISK"}
        commands |= {f"SAVE {name} FROM MEMORY", f"SAVE {name} FROM MEM", f"SAVE {name} TO DISK"}
    (DATA / "proxysql_admin_commands.txt").write_text(
        f"# ProxySQL admin LOAD/SAVE commands, from {origin}:\n"
        "# lib/ProxySQL_Admin.cpp, the command literals and generate_load_save_disk_commands.\n"
        "# Written by tests/integration/extract_proxysql_admin.py.\n"
        + "".join(f"{command}\n" for command in sorted(commands))
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
