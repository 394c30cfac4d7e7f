"""Issue 26, "Data loss and security": a staging folder planted in the ``doc -o`` folder.

A folder named like advisor's staging folder (``.advisor-txn-<16 hex>``) can arrive with a
git checkout or a tarball used as the docs folder. Before, the next run "recovered" it: it
followed its symbolic links (moving a file from outside into the folder), took its manifest
as advisor's record (so the next run deleted the user's README.md as a stale file of its
own) and moved its files over the user's. Now such a folder is refused with one line naming
it, before anything is touched (advisor.safe_write._refuse_leftovers).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app
from advisor.errors import AdvisorError
from advisor.safe_write import MANIFEST_NAME, write_files

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paris-frankfurt" / "topology.yaml"
PLANTED = ".advisor-txn-0123456789abcdef"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: a file's bytes, a link's target, a folder as '<dir>'."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[name] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[name] = "<dir>"
        else:
            out[name] = path.read_bytes()
    return out


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "README.md").write_bytes(b"# our docs\n")
    (folder / "notes.txt").write_bytes(b"the user's own notes\n")
    return folder


def refused(folder: Path) -> str:
    with pytest.raises(AdvisorError) as caught:
        write_files(folder, {"design.md": "new design"})
    return str(caught.value)


def test_a_planted_link_to_an_outside_folder_moves_nothing_in(docs: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_bytes(b"secret key\n")
    staging = docs / PLANTED
    staging.mkdir()
    (staging / "keys").symlink_to(outside)
    (staging / MANIFEST_NAME).write_text(f"{sha(b'secret key' + bytes([10]))}  keys/id_rsa\n")
    before_docs, before_outside = tree(docs), tree(outside)
    message = refused(docs)
    assert message.startswith(f"{staging}: a staging folder left by an advisor run")
    assert message.endswith("look inside, remove it and run again")
    assert "\n" not in message
    assert tree(outside) == before_outside  # the key stays where it was
    assert tree(docs) == before_docs  # nothing moved in, the planted folder left for the user


def test_a_planted_manifest_claiming_readme_deletes_nothing(docs: Path):
    staging = docs / PLANTED
    staging.mkdir()
    (staging / MANIFEST_NAME).write_text(f"{sha(b'# our docs' + bytes([10]))}  README.md\n")
    before = tree(docs)
    refused(docs)
    assert tree(docs) == before
    # and once the user has removed it, a run keeps README.md (it was never advisor's)
    (staging / MANIFEST_NAME).unlink()
    staging.rmdir()
    write_files(docs, {"design.md": "one"})
    write_files(docs, {"design.md": "two"})
    assert (docs / "README.md").read_bytes() == b"# our docs\n"


def test_a_planted_file_and_manifest_never_replace_the_users_file(docs: Path):
    staging = docs / PLANTED
    staging.mkdir()
    (staging / "notes.txt").write_bytes(b"planted\n")
    (staging / MANIFEST_NAME).write_text(f"{sha(b'planted' + bytes([10]))}  notes.txt\n")
    before = tree(docs)
    refused(docs)
    assert tree(docs) == before
    assert (docs / "notes.txt").read_bytes() == b"the user's own notes\n"


def test_an_incomplete_planted_folder_is_not_removed_either(docs: Path):
    staging = docs / PLANTED
    staging.mkdir()
    (staging / "keep.md").write_bytes(b"not advisor's\n")
    before = tree(docs)
    refused(docs)
    assert tree(docs) == before


def test_the_doc_command_stops_with_one_line_and_exit_2(docs: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file.txt").write_bytes(b"outside\n")
    staging = docs / PLANTED
    staging.mkdir()
    (staging / "link").symlink_to(outside)
    (staging / MANIFEST_NAME).write_text(f"{sha(b'outside' + bytes([10]))}  link/file.txt\n")
    before_docs, before_outside = tree(docs), tree(outside)
    result = CliRunner().invoke(app, ["doc", str(EXAMPLE), "-o", str(docs)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"advisor: {staging}: a staging folder left by")
    assert result.stderr.count("\n") == 1
    assert tree(docs) == before_docs and tree(outside) == before_outside


KILLED = """
import os, signal, sys
from pathlib import Path
from advisor import safe_write

real, calls = os.replace, [0]

def replace_then_die(*args):
    calls[0] += 1
    if calls[0] == 3:  # the manifest of old and new content, a.md, then killed
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args)

safe_write.os.replace = replace_then_die
safe_write.write_files(Path(sys.argv[1]), {"a.md": "new a", "b.md": "new b", "c.md": "new c"})
"""


def test_a_real_killed_run_is_refused_then_recovered_by_the_user(tmp_path: Path):
    # A run killed while moving files in leaves its staging folder: the next run says so
    # instead of trusting it; after the user removes it, the next run makes the folder whole.
    folder = tmp_path / "out"
    write_files(folder, {"a.md": "old a", "b.md": "old b", "c.md": "old c"})
    run = subprocess.run(
        [sys.executable, "-c", KILLED, str(folder)], capture_output=True, timeout=120, check=False
    )
    assert run.returncode == -signal.SIGKILL
    (leftover,) = folder.glob(".advisor-txn-*")
    with pytest.raises(AdvisorError, match=r"a staging folder left by an advisor run"):
        write_files(folder, {"a.md": "third a", "b.md": "third b"})
    assert (folder / "a.md").read_bytes() == b"new a" and leftover.exists()
    assert (folder / "b.md").read_bytes() == b"old b"
    subprocess.run(["rm", "-r", "--", str(leftover)], check=True)
    (folder / "notes.md").write_bytes(b"the user's")  # and a file of the user's, kept
    write_files(folder, {"a.md": "third a", "b.md": "third b"})
    assert sorted(p.name for p in folder.iterdir()) == [MANIFEST_NAME, "a.md", "b.md", "notes.md"]
    assert (folder / "b.md").read_bytes() == b"third b"
