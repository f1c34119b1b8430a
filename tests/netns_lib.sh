# Test hosts on this machine: network namespaces joined by a bridge that
# lives in a namespace of its own, so that nothing is added to the root
# namespace and no packet leaves the machine. Sourced by the tests and
# benchmarks that run a head and its workers on them.
#
#   netns_hosts TAG NET N   makes N hosts NET.1 .. NET.N (NET: three octets)
#                           named sl<TAG>1 .. sl<TAG>N, in ${netns_host[@]},
#                           each behind port p<TAG>I of the bridge; returns
#                           1 (with why in $netns_why) where it cannot
#   netns_shape TAG I RATE  shapes what host I receives to RATE (tbf: 1gbit)
#   netns_cut TAG I up|down cuts host I's link (no FIN, no RST) or heals it
#   netns_remove            removes every namespace netns_hosts made
netns_host=()
netns_made=()
netns_why=
netns_hosts() {
  local tag=$1 net=$2 n=$3 i ns sw=sl$1s
  [ "$(id -u)" -eq 0 ] || { netns_why="needs root for network namespaces"; return 1; }
  command -v ip >/dev/null && command -v tc >/dev/null || { netns_why="no ip or tc"; return 1; }
  ip netns add "$sw" 2>/dev/null || { netns_why="ip netns add refused here"; return 1; }
  netns_made+=("$sw")
  ip -n "$sw" link add br0 type bridge 2>/dev/null && ip -n "$sw" link set br0 up ||
    { netns_why="no bridge in a namespace"; return 1; }
  for ((i = 1; i <= n; i++)); do
    ns=sl$tag$i
    ip netns add "$ns" || { netns_why="cannot add namespace $ns"; return 1; }
    netns_made+=("$ns")
    ip -n "$sw" link add "p$tag$i" type veth peer name eth0 netns "$ns" 2>/dev/null ||
      { netns_why="no veth for $ns"; return 1; }
    ip -n "$sw" link set "p$tag$i" master br0 up
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    netns_host+=("$ns")
  done
}
netns_shape() {
  ip netns exec "sl$1s" tc qdisc replace dev "p$1$2" root tbf rate "$3" burst 256kb latency 50ms 2>/dev/null ||
    { netns_why="tc tbf refused here"; return 1; }
}
netns_cut() {
  ip -n "sl$1s" link set "p$1$2" "$3"
}
netns_remove() {
  local ns
  for ns in "${netns_made[@]}"; do ip netns del "$ns" 2>/dev/null; done
  netns_made=()
}
