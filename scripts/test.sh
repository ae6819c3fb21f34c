#!/usr/bin/env bash
# README's second command, and what CI runs: installs what the build and
# tests need when it is missing, configures and builds build/, then runs
# every test labelled unit, sim or gui (the ones that need no GPU), and mpi
# when mpirun is there and the mpi backend was built.
# The gui tests need an X display: without one, a private Xvfb is started
# for them and stopped on exit. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --test

cmake -S . -B build -G Ninja
cmake --build build

if [[ -z "${DISPLAY:-}" ]]; then
  if command -v Xvfb >/dev/null; then
    # -displayfd: Xvfb picks a free display itself and writes its number
    # here once it accepts clients, so parallel runs never collide.
    display_file=$(mktemp)
    Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
    xvfb_pid=$!
    trap 'kill "$xvfb_pid" 2>/dev/null || true; rm -f "$display_file"' EXIT
    for _ in $(seq 100); do
      [[ -s "$display_file" ]] && break
      sleep 0.1
    done
    if [[ -s "$display_file" ]]; then
      export DISPLAY=":$(head -n 1 "$display_file")"
      echo "test.sh: gui tests on Xvfb display $DISPLAY"
    else
      echo "test.sh: Xvfb did not start; the gui tests that need a window will be skipped"
    fi
  else
    echo "test.sh: no DISPLAY and no Xvfb; the gui tests that need a window will be skipped"
  fi
fi

labels='unit|sim|gui'
# The mpi tests start their jobs through `shardlab-cli mpirun`, which sets
# what OpenMPI needs as root in a container.
if command -v mpirun >/dev/null &&
   ctest --test-dir build -N -L '^mpi$' | grep 'Total Tests: [1-9]' >/dev/null; then
  labels+='|mpi'
else
  echo "test.sh: no mpirun or no mpi backend in this build; the mpi tests are skipped"
fi
ctest --test-dir build --output-on-failure --no-tests=error --timeout 600 -j2 -L "^(${labels})\$"
