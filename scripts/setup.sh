#!/usr/bin/env bash
# README's first command: installs what is missing, builds ShardLab into
# build/ (CMake + Ninja), then opens the desktop app when there is a
# display, or else runs the command-line demo (ring all-reduce on a
# simulated DGX A100) and says how to open the app.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build
echo

app=build/app/gui/shardlab
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$app" ]]; then
  echo "Opening the desktop app ($app): press Step (Right arrow) to watch the ring."
  exec "$app"
fi

build/app/cli/shardlab-cli demo
echo
if [[ -x "$app" ]]; then
  echo "No display here, so the desktop app was not opened. On a desktop, run: $app"
  echo "Headless, it can still save a picture: xvfb-run -a $app --step 3 --frames 60 --screenshot ring.png"
else
  echo "The desktop app was not built (the configure step above says which GUI package is missing)."
fi
