#!/usr/bin/env bash
# Makes the pictures of README.md and docs/ again from the app itself, so
# they never drift from it: each is `shardlab ... --frames N --screenshot`
# under a private Xvfb (or the DISPLAY given). Scripted frames advance the
# replay by 1/60 s each, so the pictures do not depend on the machine.
# Usage: scripts/docs-images.sh [BUILD_DIR]   (default build/)
# optipng, when installed, shrinks the PNGs losslessly.
set -euo pipefail
cd "$(dirname "$0")/.."

app="${1:-build}/app/gui/shardlab"
out=docs/images
[[ -x "$app" ]] || { echo "docs-images.sh: $app not built (cmake --build build --target shardlab)" >&2; exit 2; }
mkdir -p "$out"

if [[ -z "${DISPLAY:-}" ]]; then
  display_file=$(mktemp)
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
  xvfb_pid=$!
  trap 'kill "$xvfb_pid" 2>/dev/null || true; rm -f "$display_file"' EXIT
  for _ in $(seq 100); do
    [[ -s "$display_file" ]] && break
    sleep 0.1
  done
  [[ -s "$display_file" ]] || { echo "docs-images.sh: Xvfb did not start" >&2; exit 1; }
  export DISPLAY=":$(head -n 1 "$display_file")"
fi

shot() {  # shot NAME FLAGS...: one picture, 1280x800
  local name=$1
  shift
  "$app" --window-width 1280 --window-height 800 "$@" --screenshot "$out/$name.png"
  if command -v optipng >/dev/null; then optipng -quiet -o2 "$out/$name.png"; fi
  echo "$out/$name.png"
}

# The ring on a DGX-1's hybrid cube-mesh, mid-run: after step 3 of 14, with
# chunks in flight on the NVLinks.
shot ring-dgx1 --topology dgx1-v100 --size 64M --step 3 --frames 20
# A 1F1B pipeline: micro-batches by colour, each stage's bubble hatched.
shot pipeline-1f1b --scenario pipeline --schedule 1f1b --stages 4 --microbatches 8 --step 40 --frames 30
# ZeRO-3 on 8 GPUs: the memory chart by kind against the formula.
shot zero3-memory --scenario zero --zero-stage 3 --ranks 8 --layers 4 --width 64 --batch 32 --step 60 --frames 30
# dp-train with fp16 and a loss scale: an overflow on rank 2 at step 3 skips the step on every
# rank (the red line on the loss curve; the flag's all-reduce alone on the timeline).
shot dp-train-loss-scale --scenario dp-train --precision fp16 --loss-scale 1024 --scale-growth-interval 4 \
  --overflow 2@3 --steps 12 --play --speed 40000 --frames 120
# The recorded H200 ring with the simulator's model of that machine as outlines (docs/compare.md).
model=$(mktemp --suffix=.json)
"$(dirname "$app")/../cli/shardlab-cli" run allreduce --ranks 8 --size 64M --topology this \
  --device-profile bench/results/2026-11-26-h200-gpu-check/device.toml --timing-only \
  --trace "$model" >/dev/null
shot compare-overlay --open-trace bench/results/2026-11-26-h200-gpu-check/this-ring8-64M.json \
  --compare-trace "$model" --step 14 --frames 30
rm -f "$model"
# The app in Simplified Chinese (docs/app.md#language): the same pipeline, every
# menu, panel and legend in Chinese.
shot app-zh-CN --lang zh-CN --scenario pipeline --schedule 1f1b --stages 4 --microbatches 8 --step 40 --frames 30
# Model vs measurement in one Run (docs/app.md): the shipped H200 ring with the
# model of that machine laid over it, and the line saying where it ran.
shot trace-compare-app --scenario trace-compare --model-issue graph --step 14 --frames 40
# This machine (docs/app.md): 8 ranks as virtual devices of one H200 from its
# device profile, meeting in its shared HBM; the host rows are the model's issue cost.
shot this-machine --topology this --device-profile tests/data/traces/h200.toml --ranks 8 --size 64M \
  --timing-only --step 3 --frames 60
