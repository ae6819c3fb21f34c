#!/usr/bin/env bash
# README's first command: installs what is missing, builds ShardLab into
# build/ (CMake + Ninja) and runs the demo, ring all-reduce on a simulated
# DGX A100.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build
echo
build/app/cli/shardlab-cli demo
