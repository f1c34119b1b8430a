#!/usr/bin/env bash
# Installs the Debian packages sluice builds against, then configures and
# builds it. Does nothing that is already done: packages present are not
# reinstalled, and an existing build directory is only rebuilt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SLUICE_BUILD_DIR:-$here/build}

packages=(
  build-essential cmake pkg-config
  libsimgrid-dev libcsv-dev libhwloc-dev hwloc libinih-dev libglpk-dev
  libturbojpeg0-dev libcmocka-dev libzmq3-dev gnuplot-nox valgrind
  procps iproute2 # pgrep, pkill; ip and tc for the tests' test hosts
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${SLUICE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
