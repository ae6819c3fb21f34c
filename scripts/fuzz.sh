#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, ASan+UBSan) in build-fuzz/ with clang
# and runs each one on its seed corpus for a fixed time.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [target...]
#
# N: seconds per target (default 60); J: parallel libFuzzer jobs per target
# (default 1; use the machine's cores for a nightly run). Targets are the
# names in fuzz/targets without .cpp (fuzz_toml, fuzz_lab, ...); default all.
# New inputs that reach new code go to build-fuzz/corpus/<target>/ (kept
# between runs, not checked in); the checked-in seeds stay untouched.
# Exits non-zero on any finding (crash, sanitizer report, uncaught non-Error
# exception, broken round trip, timeout, out of memory) and prints the path of
# the saved input: add it to tests/data/fuzz/ with a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
jobs=1
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [[ ${#targets[@]} -eq 0 ]]; then
  for f in fuzz/targets/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

cxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z "$cxx" ]]; then
  echo "fuzz.sh: clang++ not found; run scripts/install-deps.sh --fuzz" >&2
  exit 2
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O0 for the uninstrumented rest of the engine; fuzz/CMakeLists.txt gives
# the loaders -O1 with the sanitizers.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 \
  -DSHARDLAB_BUILD_FUZZ=ON -DSHARDLAB_BUILD_TESTS=OFF -DSHARDLAB_BUILD_BENCH=OFF \
  -DSHARDLAB_WITH_GUI=OFF -DSHARDLAB_WITH_CUDA=OFF -DSHARDLAB_WITH_NCCL=OFF \
  -DSHARDLAB_WITH_MPI=OFF >/dev/null
cmake --build build-fuzz --target "${targets[@]}"

export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:detect_container_overflow=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=()
for t in "${targets[@]}"; do
  seeds="fuzz/corpus/$t"
  work="build-fuzz/corpus/$t"
  artifacts="build-fuzz/findings/$t/"
  mkdir -p "$work" "$artifacts"
  extra=()
  [[ -f "fuzz/dict/$t.dict" ]] && extra+=(-dict="fuzz/dict/$t.dict")
  # Parallel jobs write their logs as fuzz-N.log in the working directory.
  [[ "$jobs" -gt 1 ]] && extra+=(-jobs="$jobs" -workers="$jobs")
  # 256 KiB inputs reach every size limit below 1 MiB quickly enough; -timeout:
  # one input taking over 10 s is a hang; 2 GiB RSS: a loader that balloons.
  echo "fuzz.sh: $t for ${seconds}s"
  if ! build-fuzz/fuzz/"$t" -max_total_time="$seconds" -max_len=262144 -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts" "${extra[@]}" "$work" "$seeds" > "build-fuzz/findings/$t.log" 2>&1; then
    failed+=("$t")
    echo "fuzz.sh: FINDING in $t; log build-fuzz/findings/$t.log, input(s):" >&2
    ls -1 "$artifacts" | sed "s|^|  $artifacts|" >&2
    grep -m 5 -E "ERROR|runtime error|broken promise|uncaught|terminate" "build-fuzz/findings/$t.log" >&2 || true
  else
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "build-fuzz/findings/$t.log" | tail -1 || true
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no findings"
