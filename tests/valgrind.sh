#!/usr/bin/env bash
# Memcheck on a short run of each engine: sluice run and sluice sim on
# fig9-small. Fails on any memory error or any leak of ours (definite,
# indirect or possible); third-party leaks are suppressed in
# tests/valgrind.supp. About 45 s, so not part of CTest:
#   bash tests/valgrind.sh build/sluice [SOURCE_DIR]
set -u
sluice=$1
src=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
memcheck=(valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible
  --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99
  --suppressions="$src/tests/valgrind.supp" --num-callers=30)
fails=0
one() { # NAME ARGS...: one sluice command under memcheck
  local name=$1
  shift
  "${memcheck[@]}" "$sluice" "$@" --quiet --out "$tmp/$name" >"$tmp/$name.log" 2>&1
  local rc=$?
  # a forked simulator child reports on its own: every process must be clean
  local errors lost
  errors=$(awk '/ERROR SUMMARY:/{n += $4} END{print n + 0}' "$tmp/$name.log")
  lost=$(awk '/(definitely|indirectly|possibly) lost:/{gsub(",", "", $4); n += $4} END{print n + 0}' "$tmp/$name.log")
  if [ $rc -eq 0 ] && [ "$errors" -eq 0 ] && [ "$lost" -eq 0 ]; then
    echo "ok   $name: 0 errors, 0 bytes lost"
  else
    echo "FAIL $name: exit $rc, $errors errors, $lost bytes lost; log:"
    grep -E "==[0-9]+==" "$tmp/$name.log" | head -80
    fails=$((fails + 1))
  fi
}
one run run fig9-small --cluster fig9 --time-scale 0.1
one sim sim fig9-small
exit $((fails > 0))
