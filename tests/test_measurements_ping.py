"""ping parser: iputils and BSD logs, summaries, gaps, duplicates, wrap-around, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from advisor.errors import AdvisorError
from advisor.measurements import parse_file, parse_ping

DATA = Path(__file__).parent / "data" / "measurements"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_iputils_with_summary_counts_from_the_summary() -> None:
    parsed = parse_ping(read("ping_iputils.txt"))
    assert parsed.tool == "ping-iputils"
    # seq 3 answered twice: the (DUP!) is counted, not sampled; seq 4 is missing
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [49.6, 48.1, 47.9, 51.2, 46.2, 49.7, 120.0, 48.5, 48.3]
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (10, 9, 1)
    assert parsed.loss == pytest.approx(1 / 10)
    assert parsed.payload_bytes == 56
    # the rtt line, as iputils prints it (its avg includes the duplicate)
    assert parsed.percentiles_ms == {"min": 46.2, "mean": 55.75, "max": 120.0}
    assert parsed.notes == ()


def test_cut_log_with_timestamps_counts_from_sequence_numbers() -> None:
    parsed = parse_ping(read("ping_iputils_D_cut.txt"))
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [4.12, 4.31, 4.08, 5.77, 4.19]
    # probes 1..9 were sent (the last line names 9); replies came for 1, 2, 4, 7, 8;
    # 3 and 9 had no answer, 5 and 6 got Destination Host Unreachable
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (9, 5, 1)
    assert parsed.loss == pytest.approx(4 / 9)
    assert parsed.percentiles_ms is None
    assert any("no ping summary" in note for note in parsed.notes)
    assert any(note.startswith("5 line(s) name a probe without a reply") for note in parsed.notes)


def test_first_probes_lost_are_counted_when_the_banner_shows_the_start() -> None:
    text = (
        "PING h (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=3 ttl=63 time=4.12 ms\n"
        "64 bytes from 10.0.0.2: icmp_seq=4 ttl=63 time=4.20 ms\n"
    )
    parsed = parse_ping(text)
    assert (parsed.transmitted, parsed.received) == (4, 2)  # iputils starts at icmp_seq=1
    assert parsed.loss == pytest.approx(0.5)
    without_banner = parse_ping(text.split("\n", 1)[1])
    assert (without_banner.transmitted, without_banner.received) == (2, 2)


def test_bsd_log_detected_with_its_timeouts() -> None:
    parsed = parse_ping(read("ping_bsd.txt"))
    assert parsed.tool == "ping-bsd"
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [12.345, 11.802, 13.110, 12.007]
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (5, 4, 0)
    assert parsed.loss == pytest.approx(0.2)
    assert parsed.payload_bytes == 56
    assert parsed.percentiles_ms == {"min": 11.802, "mean": 12.316, "max": 13.110}


def test_bsd_log_cut_before_its_summary_counts_from_zero_and_timeouts() -> None:
    text = read("ping_bsd.txt").split("\n--- ")[0] + "Request timeout for icmp_seq 5\n"
    parsed = parse_ping(text)
    assert parsed.tool == "ping-bsd"
    # BSD numbers from 0: probes 0..5 sent, 2 and 5 timed out
    assert (parsed.transmitted, parsed.received) == (6, 4)
    assert parsed.loss == pytest.approx(2 / 6)


def _reply(seq: int, time_ms: str) -> str:
    return f"64 bytes from 10.0.0.2: icmp_seq={seq} ttl=63 time={time_ms} ms"


def test_sequence_numbers_wrap_at_65536() -> None:
    # a log that starts mid-run: 65530..65534, then 0, a late 65535, 1, (2 lost), 3, 4, 5
    seqs = [65530, 65531, 65532, 65533, 65534, 0, 65535, 1, 3, 4, 5]
    text = "\n".join(_reply(seq, f"{40 + i}.5") for i, seq in enumerate(seqs)) + "\n"
    parsed = parse_ping(text)
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (12, 11, 0)
    assert parsed.loss == pytest.approx(1 / 12)
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [40.5 + i for i in range(11)]
    assert "icmp_seq wrapped past 65535 1 time(s); unwrapped" in parsed.notes


def test_long_generated_log_with_wraps_gaps_and_duplicates() -> None:
    rng = np.random.default_rng(7)
    n = 150_000  # wraps twice
    lost = rng.random(n) < 0.01
    duplicate = (rng.random(n) < 0.002) & ~lost
    rtt_ms = np.round(20 + rng.gamma(2.0, 1.0, n), 1)
    lines = ["PING h (10.0.0.2) 56(84) bytes of data."]
    for i in np.flatnonzero(~lost):
        reply = f"[{1.7e9 + i:.6f}] {_reply(int(i + 1) % 65536, f'{rtt_ms[i]:.1f}')}"
        lines += [reply, reply + " (DUP!)"] if duplicate[i] else [reply]
    parsed = parse_ping("\n".join(lines) + "\n")
    last = int(np.flatnonzero(~lost)[-1])
    assert parsed.transmitted == last + 1  # trailing lost probes cannot be seen
    assert parsed.received == int((~lost).sum())
    assert parsed.duplicates == int(duplicate.sum())
    assert parsed.samples_ms is not None
    np.testing.assert_array_equal(parsed.samples_ms, rtt_ms[~lost])
    assert "icmp_seq wrapped past 65535 2 time(s); unwrapped" in parsed.notes


def test_summary_wins_over_counted_replies_and_says_so() -> None:
    text = read("ping_iputils.txt").replace(
        "10 packets transmitted, 9 received", "12 packets transmitted, 11 received"
    )
    parsed = parse_ping(text)
    assert (parsed.transmitted, parsed.received) == (12, 11)
    assert (
        "the summary says 11 received but the log holds 9 distinct replies; "
        "counts taken from the summary"
    ) in parsed.notes


def test_quiet_run_keeps_the_summary_min_avg_max() -> None:
    text = (
        "PING h (10.0.0.2) 56(84) bytes of data.\n\n--- h ping statistics ---\n"
        "100 packets transmitted, 98 received, 2% packet loss, time 99120ms\n"
        "rtt min/avg/max/mdev = 9.552/10.004/68.598/3.055 ms\n"
    )
    parsed = parse_ping(text)
    assert parsed.samples_ms is None
    assert parsed.percentiles_ms == {"min": 9.552, "mean": 10.004, "max": 68.598}
    assert parsed.loss == pytest.approx(0.02)


def test_reply_with_bad_checksum_is_not_a_sample() -> None:
    text = (
        _reply(1, "4.1") + "\n" + _reply(2, "4.2") + " (BAD CHECKSUM!)\n" + _reply(3, "4.3") + "\n"
    )
    parsed = parse_ping(text)
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [4.1, 4.3]
    assert "1 reply(ies) with a bad checksum not counted" in parsed.notes


def test_iputils_precisions_are_read_exactly() -> None:
    times = ["0.045", "4.12", "49.6", "120", "1234", "0.5"]
    text = "\n".join(_reply(i + 1, t) for i, t in enumerate(times))  # no final newline
    parsed = parse_ping(text)
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [float(t) for t in times]


def test_busybox_seq_and_ipv6_banner() -> None:
    text = (
        "PING ::1(::1) 56 data bytes\n"
        "64 bytes from ::1: icmp_seq=1 ttl=64 time=0.030 ms\n"
        "64 bytes from 8.8.8.8: seq=2 ttl=56 time=13.292 ms\n"
    )
    parsed = parse_ping(text)
    assert parsed.tool == "ping-iputils"  # "::1(::1) 56 data bytes" has no BSD colon
    assert parsed.payload_bytes == 56
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == [0.030, 13.292]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "",
            "log.txt: no round-trip samples found in ping output; expected lines like "
            "'64 bytes from ...: icmp_seq=1 ttl=63 time=49.6 ms'",
        ),
        (
            "hello\nworld = 3\n",
            "log.txt: no round-trip samples found in ping output; expected lines like "
            "'64 bytes from ...: icmp_seq=1 ttl=63 time=49.6 ms'",
        ),
        (
            "PING h (10.0.0.2): 56 data bytes\nRequest timeout for icmp_seq 0\n\n"
            "--- h ping statistics ---\n1 packets transmitted, 0 packets received, "
            "100.0% packet loss\n",
            "log.txt: no round-trip samples found in ping output (1 sent, 0 received); "
            "expected lines like '64 bytes from ...: icmp_seq=1 ttl=63 time=49.6 ms'",
        ),
        (
            "PING h (10.0.0.2) 56(84) bytes of data.\n"
            "64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=-1.0 ms\n",
            "log.txt:2: cannot read the round trip of this reply: expected 'time=<ms> ms' "
            "with a non-negative number, found "
            "'64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=-1.0 ms'",
        ),
        (
            _reply(1, "4.1") + "\n" + _reply(2, "nan") + "\n",
            "log.txt:2: cannot read the round trip of this reply: expected 'time=<ms> ms' "
            "with a non-negative number, found "
            "'64 bytes from 10.0.0.2: icmp_seq=2 ttl=63 time=nan ms'",
        ),
        (
            _reply(1, "4.1") + "\n" + _reply(2, "4.2").replace(" ms", "ms") + "\n",
            "log.txt:2: cannot read the round trip of this reply: expected 'time=<ms> ms' "
            "with a non-negative number, found "
            "'64 bytes from 10.0.0.2: icmp_seq=2 ttl=63 time=4.2ms'",
        ),
        (
            "--- h ping statistics ---\n10 packets transmitted, nine received\n",
            "log.txt:2: cannot read the ping summary: expected 'N packets transmitted, "
            "M received, X% packet loss', found '10 packets transmitted, nine received'",
        ),
    ],
)
def test_errors_name_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_ping(text, source="log.txt")
    assert str(caught.value) == message


def test_two_runs_in_one_file_are_refused() -> None:
    text = read("ping_iputils.txt") * 2
    with pytest.raises(AdvisorError) as caught:
        parse_ping(text, source="log.txt")
    assert str(caught.value) == (
        "log.txt: the file holds 2 ping runs; expected the output of one ping run"
    )


def test_crlf_file_parses_like_lf(tmp_path: Path) -> None:
    path = tmp_path / "ping.txt"
    path.write_bytes(read("ping_iputils_D_cut.txt").replace("\n", "\r\n").encode())
    crlf = parse_file(path, "ping")
    lf = parse_ping(read("ping_iputils_D_cut.txt"))
    assert crlf.samples_ms is not None and lf.samples_ms is not None
    assert crlf.samples_ms.tolist() == lf.samples_ms.tolist()
    assert (crlf.transmitted, crlf.received, crlf.duplicates) == (9, 5, 1)
    assert crlf.payload_bytes == 56


def test_error_in_a_crlf_file_shows_the_line_without_its_cr(tmp_path: Path) -> None:
    path = tmp_path / "ping.txt"
    path.write_bytes(
        b"PING h (10.0.0.2) 56(84) bytes of data.\r\n" + _reply(1, "x").encode() + b"\r\n"
    )
    with pytest.raises(AdvisorError) as caught:
        parse_file(path, "ping")
    assert str(caught.value) == (
        f"{path}:2: cannot read the round trip of this reply: expected 'time=<ms> ms' with a "
        "non-negative number, found '64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=x ms'"
    )


def test_samples_are_read_only() -> None:
    parsed = parse_ping(read("ping_iputils.txt"))
    assert parsed.samples_ms is not None
    with pytest.raises(ValueError, match="read-only"):
        parsed.samples_ms[0] = 0.0


def test_the_first_bad_reply_in_the_file_is_reported_with_its_line() -> None:
    bad = read("ping_iputils.txt").replace("time=46.2 ms", "time=46.2ms")
    with pytest.raises(AdvisorError, match=r"^log\.txt:7: "):
        parse_ping(bad, source="log.txt")
    lines = [_reply(seq, "4.1") for seq in range(1, 40)]
    lines[29], lines[16] = _reply(30, "x"), _reply(17, "4.1 s")
    with pytest.raises(AdvisorError, match=r"^log\.txt:17: .*icmp_seq=17 ttl=63 time=4\.1 s ms'$"):
        parse_ping("\n".join(lines) + "\n", source="log.txt")
