#!/usr/bin/env bash
# README's second command, and what CI runs: installs what the build and
# tests need when it is missing, configures and builds build/, then runs
# every test labelled unit or sim (the ones that need no GPU, MPI or
# display). Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --build

cmake -S . -B build -G Ninja
cmake --build build
ctest --test-dir build --output-on-failure --no-tests=error --timeout 600 -j2 -L '^(unit|sim)$'
