#!/usr/bin/env bash
# The GPU check ShardLab owns (docs/gpu.md): on a machine with CUDA and a
# GPU, builds only what needs the GPU, runs the `gpu` tests, the GPU
# benchmarks (bench/cuda/) and a short CLI run of every scenario on
# --backend cuda, writes one log and the traces into a folder, and prints
# the timing goals of issue 23 as PASS/FAIL lines:
#
#   event overhead        < 5% from 1 MiB chunks        (event_overhead_bench)
#   ring, 8 virtual ranks >= 80% of the copy roofline at 64 MiB, < 60 us at 8 B
#   no cold-start outlier every op within 2x the median of its kind, every scenario
#   emulated ring         dgx-a100, 8 ranks, 16 MiB: within 10% of the simulator
#
# and issue 24's: the model of this machine (--compare sim, rates from the
# calibrate run of the same check) within 15% of the measured time for ring
# all-reduce on 8 virtual ranks at 16 MiB, 64 MiB, 256 MiB and 1 GiB, the 1F1B
# step, the TP MLP layer and a ZeRO-3 step (one line per case, with its ratio).
#
# Works without GoogleTest or a system NCCL: GoogleTest is built from a
# source folder (--googletest DIR, $GTEST_SRC, ./build-googletest-src, or
# Debian's /usr/src/googletest), NCCL is taken from the nvidia-nccl-cu13
# Python package when no nccl.h is installed (../shared/gpu-records/README.md
# has the recipe this follows). About 1-2 minutes on 16 cores.
#
#   scripts/gpu-check.sh [--out DIR] [--googletest DIR] [--arch 90] [--jobs N] [--dry-run]
#
# Exit status: 0 every step ran and every goal passed; 1 a step or a goal
# failed (the log says which); 2 bad arguments; 3 no GPU or no CUDA here.
# --dry-run lists the steps, builds and writes nothing, and exits 0 anywhere.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=""
gtest_src="${GTEST_SRC:-}"
arch=""
jobs=$(nproc 2>/dev/null || echo 4)
dry_run=0

die_usage() { echo "gpu-check.sh: $1" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || die_usage "--out: missing value (DIR)"; out=$2; shift 2 ;;
    --googletest) [[ $# -ge 2 ]] || die_usage "--googletest: missing value (DIR)"; gtest_src=$2; shift 2 ;;
    --arch) [[ $# -ge 2 ]] || die_usage "--arch: missing value (e.g. 90)"; arch=$2; shift 2 ;;
    --jobs) [[ $# -ge 2 ]] || die_usage "--jobs: missing value (N)"; jobs=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs: must be a positive integer (got '$jobs')"
[[ -z "$arch" || "$arch" =~ ^[0-9]+[a-z]?$ || "$arch" == native ]] ||
  die_usage "--arch: a CUDA architecture such as 90 or native (got '$arch')"

# --- Is there a GPU? ---------------------------------------------------------
# A dry run lists the steps on any machine: what a real run would refuse here
# is one line, and the steps follow.
nvcc=""
for candidate in "${CUDACXX:-}" "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
  if [[ -n "$candidate" && -x "$candidate" ]]; then nvcc=$candidate; break; fi
done
if [[ -z "$nvcc" ]]; then
  no_cuda="no CUDA toolkit: nvcc is not on PATH nor in /usr/local/cuda/bin"
  if [[ $dry_run -eq 0 ]]; then echo "gpu-check.sh: $no_cuda" >&2; exit 3; fi
  echo "gpu-check.sh: dry run: $no_cuda (a real run stops here, exit 3)"
fi
# `nvidia-smi -L` prints one "GPU 0: NAME (UUID: ...)" line per GPU; with a
# broken driver it prints an error instead, which lists no GPU.
gpus=""
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep '^GPU ' || true); fi
if [[ -z "$gpus" ]]; then
  cuda_here="no CUDA toolkit"
  [[ -z "$nvcc" ]] || cuda_here="CUDA $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') is here"
  no_gpu="no GPU: nvidia-smi lists none ($cuda_here, so the CUDA backend builds, but nothing can run); the checks that need no GPU are scripts/test.sh"
  if [[ $dry_run -eq 0 ]]; then echo "gpu-check.sh: $no_gpu" >&2; exit 3; fi
  echo "gpu-check.sh: dry run: $no_gpu (a real run stops here, exit 3)"
else
  [[ $dry_run -eq 0 ]] || echo "gpu-check.sh: dry run: on $(echo "$gpus" | wc -l) GPU(s): $(echo "$gpus" | head -n 1)"
fi
[[ -n "$arch" ]] || arch=native

stamp=$(date -u +%Y%m%d-%H%M%S)
[[ -n "$out" ]] || out="$root/build-gpu-check/$stamp"
build="$root/build-gpu"
deps="$root/build-gpu-deps"
run() {  # echo a step into the log, run it unless --dry-run; never stops the script
  echo "=== \$ $*" | tee -a "$log"
  if [[ $dry_run -eq 1 ]]; then return 0; fi
  local rc=0
  "$@" >>"$log" 2>&1 || rc=$?
  echo "exit $rc" >>"$log"
  return $rc
}
note() {  # a line for the log (and, in a dry run, for stdout)
  echo "=== $*" >>"$log"
  if [[ $dry_run -eq 1 ]]; then echo "=== $*"; fi
}
run_to() {  # run_to FILE CMD...: as run, stdout also kept in FILE (for the goals)
  local file=$1
  shift
  echo "=== \$ $* > $(basename "$file")" | tee -a "$log"
  if [[ $dry_run -eq 1 ]]; then return 0; fi
  local rc=0
  "$@" >"$file" 2>>"$log" || rc=$?
  cat "$file" >>"$log"
  echo "exit $rc" >>"$log"
  return $rc
}
start_s=$(date +%s)
failed=0
if [[ $dry_run -eq 1 ]]; then
  # Nothing is written: the steps go to stdout only.
  log=/dev/null
  echo "gpu-check.sh: dry run: the steps a run would take (log and traces into $out):"
else
  mkdir -p "$out/traces"
  log="$out/log.txt"
  : >"$log"
  echo "gpu-check.sh: log and traces in $out"
  {
    echo "=== machine"
    echo "$gpus"
    "$nvcc" --version | tail -n 2
    echo "cores: $jobs; commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  } >>"$log" 2>&1
fi

# --- NCCL: the system's, or the Python wheel's -------------------------------
if [[ -z "${NCCL_HOME:-}" && ! -e /usr/include/nccl.h && ! -e /usr/local/cuda/include/nccl.h ]]; then
  nccl_dir=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null || true)
  if [[ -n "$nccl_dir" && -e "$nccl_dir/lib/libnccl.so.2" ]]; then
    run mkdir -p "$deps/nccl/lib"
    run ln -sfn "$nccl_dir/include" "$deps/nccl/include"
    run ln -sf "$nccl_dir/lib/libnccl.so.2" "$deps/nccl/lib/libnccl.so"
    export NCCL_HOME="$deps/nccl" LD_LIBRARY_PATH="$nccl_dir/lib:${LD_LIBRARY_PATH:-}"
    note "NCCL from the Python package: $nccl_dir"
  else
    note "no NCCL (no nccl.h, no nvidia-nccl-cu13 package): NCCL rows are skipped"
  fi
fi

# --- GoogleTest: installed, or built from a source folder --------------------
prefix_path=""
have_gtest=0
for f in /usr/lib/*/cmake/GTest/GTestConfig.cmake /usr/lib/cmake/GTest/GTestConfig.cmake \
         /usr/local/lib/cmake/GTest/GTestConfig.cmake /usr/lib/*/libgtest.a /usr/lib/libgtest.a; do
  if [[ -e "$f" ]]; then have_gtest=1; break; fi
done
if [[ $have_gtest -eq 0 ]]; then
  if [[ -z "$gtest_src" ]]; then
    for candidate in "$root/build-googletest-src" /usr/src/googletest; do
      if [[ -e "$candidate/CMakeLists.txt" ]]; then gtest_src=$candidate; break; fi
    done
  fi
  if [[ -z "$gtest_src" || ! -e "$gtest_src/CMakeLists.txt" ]]; then
    no_gtest="no GoogleTest: install libgtest-dev, or pass --googletest DIR (a source tree such as a copy of Debian's /usr/src/googletest, e.g. in ./build-googletest-src)"
    if [[ $dry_run -eq 0 ]]; then echo "gpu-check.sh: $no_gtest" >&2; exit 1; fi
    echo "gpu-check.sh: dry run: $no_gtest (a real run stops here, exit 1)"
    gtest_src="DIR"
  fi
  run cmake -S "$gtest_src" -B "$deps/googletest-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$deps/googletest" -DBUILD_GMOCK=OFF || failed=1
  run ninja -C "$deps/googletest-build" -j "$jobs" install || failed=1
  prefix_path="$deps/googletest"
fi

# --- Build only what needs the GPU -------------------------------------------
run cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DSHARDLAB_WITH_CUDA=ON -DSHARDLAB_WITH_GUI=OFF \
  -DSHARDLAB_WITH_MPI=OFF ${prefix_path:+-DCMAKE_PREFIX_PATH="$prefix_path"} || failed=1
run ninja -C "$build" -j "$jobs" shardlab-cli test_backends_cuda test_backends_device \
  reduce_vs_copy_bench event_overhead_bench ring_vs_nccl_bench || {
  echo "gpu-check.sh: the build failed; see $log" >&2
  exit 1
}
echo "=== built ($(( $(date +%s) - start_s )) s so far)" >>"$log"

# --- Tests, benchmarks, every scenario on the GPU -----------------------------
# Collectives name --topology dgx-a100: without one, --backend cuda runs on the
# detected machine, one rank per GPU; with it, 8 ranks share the GPUs there are.
run ctest --test-dir "$build" -L gpu --output-on-failure || failed=1
run "$build/tests/test_backends_device" || failed=1
run_to "$out/event_overhead.txt" "$build/bench/event_overhead_bench" --ops 256 || failed=1
run "$build/bench/reduce_vs_copy_bench" || failed=1
run "$build/bench/ring_vs_nccl_bench" --ranks 8 || failed=1

cli="$build/app/cli/shardlab-cli"
t="$out/traces"
run "$cli" calibrate --out "$out/device.toml" || failed=1
run_to "$out/ring8-8B.json" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 8 -w 5 -n 20 --json \
  --trace "$t/ring8-8B.json" || failed=1
run_to "$out/ring8-64M.json" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M -w 2 \
  -n 10 --json --trace "$t/ring8-64M.json" || failed=1
run env SHARDLAB_CUDA_GRAPH=0 "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M -w 2 \
  -n 10 --trace "$t/ring8-64M-no-graph.json" || failed=1
run "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M --step -w 1 || failed=1
run_to "$out/emulated-ring8-16M.json" "$cli" run allreduce --backend cuda --ranks 8 --size 16M -w 2 \
  -n 10 --topology dgx-a100 --emulate-links --json --trace "$t/emulated-ring8-16M.json" || failed=1
run_to "$out/sim-ring8-16M.json" "$cli" run allreduce --backend sim --ranks 8 --size 16M \
  --topology dgx-a100 --json || failed=1
run "$cli" run allreduce --backend cuda --algo nccl --ranks 1 --size 64M -w 2 -n 10 || failed=1
# 16-bit on the GPU: fp16/bf16 buffers (2 bytes per element moved), reduced in
# fp32, checked with the dtype's bound; fp16 products on tensor cores.
run_to "$out/ring8-64M-fp16.json" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M \
  --dtype fp16 -w 2 -n 10 --json --trace "$t/ring8-64M-fp16.json" || failed=1
run_to "$out/ring8-64M-bf16.json" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M \
  --dtype bf16 -w 2 -n 10 --json || failed=1
run "$cli" run tp-mlp --backend cuda --tp 4 --dtype fp16 --timing-only -w 1 -n 5 \
  --trace "$t/tp-mlp-fp16.json" || failed=1
# The 1F1B step, the TP MLP layer and the ZeRO-3 step, each beside the
# simulator's model of this machine (--compare sim, the rates calibrate
# measured above): the table goes to the log, model-*.txt keep it for the goals.
prof=(--device-profile "$out/device.toml")
run_to "$out/model-pipeline-1f1b.txt" "$cli" run pipeline --backend cuda --schedule 1f1b --stages 4 \
  --microbatches 8 --width 256 --batch 64 -w 1 -n 5 --trace "$t/pipeline-1f1b.json" --compare sim "${prof[@]}" || failed=1
run_to "$out/model-tp-mlp.txt" "$cli" run tp-mlp --backend cuda --tp 4 -w 1 -n 5 --trace "$t/tp-mlp.json" \
  --compare sim "${prof[@]}" || failed=1
run_to "$out/model-zero3.txt" "$cli" run zero --backend cuda --zero-stage 3 --ranks 4 -w 1 --iters 5 \
  --trace "$t/zero3.json" --compare sim "${prof[@]}" || failed=1
# Ring all-reduce on 8 virtual ranks against the model, 16 MiB to 1 GiB (the
# two large ones timing-only: checking 8 GiB of results on the host would
# take longer than the runs).
run_to "$out/model-ring8-16M.txt" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 16M \
  -w 2 -n 10 --compare sim "${prof[@]}" || failed=1
run_to "$out/model-ring8-64M.txt" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 64M \
  -w 2 -n 10 --compare sim "${prof[@]}" || failed=1
run_to "$out/model-ring8-256M.txt" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 \
  --size 256M --timing-only -w 1 -n 3 --compare sim "${prof[@]}" || failed=1
run_to "$out/model-ring8-1G.txt" "$cli" run allreduce --backend cuda --topology dgx-a100 --ranks 8 --size 1G \
  --timing-only -w 1 -n 3 --compare sim "${prof[@]}" || failed=1
run "$cli" run 3d --backend cuda -w 1 -n 5 --trace "$t/3d.json" || failed=1
run "$cli" run moe --backend cuda -w 1 -n 5 --trace "$t/moe.json" || failed=1

# --- The goals ------------------------------------------------------------------
if [[ $dry_run -eq 1 ]]; then
  echo "gpu-check.sh: dry run: nothing was built or run"
  exit 0
fi
if command -v python3 >/dev/null 2>&1; then
  python3 "$root/scripts/gpu_goals.py" "$out" | tee -a "$log" || failed=1
else
  echo "SKIP goals: python3 is not installed (the log has the raw figures)" | tee -a "$log"
fi
echo "=== done in $(( $(date +%s) - start_s )) s" | tee -a "$log"
if [[ $failed -ne 0 ]]; then
  echo "gpu-check.sh: something failed; see $log" >&2
  exit 1
fi
