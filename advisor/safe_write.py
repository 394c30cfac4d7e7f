"""Write generated documents and artifacts safely: one file, or a whole ``-o`` folder.

Promises (SECURITY.md, "Writes"):

- **Only regular files are replaced.** A FIFO, a device, a socket or a folder at a target is
  refused (even with ``force``); a target is a new name or a regular file, replaced by
  renaming a complete file over it, so a reader never sees half of it.
- **Nothing escapes the folder.** Every name is checked before anything is written: relative,
  no ``..``, no control characters, and its folder, once symlinks are resolved, still inside
  ``out_dir``. Names derived from user text (site names) go through
  :func:`advisor.names.safe_name`, and names built from several of them through
  :func:`advisor.names.distinct_names`.
- **A folder is updated all or nothing.** :func:`write_files` holds a lock on the folder
  (a second run fails at once with a clear message), writes the whole new set into a staging
  folder inside it, and only then moves the files into place, with SIGINT, SIGTERM and SIGHUP
  held back until the last rename (in the main thread, where Python handles signals; a
  SIGTERM that would end the process at once first lets the clean-up run). Any failure (disk
  full, a template error, Ctrl-C) removes the run's own staging folder; before the first
  rename that leaves the folder as it was.
- **A staging folder found in ``out_dir`` is never used, moved or removed.** A run killed
  outright (SIGKILL, power loss) leaves its ``.advisor-txn-<16 hex>`` folder behind, but a
  folder of that name can also arrive with a git checkout or a tarball, holding anything
  (symbolic links out of the folder, a manifest that claims the user's files). Nothing in it
  can prove that advisor wrote it, so the next run does not "recover" it: it stops before
  touching anything, with one line naming the folder and asking the user to look at it and
  remove it. Only the staging folder a run made itself is ever moved from or removed. A run
  killed while moving files in leaves the folder mixed, but its manifest (written before the
  first move) lists both the old and the new content of each file, so the next run, once the
  leftover is removed, replaces and deletes them as advisor's own, without ``--force``.
- **A user's file is neither overwritten without ``force`` nor ever deleted.** The folder's
  ``.advisor-manifest`` lists, in ``sha256sum`` format, exactly the files of the last run.
  An existing file is replaced only if the manifest lists it with its current content. A
  file of the last run that this run does not produce (a site since removed) is deleted if
  it still has the content the manifest records, and otherwise left alone as the user's.

The tool does not defend against another user racing it inside the output folder (swapping
a folder for a symlink between the check and the write): the output folder is the user's own.
"""

from __future__ import annotations

__all__ = [
    "MANIFEST_NAME",
    "check_file_target",
    "write_file",
    "write_files",
]

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import signal
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from advisor.errors import AdvisorError, Location

MANIFEST_NAME = ".advisor-manifest"
# The staging folder of one run inside the output folder: a fixed, recognisable name, so
# that the next run can see a leftover (and refuses to go on while one is there).
_STAGING_PREFIX = ".advisor-txn-"
_STAGING = re.compile(r"^\.advisor-txn-[0-9a-f]{16}$")
# POSIX NAME_MAX is 255 bytes on every common file system (ext4, XFS, APFS, NTFS).
_MAX_COMPONENT_BYTES = 255
# Largest manifest read [bytes]: a line per file written, a few hundred files at most.
_MAX_MANIFEST_BYTES = 1 << 20
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MANIFEST_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")
# Signals held back while files are moved into place (a shell's Ctrl-C, kill, a closed
# terminal): they take effect right after the last rename.
_DEFERRED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def write_file(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; only a regular file or a new name.

    A symbolic link is followed: the file it names is replaced, the link stays. What
    ``path`` finally names must be missing or a regular file; a FIFO, a device, a socket or a
    folder is refused, whoever runs the tool (``--chart /dev/null`` as root must not replace
    the system's ``/dev/null``). The text goes to a temporary file beside the target, flushed
    to disk, then renamed over it, keeping an existing file's permissions. Missing folders
    named in ``path`` are created (not those a dangling link points into).

    Returns
    -------
    Path
        The file written, symbolic links resolved.

    Raises
    ------
    AdvisorError
        The target is not a regular file, or the file system refused the write; the target
        is then unchanged and no temporary file remains.
    """
    shown = Location(str(path))
    target = Path(os.path.realpath(path))
    mode = _regular_or_new(target, shown)
    try:
        # The folders named in ``path``, not those a dangling link points into.
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        temporary = _write_new(target.with_name(_temporary_name()), text.encode("utf-8"))
        try:
            if mode is not None:
                os.chmod(temporary, mode)
            _regular_or_new(target, shown)  # again, as late as possible before the rename
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)  # gone already when it was renamed
        _fsync_folder(target.parent)
    except OSError as error:
        raise AdvisorError(f"cannot write: {error.strerror}", shown) from None
    return target


def check_file_target(path: Path) -> None:
    """Refuse now what :func:`write_file` would refuse later: call before long work.

    Raises
    ------
    AdvisorError
        What ``path`` finally names exists and is not a regular file.
    """
    _regular_or_new(Path(os.path.realpath(path)), Location(str(path)))


def _regular_or_new(target: Path, shown: Location) -> int | None:
    """The permission bits of an existing regular file, None for a new name; else refuse."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise AdvisorError(f"cannot inspect: {error.strerror}", shown) from None
    if stat.S_ISREG(info.st_mode):
        return stat.S_IMODE(info.st_mode)
    raise AdvisorError(
        f"is {_kind(info.st_mode)}, not a regular file; refusing to replace it (name a "
        "regular file or a new one)",
        shown,
    )


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link that does not resolve"),
    ]
    return next((kind for test, kind in kinds if test(mode)), "a special file")


def write_files(out_dir: Path, files: Mapping[str, str], *, force: bool = False) -> list[Path]:
    """Make ``files`` (relative name -> UTF-8 text) the tool's files in ``out_dir``, all or nothing.

    The folder then holds exactly ``files`` as the tool's own, listed in its manifest: files
    of an earlier run that ``files`` no longer names are deleted if unchanged since (a
    user's edited copy stays, no longer listed). The user's other files are left alone.

    Parameters
    ----------
    out_dir
        The output folder; created (with its parents) if missing, removed again if a failure
        leaves it empty.
    files
        Relative POSIX names (``"galera/paris-1.cnf"``) and their text. Sub-folders are
        created inside ``out_dir``.
    force
        Replace existing regular files that the tool did not write (or that were edited
        since). Never replaces a folder, a FIFO, a device or a socket.

    Returns
    -------
    list of Path
        The files written, in the order of ``files``.

    Raises
    ------
    AdvisorError
        A name is not allowed, a folder would escape ``out_dir``, a target is not a regular
        file, an existing file is the user's (without ``force``), another run holds the
        folder, a staging folder this run did not make is there, or the file system refused
        a write. The folder is then as it was, except when moving the staged files in failed
        midway: the error says so.
    """
    out_dir = Path(out_dir)
    names = _check_names(files)
    _check_out_dir(out_dir)
    data = {name: files[name].encode("utf-8") for name in names}
    with _terminate_raises():
        created = _make_folder(out_dir)
        with _folder_lock(out_dir):
            try:
                root = out_dir.resolve()
                _refuse_leftovers(out_dir)
                targets = _check_targets(out_dir, root, names, force)
                staging = _stage(out_dir, data)
                with _signals_deferred():
                    _apply(out_dir, root, staging)
            except BaseException:
                _remove_empty(created)  # under the lock: no other run is using them
                raise
    return [targets[name] for name in names]


def _check_names(files: Mapping[str, str]) -> list[str]:
    """Each name, normalised: relative POSIX parts, none empty, ``.`` or ``..``."""
    names: list[str] = []
    seen: dict[str, str] = {}
    for name in files:
        problem = _name_problem(name)
        if problem:
            raise AdvisorError(f"refusing to write {name!r}: {problem}")
        folded = name.casefold()  # macOS and Windows file systems ignore case
        if folded in seen:
            raise AdvisorError(
                f"refusing to write {name!r}: it names the same file as {seen[folded]!r} on a "
                "case-insensitive file system"
            )
        seen[folded] = name
        names.append(name)
    return names


def _name_problem(name: str) -> str | None:
    if not isinstance(name, str) or not name:
        return "a file name must be non-empty text"
    if _CONTROL.search(name):
        return "control characters (NUL, newline, ...) are not allowed in file names"
    if "\\" in name:
        return "use '/' between folders, not '\\'"
    if name.startswith("/"):
        return "an absolute path would leave the output folder; give a relative name"
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "empty, '.' or '..' path components are not allowed"
    if name == MANIFEST_NAME:
        return f"{MANIFEST_NAME} is the tool's own record of what it wrote"
    if parts[0].startswith(_STAGING_PREFIX):
        return f"{_STAGING_PREFIX}* is the tool's own staging folder"
    if any(len(part.encode("utf-8", "surrogatepass")) > _MAX_COMPONENT_BYTES for part in parts):
        return f"a path component is longer than {_MAX_COMPONENT_BYTES} bytes"
    return None


def _check_out_dir(out_dir: Path) -> None:
    try:
        info = out_dir.stat()
    except FileNotFoundError:
        return
    except OSError as error:
        raise AdvisorError(
            f"cannot use the output folder: {error.strerror}", Location(str(out_dir))
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise AdvisorError("the output folder exists and is not a folder", Location(str(out_dir)))


def _make_folder(out_dir: Path) -> list[Path]:
    """Create ``out_dir`` and its missing parents; return those created, deepest first."""
    missing = []
    folder = out_dir.absolute()
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise AdvisorError(
            f"cannot create the output folder: {error.strerror}",
            Location(str(error.filename or out_dir)),
        ) from None
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (another run wrote into it) or not ours to remove


@contextlib.contextmanager
def _folder_lock(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder itself; fail at once if another run has it."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; concurrent runs there are the user's to avoid
        yield
        return
    try:
        descriptor = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except PermissionError:  # a folder one may write but not read (mode -wx): go on unlocked
        yield
        return
    except OSError as error:  # removed meanwhile by a run that failed
        raise AdvisorError(
            f"cannot use the output folder: {error.strerror}", Location(str(out_dir))
        ) from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AdvisorError(
                "another advisor run is writing into this folder; nothing was changed, try "
                "again when it has finished",
                Location(str(out_dir)),
            ) from None
        except OSError:
            pass  # a file system without flock (some NFS set-ups): go on unlocked
        yield
    finally:
        os.close(descriptor)  # releases the lock


class _Terminated(BaseException):
    """SIGTERM arrived while the folder was being written."""


@contextlib.contextmanager
def _terminate_raises() -> Iterator[None]:
    """Turn a default-handled SIGTERM into an exception, so that clean-up runs, then die of it.

    Python's default for SIGTERM ends the process at once, leaving the staging folder
    behind. In the main thread, while SIGTERM has its default action, it raises instead; once
    the clean-up is done the default is restored and the signal sent again, so the process
    still ends as killed by SIGTERM.
    """
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def raise_terminated(signum: int, frame: object) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise SystemExit(128 + signal.SIGTERM) from None  # only if the signal was blocked
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back until the block ends, then deliver them.

    Python handlers, not the thread's signal mask: a mask does not hold back a signal that
    the kernel hands to another thread. Only the main thread can install handlers; elsewhere
    the block runs unprotected.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {}
    for signum in _DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is None or handler is signal.SIG_IGN:
            continue  # set outside Python (cannot be restored), or ignored anyway
        previous[signum] = handler
        signal.signal(signum, lambda received, frame: pending.append(received))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(pending):
            os.kill(os.getpid(), signum)  # now to the handler it was meant for


def _target(out_dir: Path, name: str) -> Path:
    return out_dir.joinpath(*PurePosixPath(name).parts)


def _check_targets(out_dir: Path, root: Path, names: list[str], force: bool) -> dict[str, Path]:
    """Every target, checked before anything is staged: inside, a file name, not the user's."""
    manifest = _read_manifest(out_dir)
    device = out_dir.stat().st_dev
    targets = {name: _target(out_dir, name) for name in names}
    for name, target in targets.items():
        _check_inside(root, target, name)
        _check_folders(out_dir, target, device)
        _check_replaceable(target)
        if not force:
            _check_ours(target, manifest.get(name))
    _check_replaceable(out_dir / MANIFEST_NAME)
    return targets


def _check_folders(out_dir: Path, target: Path, device: int) -> None:
    """Each existing folder on the way to ``target`` is a folder on ``out_dir``'s file system."""
    folder = target.parent
    while folder != out_dir:
        try:
            info = folder.stat()
        except FileNotFoundError:
            folder = folder.parent
            continue
        except OSError as error:
            raise AdvisorError(f"cannot inspect: {error.strerror}", Location(str(folder))) from None
        if not stat.S_ISDIR(info.st_mode):
            raise AdvisorError(
                f"is {_kind(info.st_mode)} where advisor needs a folder for {target.name}",
                Location(str(folder)),
            )
        if info.st_dev != device:
            raise AdvisorError(
                "is on another file system than the output folder; advisor moves files into "
                "place by renaming them, which cannot cross file systems",
                Location(str(folder)),
            )
        folder = folder.parent


def _check_replaceable(target: Path) -> None:
    """A new name, a regular file or a symbolic link (replaced, not followed); never more."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    except OSError as error:
        raise AdvisorError(f"cannot inspect: {error.strerror}", Location(str(target))) from None
    if stat.S_ISDIR(info.st_mode):
        raise AdvisorError("is a folder; expected a file name to write", Location(str(target)))
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise AdvisorError(
            f"is {_kind(info.st_mode)}, not a regular file; refusing to replace it, even with "
            "--force (remove it yourself if it should go)",
            Location(str(target)),
        )


def _check_inside(root: Path, target: Path, name: str) -> None:
    """The target's folder, symlinks resolved, is ``root`` or below it."""
    parent = target.parent.resolve()
    if parent != root and root not in parent.parents:
        raise AdvisorError(
            f"refusing to write {name!r}: its folder resolves to {parent}, outside the output "
            f"folder {root} (a symlink?)",
            Location(str(target)),
        )


def _read_manifest(folder: Path) -> dict[str, frozenset[str]]:
    """Name -> sha256 of what the tool wrote (two while a run moves files in: the old and the
    new content); unreadable or malformed lines claim nothing."""
    path = folder / MANIFEST_NAME
    try:
        info = path.lstat()
    except OSError:
        return {}
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_MANIFEST_BYTES:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[str, frozenset[str]] = {}
    for line in text.splitlines():
        match = _MANIFEST_LINE.match(line)
        if match and _name_problem(match.group(2)) is None:
            name = match.group(2)
            found[name] = found.get(name, frozenset()) | {match.group(1)}
    return found


def _manifest_text(entries: Mapping[str, frozenset[str]]) -> str:
    """``sha256sum`` lines, by name then digest."""
    return "".join(
        f"{digest}  {name}\n" for name in sorted(entries) for digest in sorted(entries[name])
    )


def _check_ours(target: Path, recorded: frozenset[str] | None) -> None:
    """Refuse to replace a file the manifest does not list with its current content."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    except OSError as error:
        raise AdvisorError(f"cannot inspect: {error.strerror}", Location(str(target))) from None
    if recorded is not None and _is_ours(target, info, recorded):
        return
    why = "was changed since advisor wrote it" if recorded else "was not written by advisor"
    raise AdvisorError(
        f"refusing to overwrite: this file {why}; use --force to replace it", Location(str(target))
    )


def _is_ours(path: Path, info: os.stat_result, recorded: frozenset[str]) -> bool:
    return stat.S_ISREG(info.st_mode) and _sha256(path) in recorded


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _stage(out_dir: Path, data: Mapping[str, bytes]) -> Path:
    """Every file, then the manifest that marks the set complete, in a new staging folder."""
    staging = out_dir / f"{_STAGING_PREFIX}{secrets.token_hex(8)}"
    name = MANIFEST_NAME
    try:
        os.mkdir(staging, 0o700)
        for name, blob in data.items():
            path = _target(staging, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_new(path, blob)
        name = MANIFEST_NAME
        digests = {n: frozenset({hashlib.sha256(blob).hexdigest()}) for n, blob in data.items()}
        _write_new(staging / MANIFEST_NAME, _manifest_text(digests).encode("utf-8"))
        for folder in {_target(staging, n).parent for n in data} | {staging}:
            _fsync_folder(folder)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise AdvisorError(
                f"cannot write: {error.strerror}; nothing was changed",
                Location(str(_target(out_dir, name))),
            ) from None
        raise
    return staging


def _apply(out_dir: Path, root: Path, staging: Path) -> None:
    """Move this run's staging folder's files into place, delete stale files, then the manifest.

    Before the first move the folder's manifest lists both the old and the new content of
    every file (a name twice where it changes), so that whenever the run stops (SIGKILL,
    power loss, a failed rename) every file in the folder is still known as advisor's, and
    the next run replaces or deletes it without ``--force``. Only in that state does
    ``sha256sum -c`` report one line of such a pair as failed. The old entries are kept in
    memory for the stale files.
    """
    new = _read_manifest(staging)
    old = _read_manifest(out_dir)
    folders = {out_dir}
    name = MANIFEST_NAME
    moving = False
    try:
        both = {n: old.get(n, frozenset()) | new.get(n, frozenset()) for n in old.keys() | new}
        _replace_manifest(out_dir, _manifest_text(both))
        moving = True
        for name in sorted(new):
            target = _target(out_dir, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            _check_inside(root, target, name)  # again: mkdir may have met a symlink
            os.replace(_target(staging, name), target)
            folders.add(target.parent)
        for name in sorted(old.keys() - new.keys()):
            _remove_stale(out_dir, root, name, old[name])
        name = MANIFEST_NAME
        os.replace(staging / MANIFEST_NAME, out_dir / MANIFEST_NAME)
        for folder in folders:
            _fsync_folder(folder)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)  # this run's own: the next run makes anew
        state = (
            "the new files are partly in place: run advisor again to finish"
            if moving
            else "nothing was changed"
        )
        raise AdvisorError(
            f"cannot write: {error.strerror}; {state}", Location(str(_target(out_dir, name)))
        ) from None
    shutil.rmtree(staging, ignore_errors=True)


def _replace_manifest(out_dir: Path, text: str) -> None:
    """Replace ``out_dir``'s manifest with ``text``, flushed to disk, by one rename."""
    temporary = _write_new(out_dir / _temporary_name(), text.encode("utf-8"))
    try:
        os.replace(temporary, out_dir / MANIFEST_NAME)
    finally:
        temporary.unlink(missing_ok=True)  # gone already when it was renamed
    _fsync_folder(out_dir)


def _remove_stale(out_dir: Path, root: Path, name: str, recorded: frozenset[str]) -> None:
    """Delete a file of the last run if it still holds what the tool wrote, and empty folders."""
    target = _target(out_dir, name)
    try:
        info = target.lstat()
        _check_inside(root, target, name)
    except (OSError, AdvisorError):
        return  # gone, or its folder now leads elsewhere: not ours to touch
    if not _is_ours(target, info, recorded):
        return  # edited since: the user's now
    target.unlink()
    folder = target.parent
    while folder != out_dir:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty: other files, the user's or this run's
        folder = folder.parent


def _refuse_leftovers(out_dir: Path) -> None:
    """Stop if ``out_dir`` holds a staging folder: a killed run's, or one planted in it.

    Nothing in such a folder proves who wrote it (a tarball or a checkout can carry any
    manifest, file or symbolic link), so it is neither finished nor removed: the user looks
    at it and removes it.
    """
    try:
        with os.scandir(out_dir) as entries:
            found = sorted(entry.name for entry in entries if _STAGING.match(entry.name))
    except OSError:
        return  # an unreadable folder (mode -wx): writing into it fails with its own message
    if found:
        leftover = out_dir / found[0]
        raise AdvisorError(
            "a staging folder left by an advisor run that was killed, or one that came with "
            "the folder; advisor never uses or removes one it did not make itself: look "
            "inside, remove it and run again",
            Location(str(leftover)),
        )


def _temporary_name() -> str:
    # A fixed-length name: appending to a long target name could pass NAME_MAX.
    return f".advisor-{secrets.token_hex(8)}.tmp"


def _write_new(path: Path, data: bytes) -> Path:
    """A new file ``path`` holding ``data``, flushed to disk; mode as the umask allows."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        path.unlink(missing_ok=True)
        raise
    os.close(descriptor)
    return path


def _fsync_folder(folder: Path) -> None:
    """Make the renames durable: fsync the folder (POSIX; Windows cannot open folders)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems (network, FUSE) refuse fsync on folders; the data is synced
    finally:
        os.close(descriptor)
