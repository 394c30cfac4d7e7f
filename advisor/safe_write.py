"""Write generated documents and artifacts safely into the ``-o`` folder.

Three promises (SECURITY.md, "Writes"):

- **Nothing escapes the folder.** Every name is checked before anything is written: relative,
  no ``..``, no control characters, and its folder, once symlinks are resolved, still inside
  ``out_dir``. Names derived from user text (site names) go through :func:`safe_name`.
- **Nothing is half-written.** Each file is written to a temporary file in its own folder,
  flushed to disk and renamed over the target (``os.replace`` is atomic on POSIX). Every
  temporary file is written before the first rename, so a failure while writing (disk full,
  permission denied) leaves every existing file as it was and removes the temporaries.
- **A user's file is not overwritten without ``force``.** The folder's ``.advisor-manifest``
  lists, in ``sha256sum`` format, what the tool wrote. An existing file is replaced only if
  the manifest lists it with its current content; a file edited since, or never written by
  the tool, is the user's.

The tool does not defend against another process racing it in the same folder (swapping a
folder for a symlink between the check and the write): the output folder is the user's own.
"""

from __future__ import annotations

__all__ = ["MANIFEST_NAME", "safe_name", "write_files"]

import hashlib
import os
import re
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from advisor.errors import AdvisorError, Location

MANIFEST_NAME = ".advisor-manifest"
# POSIX NAME_MAX is 255 bytes on every common file system (ext4, XFS, APFS, NTFS).
_MAX_COMPONENT_BYTES = 255
# Longest name safe_name returns [characters]: room for a suffix such as "-galera.cnf".
_SAFE_NAME_CHARS = 100
# Largest manifest read [bytes]: a line per file written, a few hundred files at most.
_MAX_MANIFEST_BYTES = 1 << 20
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MANIFEST_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")
# Device names Windows refuses whatever the extension (a report may be copied there).
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}


def safe_name(text: str) -> str:
    """A file-name component made from user text (a site or topology name).

    Runs of characters outside ``[A-Za-z0-9_.-]`` become ``_``; a leading dot or dash gets a
    ``_`` before it (no hidden files, no ``..``, nothing a shell reads as an option); Windows
    device names get a ``_`` after them; long names are cut and given a hash suffix so that
    two long names stay distinct.

    >>> [safe_name(s) for s in ("paris-1", "../etc/passwd", "..", "", "São Paulo", "CON")]
    ['paris-1', '_.._etc_passwd', '_..', '_', 'S_o_Paulo', 'CON_']
    """
    name = _UNSAFE_CHARS.sub("_", text)
    if not name or name[0] in ".-":
        name = "_" + name
    stem = name.split(".")[0]
    if stem.lower() in _WINDOWS_RESERVED:
        name = stem + "_" + name[len(stem) :]
    if len(name) > _SAFE_NAME_CHARS:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = name[: _SAFE_NAME_CHARS - 13] + "-" + digest
    return name


def write_files(out_dir: Path, files: Mapping[str, str], *, force: bool = False) -> list[Path]:
    """Write ``files`` (relative name -> UTF-8 text) into ``out_dir``, all or nothing.

    Parameters
    ----------
    out_dir
        The output folder; created (with its parents) if missing.
    files
        Relative POSIX names (``"galera/paris-1.cnf"``) and their text. Sub-folders are
        created inside ``out_dir``.
    force
        Replace existing files that the tool did not write (or that were edited since).

    Returns
    -------
    list of Path
        The files written, in the order of ``files``.

    Raises
    ------
    AdvisorError
        A name is not allowed, a folder would escape ``out_dir``, an existing file is the
        user's (without ``force``), or the file system refused a write. Nothing is changed
        when the error is raised before the renames, which covers every check and every
        failure to write a temporary file.
    """
    out_dir = Path(out_dir)
    names = _check_names(files)
    root = _check_out_dir(out_dir)
    targets = {name: out_dir.joinpath(*PurePosixPath(name).parts) for name in names}
    for name, target in targets.items():
        _check_inside(root, target, name)
    for target in (*targets.values(), out_dir / MANIFEST_NAME):
        if target.is_dir() and not target.is_symlink():
            raise AdvisorError("is a folder; expected a file name to write", Location(str(target)))
    manifest = _read_manifest(out_dir)
    if not force:
        for name, target in targets.items():
            _check_ours(target, manifest.get(name))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, target in targets.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            _check_inside(root, target, name)  # again: mkdir may have met a symlink
    except OSError as error:
        raise AdvisorError(
            f"cannot create the output folder: {error.strerror}",
            Location(str(error.filename or out_dir)),
        ) from None
    data = {name: text.encode("utf-8") for name, text in files.items()}
    _replace_all({targets[n]: data[n] for n in names})
    for name in names:
        manifest[name] = hashlib.sha256(data[name]).hexdigest()
    kept = {
        n: h
        for n, h in manifest.items()
        if n in data or out_dir.joinpath(*PurePosixPath(n).parts).is_file()
    }
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(kept.items()))
    _replace_all({out_dir / MANIFEST_NAME: text.encode("utf-8")})
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
    if any(len(part.encode("utf-8", "surrogatepass")) > _MAX_COMPONENT_BYTES for part in parts):
        return f"a path component is longer than {_MAX_COMPONENT_BYTES} bytes"
    return None


def _check_out_dir(out_dir: Path) -> Path:
    try:
        info = out_dir.stat()
    except FileNotFoundError:
        return out_dir.resolve()
    except OSError as error:
        raise AdvisorError(
            f"cannot use the output folder: {error.strerror}", Location(str(out_dir))
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise AdvisorError("the output folder exists and is not a folder", Location(str(out_dir)))
    return out_dir.resolve()


def _check_inside(root: Path, target: Path, name: str) -> None:
    """The target's folder, symlinks resolved, is ``root`` or below it."""
    parent = target.parent.resolve()
    if parent != root and root not in parent.parents:
        raise AdvisorError(
            f"refusing to write {name!r}: its folder resolves to {parent}, outside the output "
            f"folder {root} (a symlink?)",
            Location(str(target)),
        )


def _read_manifest(out_dir: Path) -> dict[str, str]:
    """Name -> sha256 of what the tool wrote; unreadable or malformed lines claim nothing."""
    path = out_dir / MANIFEST_NAME
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
    found = {}
    for line in text.splitlines():
        match = _MANIFEST_LINE.match(line)
        if match and _name_problem(match.group(2)) is None:
            found[match.group(2)] = match.group(1)
    return found


def _check_ours(target: Path, recorded: str | None) -> None:
    """Refuse to replace a file the manifest does not list with its current content."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    except OSError as error:
        raise AdvisorError(f"cannot inspect: {error.strerror}", Location(str(target))) from None
    if recorded is not None and stat.S_ISREG(info.st_mode) and _sha256(target) == recorded:
        return
    why = "was changed since advisor wrote it" if recorded else "was not written by advisor"
    raise AdvisorError(
        f"refusing to overwrite: this file {why}; use --force to replace it", Location(str(target))
    )


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _replace_all(contents: Mapping[Path, bytes]) -> None:
    """Write every temporary file, then rename each over its target; clean up on failure."""
    temporaries: dict[Path, Path] = {}
    try:
        for target, data in contents.items():
            temporaries[target] = _write_temporary(target, data)
        for target, temporary in temporaries.items():
            os.replace(temporary, target)
        for folder in {target.parent for target in contents}:
            _fsync_folder(folder)
    except OSError as error:
        raise AdvisorError(
            f"cannot write: {error.strerror}", Location(str(error.filename or next(iter(contents))))
        ) from None
    finally:
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)  # gone already when it was renamed


def _write_temporary(target: Path, data: bytes) -> Path:
    """A new file beside ``target`` holding ``data``, flushed to disk; mode as umask allows."""
    # A fixed-length name: appending to a long target name could pass NAME_MAX.
    temporary = target.with_name(f".advisor-{secrets.token_hex(8)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        temporary.unlink(missing_ok=True)
        raise
    os.close(descriptor)
    return temporary


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
