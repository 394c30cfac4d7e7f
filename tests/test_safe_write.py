"""Writes are safe: inside the -o folder, all or nothing, never over a user's file.

Each test names, in a comment, the protection of advisor.safe_write whose removal fails it.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from advisor import safe_write
from advisor.errors import AdvisorError
from advisor.names import safe_name
from advisor.safe_write import MANIFEST_NAME, write_files


def files_in(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_writes_files_and_subfolders_and_records_them(tmp_path):
    out = tmp_path / "out" / "deep"
    written = write_files(out, {"design.md": "# é\n", "galera/paris-1.cnf": "[galera]\n"})
    assert written == [out / "design.md", out / "galera" / "paris-1.cnf"]
    assert (out / "design.md").read_bytes() == "# é\n".encode()
    manifest = (out / MANIFEST_NAME).read_text()
    # sha256sum format, so `sha256sum -c .advisor-manifest` checks the folder
    design, galera = (hashlib.sha256(t).hexdigest() for t in ("# é\n".encode(), b"[galera]\n"))
    assert manifest == f"{design}  design.md\n{galera}  galera/paris-1.cnf\n"


def test_files_get_the_mode_the_umask_allows(tmp_path):
    # Protection: temporaries are created 0o666 & ~umask, not mkstemp's 0o600.
    old = os.umask(0o022)
    try:
        write_files(tmp_path, {"a.md": "x"})
    finally:
        os.umask(old)
    assert (tmp_path / "a.md").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("/etc/passwd", "an absolute path would leave the output folder; give a relative name"),
        ("../x.md", "empty, '.' or '..' path components are not allowed"),
        ("a/../../x.md", "empty, '.' or '..' path components are not allowed"),
        ("a//b.md", "empty, '.' or '..' path components are not allowed"),
        ("./a.md", "empty, '.' or '..' path components are not allowed"),
        ("a/", "empty, '.' or '..' path components are not allowed"),
        ("", "a file name must be non-empty text"),
        ("a\0b", "control characters (NUL, newline, ...) are not allowed in file names"),
        ("a\nb", "control characters (NUL, newline, ...) are not allowed in file names"),
        ("..\\x.md", "use '/' between folders, not '\\'"),
        (MANIFEST_NAME, ".advisor-manifest is the tool's own record of what it wrote"),
        ("x" * 256, "a path component is longer than 255 bytes"),
    ],
)
def test_bad_names_are_refused_before_anything_is_written(tmp_path, name, problem):
    # Protection: _check_names runs first; without it these would write outside or fail midway.
    out = tmp_path / "out"
    with pytest.raises(AdvisorError) as caught:
        write_files(out, {"first.md": "1", name: "2"})
    assert str(caught.value) == f"refusing to write {name!r}: {problem}"
    assert not out.exists()  # not even the folder was created


def test_names_that_differ_only_by_case_are_refused(tmp_path):
    # Protection: the casefold check (two names, one file on macOS or Windows).
    with pytest.raises(AdvisorError, match=r"names the same file as 'Paris\.md'"):
        write_files(tmp_path, {"Paris.md": "1", "paris.md": "2"})
    assert list(tmp_path.iterdir()) == []


def test_a_symlinked_subfolder_cannot_lead_outside(tmp_path):
    # Protection: _check_inside resolves each target's folder against out_dir.resolve().
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "galera").symlink_to(elsewhere)
    with pytest.raises(AdvisorError) as caught:
        write_files(out, {"a.md": "1", "galera/x.cnf": "2"})
    message = str(caught.value)
    assert message.startswith(
        f"{out}/galera/x.cnf: refusing to write 'galera/x.cnf': its "
        f"folder resolves to {elsewhere}, outside the output folder"
    )
    assert list(elsewhere.iterdir()) == []
    assert not (out / "a.md").exists()


def test_an_output_folder_that_is_itself_a_symlink_is_fine(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    write_files(tmp_path / "link", {"a.md": "1"})
    assert (real / "a.md").read_text() == "1"


@pytest.mark.parametrize(
    "hostile",
    [
        "..",
        "../../etc",
        "/etc/cron.d/x",
        "a/b",
        "-rf",
        ".ssh",
        "NUL",
        "con.txt",
        "é" * 300,
        "\0",
        "a\nb",
    ],
)
def test_safe_name_keeps_site_derived_names_inside(tmp_path, hostile):
    # Protection: safe_name; without it these names are refused or would escape.
    name = safe_name(hostile) + ".cnf"
    assert "/" not in name and not name.startswith((".", "-"))
    assert len(name.encode()) <= 255
    write_files(tmp_path / "out", {name: "x"})
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name != MANIFEST_NAME] == [name]


def test_safe_name_keeps_long_names_distinct():
    a, b = safe_name("x" * 150 + "a"), safe_name("x" * 150 + "b")
    assert a != b and len(a) == len(b) == 100


def test_a_file_the_tool_did_not_write_is_not_overwritten(tmp_path):
    # Protection: _check_ours without force.
    (tmp_path / "design.md").write_text("my notes")
    with pytest.raises(AdvisorError) as caught:
        write_files(tmp_path, {"new.md": "n", "design.md": "generated"})
    assert str(caught.value) == (
        f"{tmp_path}/design.md: refusing to overwrite: this file was "
        "not written by advisor; use --force to replace it"
    )
    assert (tmp_path / "design.md").read_text() == "my notes"
    assert not (tmp_path / "new.md").exists()
    write_files(tmp_path, {"new.md": "n", "design.md": "generated"}, force=True)
    assert (tmp_path / "design.md").read_text() == "generated"


def test_the_tool_rewrites_its_own_files_but_not_edited_ones(tmp_path):
    # Protection: the manifest's sha256 must match the current content.
    write_files(tmp_path, {"design.md": "v1", "adr.md": "a1"})
    write_files(tmp_path, {"design.md": "v2"})  # unchanged since written: ours
    assert (tmp_path / "design.md").read_text() == "v2"
    (tmp_path / "design.md").write_text("v2 with my edits")
    with pytest.raises(AdvisorError, match="this file was changed since advisor wrote it"):
        write_files(tmp_path, {"design.md": "v3"})
    assert (tmp_path / "design.md").read_text() == "v2 with my edits"
    # adr.md, of the first run and unchanged since, was not produced by the second: removed
    assert not (tmp_path / "adr.md").exists()
    assert (tmp_path / MANIFEST_NAME).read_text().endswith("  design.md\n")


def test_a_forged_manifest_line_does_not_vouch_for_other_content(tmp_path):
    (tmp_path / "design.md").write_text("mine")
    (tmp_path / MANIFEST_NAME).write_text(
        f"{hashlib.sha256(b'other').hexdigest()}  design.md\ngarbage line\n"
    )
    with pytest.raises(AdvisorError, match="changed since advisor wrote it"):
        write_files(tmp_path, {"design.md": "x"})


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path):
    # Protection: os.replace renames over the link; writing through it would change victim.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "design.md").symlink_to(victim)
    with pytest.raises(AdvisorError, match="was not written by advisor"):
        write_files(out, {"design.md": "x"})
    write_files(out, {"design.md": "x"}, force=True)
    assert victim.read_text() == "precious"
    assert not (out / "design.md").is_symlink() and (out / "design.md").read_text() == "x"


def test_a_folder_where_a_file_should_go_is_an_error(tmp_path):
    (tmp_path / "design.md").mkdir()
    with pytest.raises(AdvisorError) as caught:
        write_files(tmp_path, {"design.md": "x"}, force=True)
    assert str(caught.value) == f"{tmp_path}/design.md: is a folder; expected a file name to write"


def test_an_output_path_that_is_a_file_is_an_error(tmp_path):
    (tmp_path / "out").write_text("")
    with pytest.raises(AdvisorError) as caught:
        write_files(tmp_path / "out", {"a.md": "x"})
    assert str(caught.value) == f"{tmp_path}/out: the output folder exists and is not a folder"


def test_a_failure_while_writing_leaves_old_files_whole_and_no_temporaries(tmp_path, monkeypatch):
    # Protection: every temporary is written before the first rename, and cleaned up.
    write_files(tmp_path, {"a.md": "old a", "b.md": "old b"})
    real_write = os.write

    def disk_full_on_second_file(fd: int, data: memoryview) -> int:
        if bytes(data).startswith(b"new b"):
            real_write(fd, bytes(data[:3]))  # half a file reaches the disk, then ENOSPC
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(safe_write.os, "write", disk_full_on_second_file)
    with pytest.raises(AdvisorError) as caught:
        write_files(tmp_path, {"a.md": "new a", "b.md": "new b"})
    assert str(caught.value) == (
        f"{tmp_path / 'b.md'}: cannot write: No space left on device; nothing was changed"
    )
    assert "\n" not in str(caught.value)
    assert files_in(tmp_path)["a.md"] == b"old a" and files_in(tmp_path)["b.md"] == b"old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME, "a.md", "b.md"]


def test_a_failed_rename_says_so_and_leaves_no_staging_folder(tmp_path, monkeypatch):
    # Protection: the run removes its own staging folder (a leftover would stop the next run,
    # which cannot tell it from a planted one: issue 26); the manifest, written before the
    # first move, lists the old and the new content, so the next run finishes without --force.
    write_files(tmp_path, {"a.md": "old a", "b.md": "old b"})
    real_replace = os.replace

    def fail_second(src: Path, dst: Path) -> None:
        if Path(dst).name == "b.md":
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(safe_write.os, "replace", fail_second)
    with pytest.raises(AdvisorError) as caught:
        write_files(tmp_path, {"a.md": "new a", "b.md": "new b"})
    assert str(caught.value) == (
        f"{tmp_path / 'b.md'}: cannot write: Input/output error; the new files are partly in "
        "place: run advisor again to finish"
    )
    assert files_in(tmp_path)["a.md"] == b"new a" and files_in(tmp_path)["b.md"] == b"old b"
    assert not list(tmp_path.glob(".advisor-txn-*"))
    monkeypatch.setattr(safe_write.os, "replace", real_replace)
    # the next run (here one that writes a.md and c.md) replaces a.md, new or old, and
    # deletes b.md, which still holds what advisor wrote
    write_files(tmp_path, {"c.md": "c", "a.md": "third a"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME, "a.md", "c.md"]
    assert (tmp_path / MANIFEST_NAME).read_text().count("\n") == 2


def test_data_is_flushed_before_the_rename(tmp_path, monkeypatch):
    # Protection: os.fsync of each temporary (a crash after rename must not leave zeros).
    synced: list[int] = []
    monkeypatch.setattr(safe_write.os, "fsync", lambda fd: synced.append(fd))
    write_files(tmp_path, {"a.md": "1", "b.md": "2"})
    assert len(synced) >= 3  # two files and the manifest (folders too where possible)


def test_manifest_survives_garbage_and_stays_bounded(tmp_path):
    (tmp_path / MANIFEST_NAME).write_bytes(b"\xff\xfe not utf-8")
    write_files(tmp_path, {"a.md": "1"})
    assert (tmp_path / MANIFEST_NAME).read_text().endswith("  a.md\n")


HOSTILE = """\
name: "../../evil name"
sites:
  - {name: "..", location: {lat: 48.85, lon: 2.35}}
  - {name: "-rf", location: {lat: 48.95, lon: 2.45}}
  - {name: "CON", location: {lat: 50.11, lon: 8.68}, arbitrator: true}
"""


def test_advisor_doc_keeps_hostile_site_names_inside_and_respects_user_files(tmp_path):
    # Through the CLI: safe_name for site-derived names, write_files for the -o folder,
    # and --force wired to it.
    from typer.testing import CliRunner

    from advisor.cli import app

    (tmp_path / "t.yaml").write_text(HOSTILE)
    out = tmp_path / "work" / "out"

    def doc(*extra: str) -> object:
        return CliRunner().invoke(
            app, ["doc", str(tmp_path / "t.yaml"), "-o", str(out), "--format", "md", *extra]
        )

    first = doc()
    assert first.exit_code == 0, first.stderr
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert all(out in p.parents for p in written if p.name != "t.yaml")
    assert not any(p.name.startswith((".", "-")) for p in written if p.name not in (MANIFEST_NAME,))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.yaml", "work"]
    assert doc().exit_code == 0  # its own files: rewritten without --force
    (out / "design.md").write_text("my edits")
    refused = doc()
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"advisor: {out / 'design.md'}: refusing to overwrite: this file "
        "was changed since advisor wrote it; use --force to replace it\n"
    )
    assert (out / "design.md").read_text() == "my edits"
    assert doc("--force").exit_code == 0
    assert (out / "design.md").read_text().startswith("#")
