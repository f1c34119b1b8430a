#!/usr/bin/env bash
# A stand-in for ssh between test hosts that are network namespaces on this
# machine: `ns_ssh.sh HOST COMMAND` runs COMMAND with sh in the namespace
# whose interface has address HOST, as `ssh HOST COMMAND` would on a real
# host. `sluice run --launch ssh` calls it when SLUICE_SSH names it.
set -u
host=${1:?usage: ns_ssh.sh HOST COMMAND}
cmd=${2:?usage: ns_ssh.sh HOST COMMAND}
for ns in $(ip netns list | awk '{print $1}'); do
  if ip -n "$ns" -4 -o addr show 2>/dev/null | grep -q "inet $host/"; then
    exec ip netns exec "$ns" sh -c "$cmd"
  fi
done
echo "ns_ssh: no test host has address $host" >&2
exit 255
