"""Plain samples files: one value in ms per line, comments, and every bad line named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from advisor.errors import AdvisorError
from advisor.measurements import parse_file, parse_samples

DATA = Path(__file__).parent / "data" / "measurements"


def test_values_comments_and_blank_lines() -> None:
    parsed = parse_samples((DATA / "samples.txt").read_text(encoding="utf-8"))
    assert parsed.tool == "samples"
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.dtype == np.float64
    assert parsed.samples_ms.tolist() == [8.1, 8.3, 8.2, 9.9]
    assert parsed.percentiles_ms is None
    assert (parsed.transmitted, parsed.received, parsed.loss, parsed.duplicates) == (
        None, None, None, 0,
    )  # fmt: skip


def test_a_million_samples_round_trip_exactly() -> None:
    values = np.round(np.random.default_rng(3).gamma(4, 3, 1_000_000) + 40, 3)
    text = "\n".join(f"{v:.3f}" for v in values.tolist()) + "\n"
    parsed = parse_samples(text)
    assert parsed.samples_ms is not None
    np.testing.assert_array_equal(parsed.samples_ms, values)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "",
            "s.txt: no round-trip samples found; expected one round-trip time in ms per line, "
            "e.g. '49.6'",
        ),
        (
            "# only a comment\n\n",
            "s.txt: no round-trip samples found; expected one round-trip time in ms per line, "
            "e.g. '49.6'",
        ),
        (
            "8.1\n8.3 ms\n8.2\n",
            "s.txt:2: expected one round-trip time in ms per line (a plain number), found '8.3 ms'",
        ),
        (
            "8.1\n8.2 8.3\n",
            "s.txt:2: expected one round-trip time in ms per line (a plain number), "
            "found '8.2 8.3'",
        ),
        (
            "8.1\n\n# note\n-0.5\n",
            "s.txt:4: a round-trip time must be a finite number of ms >= 0, found '-0.5'",
        ),
        (
            "8.1\nnan\n",
            "s.txt:2: a round-trip time must be a finite number of ms >= 0, found 'nan'",
        ),
        (
            "8.1\ninf  # far away\n",
            "s.txt:2: a round-trip time must be a finite number of ms >= 0, found 'inf'",
        ),
    ],
)
def test_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_samples(text, source="s.txt")
    assert str(caught.value) == message


def test_crlf_file(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_bytes(b"# ms\r\n8.1\r\n8.3\r\n\r\n")
    parsed = parse_file(path, "samples")
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [8.1, 8.3]


def test_crlf_error_line_number(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_bytes(b"8.1\r\nabc\r\n")
    with pytest.raises(AdvisorError) as caught:
        parse_file(path, "samples")
    assert str(caught.value) == (
        f"{path}:2: expected one round-trip time in ms per line (a plain number), found 'abc'"
    )
