#!/bin/sh
# config/sysctl-advisor.sh
# Kernel settings for topology "dr-site-durable" (single_cluster).
# Run as root on every Galera node, garbd host and ProxySQL host: it writes
#   /etc/sysctl.d/90-advisor.conf (or the file given as first argument) with, for each value, the
#   larger of the host's current one and the minimum below, so a host tuned higher keeps its
#   tuning, then loads it (unless the second argument is --no-load).
# Usage: sh sysctl-advisor.sh [CONF] [--no-load]
set -eu
CONF="${1:-/etc/sysctl.d/90-advisor.conf}"
LOAD="${2:-}"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT

# raise KEY MINIMUM...: the larger of the current value and the minimum, number by number
# (tcp_rmem and tcp_wmem hold three).
raise() {
  key="$1"
  shift
  current="$(sysctl -n "$key" 2>/dev/null || true)"
  value="$(printf '%s\n%s\n' "$current" "$*" | awk '
    NR == 1 { n = split($0, cur) }
    NR == 2 { m = split($0, min); out = ""
              for (i = 1; i <= m; i++) {
                v = (i <= n && cur[i] + 0 > min[i] + 0) ? cur[i] : min[i]
                out = out (i > 1 ? " " : "") v
              }
              print out }')"
  echo "$key = $value" >> "$tmp"
}

# set KEY VALUE: a switch, written as it is.
set_exact() {
  echo "$1 = $2" >> "$tmp"
}

echo "# written by config/sysctl-advisor.sh (advisor): minimums, never below the host's own" > "$tmp"
# Linux restarts a connection idle longer than one RTO from the initial window of 10 segments
#   (RFC 6928; Linux ip-sysctl docs, tcp_slow_start_after_idle); Galera links idle between bursts
#   of writes: a 16,000-byte write set (p99) over warsaw-2-krakow-dr takes 10.7 ms after idling
#   against 5.4 ms with an open window (TCP model)
set_exact net.ipv4.tcp_slow_start_after_idle '0'
# largest receive buffer a program may ask for: bandwidth-delay product of the worst WAN link
#   warsaw-2-krakow-dr: 1000 Mbit/s x 5.9 ms (RTT p99) = 731,262 bytes; Linux advertises about half
#   a buffer as window, so 1,462,525 bytes; Linux default 212,992
raise net.core.rmem_max '1462525'
# the same for send buffers (1,462,525 bytes); Linux default 212,992
raise net.core.wmem_max '1462525'
# autotuned receive buffers grow up to the third value: 1,462,525 bytes needed; Linux's defaults
#   (4096 131072 6291456) where larger
raise net.ipv4.tcp_rmem '4096 131072 6291456'
# autotuned send buffers grow up to the third value: 1,462,525 bytes needed; Linux's defaults
#   (4096 16384 4194304) where larger
raise net.ipv4.tcp_wmem '4096 16384 4194304'

mkdir -p "$(dirname "$CONF")"
cat "$tmp" > "$CONF"
echo "wrote $CONF:"
cat "$CONF"
if [ "$LOAD" != "--no-load" ]; then
  sysctl -p "$CONF"
fi
