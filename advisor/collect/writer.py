"""The ``workload`` and ``galera`` sections of topology.yaml, written from collected evidence.

Every number carries a comment naming where it came from. :func:`merge_into` updates those
two sections of a user's file and leaves every other byte of it as it was: each section is
cut out by its line range, merged key by key (keys collect does not measure, such as
``workload.clients`` or a hot row's ``writer_sites``, are kept with their comments),
re-rendered, and spliced back; the file is replaced atomically.

What is written loads with advisor's own loader (issue 26): names and comments come from the
server (table names, key values, its error texts), so every comment is one line with control
characters shown as their codes (YAML allows none anywhere, comments included), and hot-row
names are made what the loader accepts (:func:`loadable_names`: escaped, at most 256
characters, distinct), with a note saying so. ``--into`` loads the updated file with
:func:`advisor.inputs.loading.parse_topology` before it replaces the user's, and refuses a top
level in flow style (``{name: ..., sites: [...]}``), whose sections are not lines it can cut
out (:func:`check_into`, before collecting).
"""

from __future__ import annotations

__all__ = [
    "check_into",
    "evidence_to_yaml",
    "loadable_names",
    "merge_into",
    "render_sections",
    "write_text_atomic",
]

import io
import itertools
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from advisor.collect.apply_cost import apply_cost
from advisor.collect.hotrows import round_rate
from advisor.collect.status import Spread, StatusSummary
from advisor.errors import AdvisorError, Location
from advisor.text.escape import one_line, terminal

if TYPE_CHECKING:
    from advisor.collect.api import CollectedEvidence

_SECTIONS = ("workload", "galera")
_COMMENT_WIDTH = 96
# The loader's bound on a name (advisor.inputs.topology.Name).
_MAX_NAME_CHARS = 256


def _plain(text: str) -> str:
    """One line, control characters (ESC, NUL, bidi overrides) shown as their codes."""
    return terminal(one_line(text))


def loadable_names(names: list[str]) -> list[str]:
    r"""Hot-row names as the loader accepts them, in order: one line, control characters
    shown as their codes, at most 256 characters, and distinct (a number added to a name
    that would meet an earlier one).

    >>> loadable_names(["a\x1bb", "c\nd", "a\\x1bb"])
    ['a\\x1bb', 'c d', 'a\\x1bb (2)']
    """
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        base = _cut(_plain(name) or "(unnamed)", _MAX_NAME_CHARS)
        candidate, number = base, 1
        while candidate in seen:
            number += 1
            suffix = f" ({number})"
            candidate = _cut(base, _MAX_NAME_CHARS - len(suffix)) + suffix
        seen.add(candidate)
        out.append(candidate)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _eol(mapping: CommentedMap, key: str, text: str) -> None:
    mapping.yaml_add_eol_comment(_plain(text), key)


def _rate(value: float) -> float | int:
    rounded = round_rate(value)
    return int(rounded) if rounded == int(rounded) and abs(rounded) >= 100 else rounded


def _flow(**items: Any) -> CommentedMap:
    mapping = CommentedMap(items)
    mapping.fa.set_flow_style()
    return mapping


def _spread_map(spread: Spread, *, avg: bool = True) -> CommentedMap | None:
    if spread.peak is None or spread.avg is None:
        return None
    peak = _rate(spread.peak)
    if not avg:
        return _flow(peak=peak)
    mean = _rate(spread.avg)
    return _flow(avg=mean, peak=max(peak, mean))


def _percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.1f}%"


def _per_s(spread: Spread) -> str:
    if spread.avg is None or spread.peak is None:
        return "n/a"
    return f"{round_rate(spread.avg):g}/s (peak {round_rate(spread.peak):g}/s)"


def _provenance(evidence: CollectedEvidence) -> list[str]:
    """The comment block at the top of ``workload``: where, when, how, and the context."""
    s = evidence.status
    how = (
        f"From advisor collect on {evidence.target} at "
        f"{evidence.started_at.strftime('%Y-%m-%dT%H:%M:%SZ')}: {s.samples} status samples "
        f"every {evidence.interval_s:g}s over {evidence.duration_s:.0f}s"
        + (" (ended early)." if evidence.ended_early else ".")
    )
    context = ["Seen from this node, for the whole cluster:"]
    if s.repl_latency is not None:
        r = s.repl_latency
        context.append(
            f"replication latency (wsrep_evs_repl_latency) min {r.min_ms:.3g} ms, "
            f"avg {r.avg_ms:.3g} ms, max {r.max_ms:.3g} ms over {r.samples} messages;"
        )
    if s.flow_control_paused.peak is not None:
        context.append(
            f"flow control paused {_percent(s.flow_control_paused.avg)} of the time, "
            f"{_percent(s.flow_control_paused.peak)} in the worst interval "
            "(wsrep_flow_control_paused_ns);"
        )
    flow = _flow_control(s)
    if flow:
        context.append(flow)
    apply = _apply_cost(s, evidence.variables)
    if s.cert_failures_per_s.peak is not None:
        context.append(
            f"certification failures {_per_s(s.cert_failures_per_s)}, brute-force "
            f"aborts {_per_s(s.bf_aborts_per_s)} on this node;"
        )
    if s.cluster_size_min is not None:
        size = (
            str(s.cluster_size_min)
            if s.cluster_size_min == s.cluster_size_max
            else f"{s.cluster_size_min} to {s.cluster_size_max}"
        )
        context.append(f"cluster size {size}; this node is in segment {s.segment}.")
    blocks = [how, " ".join(context)]
    if s.local_commits_per_s.avg is not None:
        blocks.append(
            f"This node's own share: {_per_s(s.local_commits_per_s)} commits "
            "(wsrep_local_commits), sending "
            f"{_bytes_rate(s.replicated_bytes_per_s)} and receiving "
            f"{_bytes_rate(s.received_bytes_per_s)} of write sets."
        )
    if apply:
        blocks.append(apply)
    blocks += [f"Note: {note}" for note in evidence.notes]
    names = [row.name for row in evidence.hot_rows]
    if loadable_names(names) != names:
        blocks.append(
            "Note: hot-row names are written with control characters as their codes (\\x1b), "
            "on one line, at most 256 characters and distinct, as topology.yaml requires."
        )
    lines: list[str] = []
    for block in blocks:
        lines += textwrap.wrap(_plain(block), _COMMENT_WIDTH, subsequent_indent="  ")
    return lines


def _apply_cost(s: StatusSummary, variables: Mapping[str, str]) -> str:
    """One apply's cost on this node (:func:`advisor.collect.apply_cost.apply_cost`), the
    input ``sites[].local_commit_ms`` of its site (issue 23); empty when it did not send
    most of the pauses."""
    cost = apply_cost(s, variables)
    if cost is None:
        return ""
    return (
        f"This node sent {cost.fc_sent} of the {cost.fc_received} flow-control pauses: it fell "
        "behind, and in the intervals in which it sent them its appliers committed "
        f"{cost.applied_per_s:.0f} write sets/s of the other nodes with "
        f"{cost.appliers_text}, so one apply costs "
        f"it at most about {cost.apply_ms:.3g} ms. To model its site, give that site "
        f"local_commit_ms: {cost.apply_ms:.3g} (sites[].local_commit_ms)."
    )


def _flow_control(s: StatusSummary) -> str:
    """This node's part in flow control: the pauses it sent (it fell behind) and received,
    its receive queue and the parallelism its appliers could use (issue 23); empty when the
    server reports none of them."""
    parts = []
    if s.flow_control_sent is not None:
        parts.append(
            f"this node sent {s.flow_control_sent} flow-control pauses (wsrep_flow_control_sent)"
        )
    if s.flow_control_recv is not None:
        parts.append(f"received {s.flow_control_recv} (wsrep_flow_control_recv)")
    if s.recv_queue_avg is not None:
        parts.append(
            f"its receive queue averaged {s.recv_queue_avg:.3g} write sets "
            "(wsrep_local_recv_queue_avg)"
        )
    if s.cert_deps_distance is not None and s.cert_deps_distance >= 1.0:  # 0: none certified
        parts.append(
            f"about {s.cert_deps_distance:.3g} write sets could apply in parallel "
            "(wsrep_cert_deps_distance: more applier threads than that bring nothing)"
        )
    return (", ".join(parts) + ";") if parts else ""


def _bytes_rate(spread: Spread) -> str:
    return "n/a" if spread.peak is None else f"peak {_rate(spread.peak):g} bytes/s"


def _hot_rows_comment(evidence: CollectedEvidence) -> str:
    if evidence.hot_row_source == "binlog":
        return (
            f"binary log: row events per primary key, peak over "
            f"{evidence.hot_row_window_s:g}s sliding windows "
            f"({evidence.hot_row_events} row changes seen)"
        )
    return (
        f"performance_schema table counts (binary log off): peak per "
        f"{evidence.hot_row_window_s:g}s interval; a table's rate bounds its hottest row"
    )


def _workload(evidence: CollectedEvidence) -> CommentedMap:
    s = evidence.status
    section = CommentedMap()
    interval = f"{evidence.interval_s:g}s"
    why = evidence.commits_source or (
        f"wsrep_last_committed less wsrep_local_cert_failures per {interval} interval: "
        "write transactions of the whole cluster"
    )
    commits = _spread_map(evidence.commits_per_s or s.commits_per_s)
    if commits is not None:
        section["commits_per_s"] = commits
        _eol(section, "commits_per_s", why)
    if evidence.writeset is not None:
        w = evidence.writeset
        p50 = round(w.p50_bytes)
        section["writeset_bytes"] = _flow(p50=p50, p99=max(p50, round(w.p99_bytes)))
        _eol(section, "writeset_bytes", w.source)
    volume = _spread_map(s.cluster_bytes_per_s, avg=False)
    if volume is not None:
        section["replicated_bytes_per_s"] = volume
        _eol(
            section,
            "replicated_bytes_per_s",
            f"peak {interval} rate of wsrep_replicated_bytes + wsrep_received_bytes: write sets "
            "of the whole cluster (avg "
            f"{_rate(s.cluster_bytes_per_s.avg or 0.0):g})",
        )
    if s.cert_deps_distance is not None and s.cert_deps_distance >= 1.0:
        # Galera's average is at least 1 once a write set is certified; 0 means none seen.
        section["cert_deps_distance"] = round(s.cert_deps_distance, 1)
        _eol(
            section,
            "cert_deps_distance",
            "wsrep_cert_deps_distance as last read: write sets that could apply in parallel; "
            "applier threads beyond it add no capacity",
        )
    if evidence.hot_rows:
        rows = CommentedSeq()
        names = loadable_names([row.name for row in evidence.hot_rows])
        for row, name in zip(evidence.hot_rows, names, strict=True):
            entry = CommentedMap()
            entry["name"] = DoubleQuotedScalarString(name)
            entry["updates_per_s"] = _rate(row.updates_per_s)
            origins = f", from server_id {', '.join(map(str, row.origins))}" if row.origins else ""
            _eol(entry, "updates_per_s", f"{row.total} changes in the run{origins}")
            rows.append(entry)
        section["hot_rows"] = rows
        _eol(section, "hot_rows", _hot_rows_comment(evidence))
    return section


def _galera(evidence: CollectedEvidence) -> CommentedMap:
    server = evidence.server
    section = CommentedMap()
    section["flavor"] = server.flavor
    _eol(
        section, "flavor", f"version {server.version!r}, version_comment {server.version_comment!r}"
    )
    if server.galera_version is not None:
        section["version"] = DoubleQuotedScalarString(server.galera_version)
        _eol(section, "version", f"wsrep_provider_version {server.galera_version_reported!r}")
    if server.provider_options:
        section["provider_options"] = CommentedMap(server.provider_options)
        _eol(
            section,
            "provider_options",
            "from wsrep_provider_options on this node (the keys advisor reads)",
        )
    return section


def _yaml(indent: tuple[int, int, int] = (2, 4, 2)) -> YAML:
    yaml = YAML()
    yaml.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    yaml.width = 4096  # never fold a long hot-row name
    yaml.preserve_quotes = True
    return yaml


def _set_eol(mapping: CommentedMap, key: str, source: CommentedMap) -> None:
    """Give ``mapping[key]`` the end-of-line comment of ``source[key]``, keeping comment
    lines that followed the old one (they belong to the lines below)."""
    new = source.ca.items.get(key)
    old = mapping.ca.items.get(key)
    following = ""
    if old is not None and old[2] is not None and "\n" in old[2].value:
        following = old[2].value.split("\n", 1)[1]
    if new is None or new[2] is None:
        return
    text = new[2].value.strip().lstrip("#").strip()
    mapping.ca.items.pop(key, None)
    mapping.yaml_add_eol_comment(text, key)
    if following:
        token = mapping.ca.items[key][2]
        token.value = token.value.rstrip("\n") + "\n" + following


def _put(old: CommentedMap, key: str, value: Any, order: tuple[str, ...]) -> None:
    """Set ``old[key]``; a new key goes after the keys that precede it in ``order``."""
    if key in old:
        old[key] = value
        return
    earlier = set(order[: order.index(key)]) if key in order else set(order)
    position = max((i + 1 for i, name in enumerate(old) if name in earlier), default=0)
    old.insert(position, key, value)


def _drop_eol(mapping: CommentedMap, key: str) -> None:
    """Remove the end-of-line comment of ``key``, keeping comment lines below it."""
    entry = mapping.ca.items.get(key)
    if entry is None or entry[2] is None:
        return
    value = entry[2].value
    if value.lstrip(" ").startswith("#"):
        following = value.split("\n", 1)[1] if "\n" in value else ""
        entry[2].value = "\n" + following


def _merge_workload(old: CommentedMap, new: CommentedMap) -> CommentedMap:
    writer_sites = {}
    for row in old.get("hot_rows") or []:
        if isinstance(row, dict) and "writer_sites" in row:
            writer_sites[str(row.get("name"))] = row["writer_sites"]
    for row in new.get("hot_rows") or []:
        if str(row["name"]) in writer_sites:
            row["writer_sites"] = writer_sites[str(row["name"])]
    for key in new:
        _put(old, key, new[key], tuple(new))
        _set_eol(old, key, new)
    return old


def _merge_galera(old: CommentedMap, new: CommentedMap) -> CommentedMap:
    for key in new:
        if key == "provider_options" and isinstance(old.get(key), dict):
            options = old[key]
            for option, value in new[key].items():
                if option in options and options[option] != value:
                    _drop_eol(options, option)  # it described the value being replaced
                options[option] = value
        else:
            _put(old, key, new[key], tuple(new))
        _set_eol(old, key, new)
    return old


def _with_provenance(section: CommentedMap, lines: list[str], indent: int) -> CommentedMap:
    if lines:
        section.ca.comment = None
        section.yaml_set_start_comment("\n".join(lines), indent=indent)
    return section


def render_sections(
    evidence: CollectedEvidence,
    existing: dict[str, CommentedMap | None] | None = None,
    indent: tuple[int, int, int] = (2, 4, 2),
) -> dict[str, str]:
    """YAML text of each section (``workload``, ``galera``), merged into ``existing``."""
    existing = existing or {}
    new_workload = _workload(evidence)
    new_galera = _galera(evidence)
    old_workload, old_galera = existing.get("workload"), existing.get("galera")
    workload = (
        _merge_workload(old_workload, new_workload)
        if isinstance(old_workload, CommentedMap)
        else new_workload
    )
    galera = (
        _merge_galera(old_galera, new_galera)
        if isinstance(old_galera, CommentedMap)
        else new_galera
    )
    _with_provenance(workload, _provenance(evidence), indent[0])
    _with_provenance(
        galera, [_plain(f"From advisor collect on {evidence.target}: what runs there.")], indent[0]
    )
    out = {}
    for name, section in (("workload", workload), ("galera", galera)):
        buffer = io.StringIO()
        _yaml(indent).dump({name: section}, buffer)
        out[name] = buffer.getvalue()
    return out


def evidence_to_yaml(evidence: CollectedEvidence) -> str:
    """The ``workload`` and ``galera`` sections as topology.yaml text, with their sources."""
    sections = render_sections(evidence)
    header = (
        "# The workload and galera sections of topology.yaml, measured by advisor collect.\n"
        "# Add sites (and links) to make a complete file, or use --into topology.yaml.\n"
    )
    return header + sections["workload"] + "\n" + sections["galera"]


def _section_spans(text: str, path: Path) -> tuple[dict[str, tuple[int, int]], dict[str, Any]]:
    """Line ranges [start, end) of the top-level ``workload`` and ``galera`` sections.

    A section ends where the next top-level key starts, less the blank lines and column-0
    comments just before that key (they introduce the next section, so they stay).
    """
    try:
        document = YAML().load(text)
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = Location(str(path), mark.line + 1, mark.column + 1) if mark else Location(str(path))
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise AdvisorError(f"not valid YAML: {problem}", where) from None
    if not isinstance(document, CommentedMap):
        raise AdvisorError(
            "expected a mapping at the top of the file (name:, sites:, ...)",
            Location(str(path), 1, 1),
        )
    if document.fa.flow_style() or any(document.lc.key(key)[1] != 0 for key in document):
        line, column = document.lc.line + 1, document.lc.col + 1
        raise AdvisorError(
            "--into updates a topology written in block style (one key a line); this one is "
            "a flow mapping ({...}) that advisor would have to rewrite whole: turn it into "
            "block style, or write the sections with -o FILE and copy them in",
            Location(str(path), line, column),
        )
    keys = list(document)
    lines = text.splitlines(keepends=True)
    spans = {}
    for name in _SECTIONS:
        if name not in document:
            continue
        start = document.lc.key(name)[0]
        position = keys.index(name)
        end = document.lc.key(keys[position + 1])[0] if position + 1 < len(keys) else len(lines)
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        spans[name] = (start, end)
    return spans, document


def _guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation of the user's file, for a faithful re-render.

    The mapping indent is that of the first line nested under a ``key:`` line that is not a
    list item; the offset is the column of the first ``-`` under a ``key:`` line, relative to
    that key. Common style (2, 4, 2) where the file does not say.
    """
    mapping, offset = None, None
    lines = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    for above, line in itertools.pairwise(lines):
        if not above.rstrip().endswith(":"):
            continue
        step = (len(line) - len(line.lstrip())) - (len(above) - len(above.lstrip()))
        if line.lstrip().startswith("- "):
            offset = step if offset is None and step >= 0 else offset
        elif mapping is None and step > 0:
            mapping = step
    mapping = mapping or 2
    offset = 2 if offset is None else offset
    return (mapping, max(mapping, offset + 2), offset)


def merge_into(path: Path, evidence: CollectedEvidence) -> None:
    """Update only ``workload`` and ``galera`` in the user's topology.yaml, atomically.

    Everything outside those two sections is kept byte for byte, comments included; inside
    them, the keys collect measures are replaced and the others kept.
    """
    from advisor.inputs.loading import parse_topology

    path = Path(path)
    text, spans = _read_for_update(path)
    lines = text.splitlines(keepends=True)
    existing: dict[str, CommentedMap | None] = {}
    for name, (start, end) in spans.items():
        chunk = YAML().load("".join(lines[start:end]))
        existing[name] = chunk.get(name) if isinstance(chunk, CommentedMap) else None
    rendered = render_sections(evidence, existing, _guess_indent(text))
    # Splice from the bottom up so earlier line numbers stay valid.
    for name, (start, end) in sorted(spans.items(), key=lambda item: -item[1][0]):
        lines[start:end] = [rendered[name]]
    missing = [name for name in _SECTIONS if name not in spans]
    if missing:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        for name in missing:
            lines.append("\n" + rendered[name])
    updated = "".join(lines)
    try:
        parse_topology(updated, source=path)
    except AdvisorError as error:
        raise AdvisorError(
            f"not updated: the result would not load ({error}); the file is as it was",
            Location(str(path)),
        ) from None
    write_text_atomic(path, updated)


def check_into(path: Path) -> None:
    """Refuse now, before collecting, a file :func:`merge_into` would refuse later.

    Raises
    ------
    AdvisorError
        The file is missing, not a valid topology, or not one whose sections can be
        replaced line by line (a top level in flow style).
    """
    _read_for_update(Path(path))


def _read_for_update(path: Path) -> tuple[str, dict[str, tuple[int, int]]]:
    """The topology's text, checked as any topology is, and its sections' line ranges."""
    from advisor.inputs.loading import Limits, parse_topology, read_text_file

    if not path.exists():
        raise AdvisorError(
            "no such file to update (use -o to write a new one)", Location(str(path))
        )
    # The same checks as any topology: a regular UTF-8 file of bounded size (no FIFO, no
    # device), and YAML whose depth and aliases are bounded, before ruamel.yaml reads it.
    text = read_text_file(path, Limits().file_bytes, what="topology file")
    parse_topology(text, source=path)
    spans, _document = _section_spans(text, path)
    return text, spans


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` atomically through :func:`advisor.safe_write.write_file`.

    Only a regular file or a new name is written: ``-o /dev/null`` or a FIFO is refused.
    """
    from advisor.safe_write import write_file

    write_file(path, text)
