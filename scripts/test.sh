#!/usr/bin/env bash
# README's second command, and what CI runs: configures and builds build/,
# then runs every test labelled unit or sim (the ones that need no GPU, MPI
# or display). Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in cmake ninja g++; do
  if ! command -v "$tool" >/dev/null; then
    echo "test.sh: $tool is missing; run scripts/install-deps.sh (or scripts/setup.sh) first" >&2
    exit 1
  fi
done

cmake -S . -B build -G Ninja
cmake --build build
ctest --test-dir build --output-on-failure --no-tests=error --timeout 600 -j2 -L '^(unit|sim)$'
