"""Plain sample files: one round-trip time in milliseconds per line.

Blank lines and ``#`` comments (whole-line or trailing) are allowed; anything else is an
error that names the line. Parsing is vectorised with numpy's variable-width strings, so a
file of a million samples reads in a fraction of a second.
"""

from __future__ import annotations

__all__ = ["parse_samples"]

import re

import numpy as np

from advisor.measurements.result import ParsedMeasurement, source_error

_COMMENT = re.compile(r"#[^\n]*")
_NO_SAMPLES = (
    "no round-trip samples found; expected one round-trip time in ms per line, e.g. '49.6'"
)


def parse_samples(text: str, *, source: str = "<text>") -> ParsedMeasurement:
    """Read one round-trip time [ms] per line.

    Parameters
    ----------
    text
        The file's content.
    source
        Name of the file, for error messages.

    Returns
    -------
    ParsedMeasurement
        ``samples_ms`` [ms] in file order; loss and counts are unknown (``None``).

    >>> parse_samples("# paris-frankfurt\\n8.1\\n8.3  # warm\\n\\n9.9\\n").samples_ms.tolist()
    [8.1, 8.3, 9.9]
    """
    lines = np.array(_COMMENT.sub("", text).split("\n"), dtype=np.dtypes.StringDType())
    cells = np.strings.strip(lines)
    filled = np.flatnonzero(cells != "")
    if filled.size == 0:
        raise source_error(_NO_SAMPLES, source)
    try:
        samples_ms = cells[filled].astype(np.float64)
    except ValueError:
        samples_ms = _one_by_one(cells, filled, source)
    bad = ~np.isfinite(samples_ms) | (samples_ms < 0)
    if bad.any():
        index = int(filled[np.argmax(bad)])
        raise source_error(
            f"a round-trip time must be a finite number of ms >= 0, found {str(cells[index])!r}",
            source,
            index + 1,
        )
    return ParsedMeasurement(
        tool="samples",
        samples_ms=samples_ms,
        percentiles_ms=None,
        transmitted=None,
        received=None,
        duplicates=0,
        loss=None,
        request_bytes=None,
        response_bytes=None,
        payload_bytes=None,
        notes=(),
    )


def _one_by_one(
    cells: np.ndarray[tuple[int], np.dtypes.StringDType], filled: np.ndarray, source: str
) -> np.ndarray:
    """Convert line by line, to name the first line that is not a number (error path)."""
    values = []
    for index in filled.tolist():
        try:
            values.append(float(str(cells[index])))
        except ValueError:
            raise source_error(
                "expected one round-trip time in ms per line (a plain number), "
                f"found {str(cells[index])!r}",
                source,
                index + 1,
            ) from None
    return np.array(values, dtype=np.float64)
