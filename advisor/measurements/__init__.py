"""Measurement logs (ping, netperf TCP_RR, sockperf, plain samples) into round trips [ms].

>>> m = parse_measurement("8.1\\n8.3\\n", "samples")
>>> m.tool, m.samples_ms.tolist()
('samples', [8.1, 8.3])
"""

from advisor.measurements.netperf import parse_netperf
from advisor.measurements.ping import parse_ping
from advisor.measurements.reading import FORMATS, parse_file, parse_measurement
from advisor.measurements.result import ParsedMeasurement, percentile_key
from advisor.measurements.samples import parse_samples
from advisor.measurements.sockperf import parse_sockperf

__all__ = [
    "FORMATS",
    "ParsedMeasurement",
    "parse_file",
    "parse_measurement",
    "parse_netperf",
    "parse_ping",
    "parse_samples",
    "parse_sockperf",
    "percentile_key",
]
