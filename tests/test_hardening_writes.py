"""Issue 14, "Writes that destroy or lose data": one file (``sweep --chart``, ``collect -o``)
and the ``doc`` folder.

Each test names the item of the issue it covers. Special files are made by the test in its
own temporary folder (``os.mkfifo``, a bound Unix socket, ``os.mknod`` where allowed): never
the machine's ``/dev/null``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor import safe_write
from advisor.cli import app
from advisor.errors import AdvisorError
from advisor.safe_write import MANIFEST_NAME, write_file, write_files

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paris-frankfurt" / "topology.yaml"


def make_fifo(path: Path) -> Iterator[Path]:
    os.mkfifo(path)
    yield path


def make_socket(path: Path) -> Iterator[Path]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        yield path
    finally:
        server.close()


def make_folder(path: Path) -> Iterator[Path]:
    path.mkdir()
    yield path


def make_char_device(path: Path) -> Iterator[Path]:
    # A second node for the null device (1, 3), inside the test's folder; root only.
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as error:
        pytest.skip(f"cannot make a device node here: {error}")
    yield path


SPECIAL: dict[str, tuple[Callable[[Path], Iterator[Path]], Callable[[int], bool], str]] = {
    "fifo": (make_fifo, stat.S_ISFIFO, "a FIFO (named pipe)"),
    "socket": (make_socket, stat.S_ISSOCK, "a socket"),
    "folder": (make_folder, stat.S_ISDIR, "a folder"),
    "char device": (make_char_device, stat.S_ISCHR, "a character device"),
}


@pytest.fixture(params=sorted(SPECIAL))
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    make = SPECIAL[request.param][0]
    maker = make(tmp_path / "target.svg")
    path = next(maker)
    yield path, request.param
    maker.close()


def still_the_same_kind(path: Path, name: str) -> bool:
    return SPECIAL[name][1](path.lstat().st_mode)


def refusal(path: Path, name: str) -> str:
    return (
        f"{path}: is {SPECIAL[name][2]}, not a regular file; refusing to replace it (name a "
        "regular file or a new one)"
    )


# -- one file: sweep --chart, collect -o ---------------------------------------------------


def test_write_file_refuses_special_files_and_leaves_them_alone(special):
    # Item: "--chart F replaces whatever F is: a character device or a FIFO becomes a
    # regular SVG file". Protection: _regular_or_new.
    path, name = special
    with pytest.raises(AdvisorError) as caught:
        write_file(path, "<svg/>")
    assert str(caught.value) == refusal(path, name)
    assert still_the_same_kind(path, name)
    assert sorted(p.name for p in path.parent.iterdir()) == ["target.svg"]  # no temporary


def test_write_file_follows_a_link_to_a_fifo_and_refuses(tmp_path):
    # Protection: realpath before the check (replacing the link would also be wrong: as root
    # `--chart /dev/stdout` would replace the system's link).
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "chart.svg").symlink_to(tmp_path / "pipe")
    with pytest.raises(AdvisorError, match=r"chart\.svg: is a FIFO \(named pipe\)"):
        write_file(tmp_path / "chart.svg", "<svg/>")
    assert (tmp_path / "chart.svg").is_symlink() and stat.S_ISFIFO(
        os.stat(tmp_path / "pipe").st_mode
    )


def test_write_file_replaces_a_regular_file_through_a_link_keeping_link_and_mode(tmp_path):
    real = tmp_path / "real.svg"
    real.write_text("old")
    real.chmod(0o640)
    (tmp_path / "chart.svg").symlink_to(real)
    assert write_file(tmp_path / "chart.svg", "new") == real
    assert (tmp_path / "chart.svg").is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chart.svg", "real.svg"]


def test_write_file_creates_the_folders_named_but_not_those_a_dangling_link_names(tmp_path):
    assert write_file(tmp_path / "new" / "chart.svg", "x") == tmp_path / "new" / "chart.svg"
    (tmp_path / "link.svg").symlink_to(tmp_path / "elsewhere" / "deep" / "chart.svg")
    with pytest.raises(AdvisorError, match=r"link\.svg: cannot write: No such file or directory"):
        write_file(tmp_path / "link.svg", "x")
    assert not (tmp_path / "elsewhere").exists()


def test_write_file_is_atomic_when_the_disk_is_full(tmp_path, monkeypatch):
    # Protection: the text goes to a temporary file that is removed on failure.
    (tmp_path / "chart.svg").write_text("old")

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safe_write.os, "write", full)
    with pytest.raises(AdvisorError) as caught:
        write_file(tmp_path / "chart.svg", "new")
    assert str(caught.value) == f"{tmp_path / 'chart.svg'}: cannot write: No space left on device"
    assert [p.name for p in tmp_path.iterdir()] == ["chart.svg"]
    assert (tmp_path / "chart.svg").read_text() == "old"


def test_sweep_chart_into_a_fifo_exits_2_before_sweeping(tmp_path):
    # Item: "advisor sweep ... --chart F replaces whatever F is". Through the CLI.
    os.mkfifo(tmp_path / "chart.svg")
    args = ["sweep", str(EXAMPLE), "--vary", "rtt", "--range", "1:20:3"]
    result = CliRunner().invoke(app, [*args, "--chart", str(tmp_path / "chart.svg")])
    assert result.exit_code == 2
    assert result.stderr == f"advisor: {refusal(tmp_path / 'chart.svg', 'fifo')}\n"
    assert result.stdout == ""  # refused before the sweep ran
    assert stat.S_ISFIFO((tmp_path / "chart.svg").lstat().st_mode)


def test_sweep_chart_writes_the_file_and_nothing_beside_it(tmp_path):
    # The old path wrote through write_files, leaving a .advisor-manifest beside the chart.
    args = ["sweep", str(EXAMPLE), "--vary", "rtt", "--range", "1:20:3"]
    result = CliRunner().invoke(app, [*args, "--chart", str(tmp_path / "chart.svg")])
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["chart.svg"]
    assert (tmp_path / "chart.svg").read_text().startswith("<svg")


def test_collect_output_into_a_fifo_exits_2_before_connecting(tmp_path):
    # Item: "collect -o shares the writer". No server is needed: the check comes first.
    os.mkfifo(tmp_path / "evidence.yaml")
    result = CliRunner().invoke(
        app,
        [
            *("collect", "--host", "127.0.0.1", "--port", "9", "--user", "u"),
            *("--interval", "1s", "--duration", "1s", "-o", str(tmp_path / "evidence.yaml")),
        ],
    )
    assert result.exit_code == 2
    assert result.stderr == f"advisor: {refusal(tmp_path / 'evidence.yaml', 'fifo')}\n"


def test_collect_writer_refuses_a_fifo(tmp_path):
    from advisor.collect.writer import write_text_atomic

    os.mkfifo(tmp_path / "t.yaml")
    with pytest.raises(AdvisorError, match=r"is a FIFO"):
        write_text_atomic(tmp_path / "t.yaml", "x: 1\n")


# -- the doc folder: special files inside it ------------------------------------------------


def test_write_files_refuses_a_special_file_at_a_target_even_with_force(special):
    # Protection: _check_replaceable, before anything is staged.
    path, name = special
    out = path.parent
    if name == "folder":
        message = f"{path}: is a folder; expected a file name to write"
    else:
        message = (
            f"{path}: is {SPECIAL[name][2]}, not a regular file; refusing to replace it, even "
            "with --force (remove it yourself if it should go)"
        )
    with pytest.raises(AdvisorError) as caught:
        write_files(out, {"a.md": "a", "target.svg": "<svg/>"}, force=True)
    assert str(caught.value) == message
    assert still_the_same_kind(path, name)
    assert sorted(p.name for p in out.iterdir()) == ["target.svg"]


def test_write_files_refuses_a_fifo_as_the_manifest(tmp_path):
    os.mkfifo(tmp_path / MANIFEST_NAME)
    with pytest.raises(AdvisorError, match=r"\.advisor-manifest: is a FIFO"):
        write_files(tmp_path, {"a.md": "a"}, force=True)
    assert stat.S_ISFIFO((tmp_path / MANIFEST_NAME).lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME]


# -- the doc folder: all or nothing -------------------------------------------------------


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (the manifest included), relative name -> content."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_consistent(folder: Path, users: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """The manifest lists exactly the files present besides the user's, with their content."""
    files = tree(folder)
    listed = {}
    for line in files.pop(MANIFEST_NAME).decode().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    assert {n: hashlib.sha256(files[n]).hexdigest() for n in files if n not in users} == listed
    assert not [p for p in folder.rglob(".advisor-*") if p.name != MANIFEST_NAME]


OLD = {"design.md": "old design", "config/galera-a.cnf": "old a", "config/galera-b.cnf": "old b"}
NEW = {"design.md": "new design", "config/galera-a.cnf": "new a", "config/galera-c.cnf": "new c"}


@pytest.fixture(autouse=True)
def _sigint_raises() -> Iterator[None]:
    """Python's own SIGINT handler during each test: a job a shell starts in the background
    (``nohup ... &``) inherits SIGINT ignored, and the Ctrl-C tests would then see nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_files(out, OLD)
    (out / "notes.md").write_text("the user's own")
    return out


def expected(files: dict[str, str]) -> dict[str, bytes]:
    return {name: text.encode() for name, text in files.items()} | {"notes.md": b"the user's own"}


def without_manifest(folder: Path) -> dict[str, bytes]:
    files = tree(folder)
    files.pop(MANIFEST_NAME)
    return files


def test_stale_files_of_the_last_run_go_and_the_manifest_lists_what_is_there(folder):
    # Item: "Files of sites that no longer exist stay, listed in the manifest."
    # galera-b.cnf (site b removed) is deleted: the manifest lists it with its content.
    write_files(folder, NEW)
    assert without_manifest(folder) == expected(NEW)
    assert_consistent(folder, {"notes.md"})


def test_a_stale_file_the_user_edited_stays_and_is_no_longer_listed(folder):
    # Protection: _remove_stale deletes only what still has the recorded content.
    (folder / "config" / "galera-b.cnf").write_text("b, with my edits")
    write_files(folder, NEW)
    assert (folder / "config" / "galera-b.cnf").read_text() == "b, with my edits"
    assert_consistent(folder, {"notes.md", "config/galera-b.cnf"})


def test_a_folder_emptied_of_stale_files_goes_and_one_with_a_users_file_stays(tmp_path):
    write_files(tmp_path, {"a.md": "a", "charts/x.svg": "x", "config/y.cnf": "y"})
    (tmp_path / "config" / "mine.cnf").write_text("mine")
    write_files(tmp_path, {"a.md": "a2"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME, "a.md", "config"]
    assert [p.name for p in (tmp_path / "config").iterdir()] == ["mine.cnf"]


def interrupt_at(monkeypatch: pytest.MonkeyPatch, function: str, count: int, signum: int) -> None:
    """Send ``signum`` to this process at the ``count``-th call of ``safe_write.<function>``."""
    real = getattr(safe_write, function) if function != "replace" else os.replace
    calls = [0]

    def hooked(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] == count:
            os.kill(os.getpid(), signum)
        return real(*args, **kwargs)

    if function == "replace":
        monkeypatch.setattr(safe_write.os, "replace", hooked)
    else:
        monkeypatch.setattr(safe_write, function, hooked)


def test_ctrl_c_while_staging_changes_nothing(folder, monkeypatch):
    # Item: "doc interrupted (SIGINT) ... leaves a half-updated folder". The signal arrives
    # while the second new file is written; the staging folder is removed.
    before = tree(folder)
    interrupt_at(monkeypatch, "_write_new", 2, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        write_files(folder, NEW)
    assert tree(folder) == before
    assert_consistent(folder, {"notes.md"})


def test_ctrl_c_while_moving_files_in_waits_for_the_last_rename(folder, monkeypatch):
    # Protection: _signals_deferred. The signal arrives at the first rename into place; it
    # takes effect after the manifest, so the folder is wholly new.
    interrupt_at(monkeypatch, "replace", 1, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        write_files(folder, NEW)
    assert without_manifest(folder) == expected(NEW)
    assert_consistent(folder, {"notes.md"})


def test_disk_full_while_writing_the_manifest_changes_nothing(folder, monkeypatch):
    # Item: "out of disk space while writing the manifest". The manifest is staged last, before
    # any rename; ENOSPC there removes the staging folder.
    before = tree(folder)
    real_write = os.write

    def full_on_manifest(fd: int, data: memoryview) -> int:
        if bytes(data[:66]).endswith(b"  ") and bytes(data[:64]).isalnum():  # "<sha256>  name"
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(safe_write.os, "write", full_on_manifest)
    with pytest.raises(AdvisorError) as caught:
        write_files(folder, NEW)
    assert str(caught.value) == (
        f"{folder / MANIFEST_NAME}: cannot write: No space left on device; nothing was changed"
    )
    assert tree(folder) == before


def test_a_failure_leaves_no_folder_it_created(tmp_path, monkeypatch):
    monkeypatch.setattr(
        safe_write.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O"))
    )
    with pytest.raises(AdvisorError):
        write_files(tmp_path / "new" / "out", {"a.md": "a"})
    assert list(tmp_path.iterdir()) == []


def test_a_second_run_into_the_same_folder_fails_cleanly_while_the_first_holds_it(
    folder, monkeypatch
):
    # Item: "run twice at once into one folder". A second write_files while the first stages
    # (another open file description, so flock conflicts as between two processes).
    real = safe_write._write_new
    seen: list[str] = []

    def second_run_meanwhile(path: Path, data: bytes) -> Path:
        if not seen:
            try:
                write_files(folder, {"design.md": "second"})
            except AdvisorError as error:
                seen.append(str(error))
        return real(path, data)

    monkeypatch.setattr(safe_write, "_write_new", second_run_meanwhile)
    write_files(folder, NEW)
    assert seen == [
        f"{folder}: another advisor run is writing into this folder; nothing was changed, try "
        "again when it has finished"
    ]
    assert without_manifest(folder) == expected(NEW)
    assert_consistent(folder, {"notes.md"})


SCRIPT = """
import os, signal, sys
from pathlib import Path
from advisor import safe_write

out, mode = Path(sys.argv[1]), sys.argv[2]
function, count, signum = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
real = os.replace if function == "replace" else getattr(safe_write, function)
calls = [0]

def hooked(*args):
    calls[0] += 1
    if calls[0] == count:
        os.kill(os.getpid(), signum)
    return real(*args)

if function == "replace":
    safe_write.os.replace = hooked
else:
    setattr(safe_write, function, hooked)
files = {"design.md": "new design", "config/galera-a.cnf": "new a", "config/galera-c.cnf": "new c"}
safe_write.write_files(out, files)
"""


def run_interrupted(out: Path, function: str, count: int, signum: int) -> int:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(out), "x", function, str(count), str(signum)],
        check=False,
        capture_output=True,
        timeout=120,
    ).returncode


def test_sigterm_while_staging_cleans_up_then_dies_of_sigterm(folder):
    # Item: "doc interrupted (SIGTERM)". Python's default for SIGTERM would end the process
    # without clean-up; _terminate_raises turns it into clean-up, then re-raises the signal.
    before = tree(folder)
    assert run_interrupted(folder, "_write_new", 2, signal.SIGTERM) == -signal.SIGTERM
    assert tree(folder) == before


def test_sigterm_while_moving_files_in_finishes_the_move_first(folder):
    assert run_interrupted(folder, "replace", 2, signal.SIGTERM) == -signal.SIGTERM
    assert without_manifest(folder) == expected(NEW)
    assert_consistent(folder, {"notes.md"})


def test_a_run_killed_while_moving_files_in_is_named_by_the_next_one(folder):
    # Item: "the next run then refuses the folder without --force". SIGKILL at the third
    # rename (the manifest of old and new content, galera-a.cnf, then killed): the folder is
    # mixed and the complete staging folder remains. Issue 26: the next run cannot tell it
    # from a planted one, so it names it and changes nothing; once the user has removed it,
    # the next run needs no --force (the manifest vouches for old and new content alike).
    assert run_interrupted(folder, "replace", 3, signal.SIGKILL) == -signal.SIGKILL
    assert (folder / "config/galera-a.cnf").read_text() == "new a"
    assert (folder / "config/galera-b.cnf").read_text() == "old b"
    (leftover,) = folder.glob(".advisor-txn-*")
    mixed = tree(folder)
    third = {"design.md": "third", "config/galera-a.cnf": "new a"}
    with pytest.raises(AdvisorError) as caught:
        write_files(folder, third)
    assert str(caught.value).startswith(f"{leftover}: a staging folder left by an advisor run")
    assert tree(folder) == mixed
    shutil.rmtree(leftover)
    write_files(folder, third)
    files = without_manifest(folder)
    assert files == {
        "design.md": b"third",
        "config/galera-a.cnf": b"new a",
        "notes.md": b"the user's own",
    }
    assert_consistent(folder, {"notes.md"})


def test_a_run_killed_while_staging_leaves_its_folder_for_the_user(folder):
    before = tree(folder)
    assert run_interrupted(folder, "_write_new", 2, signal.SIGKILL) == -signal.SIGKILL
    (staged,) = folder.glob(".advisor-txn-*")
    assert not (staged / MANIFEST_NAME).exists()  # incomplete: no manifest in it
    assert {n: c for n, c in tree(folder).items() if not n.startswith(".advisor-txn-")} == before
    with pytest.raises(AdvisorError, match="a staging folder left by an advisor run"):
        write_files(folder, NEW)
    shutil.rmtree(staged)
    write_files(folder, NEW)  # nothing had been replaced: no --force needed
    assert without_manifest(folder) == expected(NEW)
    assert_consistent(folder, {"notes.md"})


def test_two_doc_runs_at_once_leave_one_whole_result(tmp_path):
    # Item: "run twice at once into one folder". Two real processes; each either writes the
    # whole set or stops with the lock's message, and the folder is consistent after both.
    out = tmp_path / "out"
    command = [sys.executable, "-m", "advisor", "doc", str(EXAMPLE), "-o", str(out)]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(run.wait(timeout=300), run.stderr.read() if run.stderr else "") for run in runs]
    for run in runs:
        for stream in (run.stdout, run.stderr):
            if stream:
                stream.close()
    assert any(code == 0 for code, _ in results), results
    for code, stderr in results:
        assert code == 0 or "another advisor run is writing into this folder" in stderr, stderr
    assert_consistent(out)
    assert (out / "design.md").read_text().startswith("#")


DOC_TOPOLOGY = textwrap.dedent(
    """\
    name: sites-come-and-go
    requirements: {commit_latency_ms: {p99: 40}, survive: site}
    sites:
      - {name: virginia, location: {lat: 38.9, lon: -77.4}, nodes: 3}
      - {name: dublin, location: {lat: 53.35, lon: -6.26}, nodes: 3}
      - {name: tokyo, location: {lat: 35.7, lon: 139.7}, nodes: 3}
    workload:
      commits_per_s: {avg: 250, peak: 700}
      hot_rows:
        - {name: r1, updates_per_s: 12, writer_sites: [virginia]}
        - {name: r2, updates_per_s: 9, writer_sites: [dublin]}
    """
)


def test_doc_after_a_site_is_removed_deletes_that_sites_files(tmp_path):
    # Item: "Files of sites that no longer exist stay, listed in the manifest." Through the CLI.
    topology = tmp_path / "t.yaml"
    topology.write_text(DOC_TOPOLOGY)
    out = tmp_path / "out"
    runner = CliRunner()
    first = runner.invoke(app, ["doc", str(topology), "-o", str(out), "--format", "md"])
    assert first.exit_code == 0, first.stderr
    assert [p for p in (out / "config").iterdir() if "tokyo" in p.name]
    topology.write_text(
        DOC_TOPOLOGY.replace("  - {name: tokyo, location: {lat: 35.7, lon: 139.7}, nodes: 3}\n", "")
    )
    second = runner.invoke(app, ["doc", str(topology), "-o", str(out), "--format", "md"])
    assert second.exit_code == 0, second.stderr
    assert not [p for p in out.rglob("*") if "tokyo" in p.name]
    assert_consistent(out)
    assert sorted(str(Path(line)) for line in second.stdout.splitlines()) == sorted(
        str(out / name) for name in tree(out) if name != MANIFEST_NAME
    )
