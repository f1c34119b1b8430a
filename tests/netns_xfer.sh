#!/usr/bin/env bash
# Partition transfers between two test hosts: network namespaces joined by
# a bridge in a third, so nothing is added to the root namespace and no
# packet leaves the machine. The server's link is shaped to 1 Gbit/s with
# tbf. Checks, with tests/xfer_peer on each side:
#   - a 40 MB partition arrives whole, three times, over the shaped link,
#     no faster than the link allows (the shaping holds), and prints its
#     rate beside a raw TCP stream's over the same link;
#   - with the link cut (the bridge's port down, no FIN, no RST), a fetch
#     gives up after its timeout, not before, with the cut-link status;
#   - once the link is back, a fetch goes through again;
#   - no process of the test is left behind.
# Needs root and network namespaces; skipped (exit 77) where either is
# missing.
#
# usage: tests/netns_xfer.sh XFER_PEER
set -uo pipefail
peer=${1:?usage: tests/netns_xfer.sh XFER_PEER}
[ -x "$peer" ] || { echo "netns_xfer: no program at $peer" >&2; exit 2; }
command -v ip >/dev/null && command -v tc >/dev/null || { echo "netns_xfer: skipped: no ip or tc" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "netns_xfer: skipped: needs root for network namespaces" >&2; exit 77; }

tag=x$$
sw=sl${tag}s a=sl${tag}a b=sl${tag}b
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for ns in "$a" "$b" "$sw"; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT

if ! ip netns add "$sw" 2>/dev/null; then
  echo "netns_xfer: skipped: ip netns add refused here" >&2
  exit 77
fi
fail() { echo "netns_xfer: FAIL: $*" >&2; exit 1; }
# a machine that makes namespaces but no bridge or veth in them cannot
# host the test either: skipped, like one that makes no namespace
skip() { echo "netns_xfer: skipped: $*" >&2; exit 77; }
ip -n "$sw" link add br0 type bridge 2>/dev/null && ip -n "$sw" link set br0 up || skip "no bridge in a namespace"
i=1
for ns in "$a" "$b"; do
  ip netns add "$ns" || skip "cannot add namespace $ns"
  ip -n "$sw" link add "v$tag$i" type veth peer name eth0 netns "$ns" 2>/dev/null || skip "no veth for $ns"
  ip -n "$sw" link set "v$tag$i" master br0 up
  ip -n "$ns" addr add "10.79.0.$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  i=$((i + 1))
done
ip netns exec "$a" tc qdisc replace dev eth0 root tbf rate 1gbit burst 256kb latency 50ms 2>/dev/null ||
  skip "tc tbf refused here"

mb=40
ip netns exec "$a" "$peer" serve tcp://10.79.0.1:5555 "$mb" &
pids+=($!)
ip netns exec "$a" "$peer" serve-raw 10.79.0.1 5556 "$mb" &
pids+=($!)
sleep 0.3

# whole, over the shaped link, and no faster than it
out=$(ip netns exec "$b" "$peer" fetch tcp://10.79.0.1:5555 "$mb" 3) || fail "the transfer failed"
xfer=${out#rate }
raw=$(ip netns exec "$b" "$peer" fetch-raw 10.79.0.1 5556 "$mb" 3) || fail "the raw stream failed"
raw=${raw#rate }
echo "netns_xfer: 1 Gbit/s link: transfer $xfer MB/s, raw TCP $raw MB/s, ratio $(awk -v x="$xfer" -v r="$raw" 'BEGIN{printf "%.3f", x/r}')"
awk -v x="$xfer" 'BEGIN{exit !(x <= 125 * 1.1)}' || fail "the transfer ran at $xfer MB/s, past the 125 MB/s link"

# a cut link: no chunk comes, the fetch gives up after its timeout
ip -n "$sw" link set "v${tag}1" down
t0=$(date +%s.%N)
ip netns exec "$b" "$peer" fetch tcp://10.79.0.1:5555 "$mb" 1 300 2>/dev/null
rc=$?
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')
[ "$rc" -eq 3 ] || fail "a fetch over a cut link ended with $rc, not 3 (gave up)"
awk -v t="$t" 'BEGIN{exit !(t >= 0.3 && t < 10)}' || fail "the fetch over a cut link gave up after $t s, timeout 0.3 s"
echo "netns_xfer: cut link: the fetch gave up after $t s (timeout 0.3 s)"

# healed: fetches go through again
ip -n "$sw" link set "v${tag}1" up
out=$(ip netns exec "$b" "$peer" fetch tcp://10.79.0.1:5555 "$mb" 1 5000) || fail "no transfer after the link came back"
echo "netns_xfer: healed link: transfer ${out#rate } MB/s"

cleanup
trap - EXIT
for p in "${pids[@]}"; do
  kill -0 "$p" 2>/dev/null && fail "process $p outlived the test"
done
echo "netns_xfer: ok"
