#!/usr/bin/env bash
# build.sh OUT_DIR: builds the MicroOcpp charger simulator from src/ (beside this script, never
# written) into a folder of OUT_DIR named after src/'s path, and prints the binary's path. Keyed by
# path because cmake binds a build folder to one source folder: checkouts sharing one node_modules
# (worktrees) each get their own. Needs cmake and g++ (Debian packages). About a minute on 2 cores.
# Building again into the same OUT_DIR reuses what is there.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: build.sh OUT_DIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KEY=$(printf '%s' "$HERE/src" | sha256sum | cut -c1-12)
mkdir -p "$1/$KEY"; OUT=$(cd "$1/$KEY" && pwd)
cmake -S "$HERE/src" -B "$OUT" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/cmake.log" 2>&1 \
  || { tail -n 20 "$OUT/cmake.log" >&2; exit 1; }
cmake --build "$OUT" -j 2 --target mo_simulator >"$OUT/build.log" 2>&1 \
  || { tail -n 20 "$OUT/build.log" >&2; exit 1; }
echo "$OUT/mo_simulator"
