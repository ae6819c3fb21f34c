#!/usr/bin/env bash
# Builds the project and its tests with clang under sanitizers and runs the
# unit and sim tests (and mpi ones when mpirun is installed).
#
#   scripts/sanitize.sh asan [ctest args...]   ASan + UBSan in build-asan/
#   scripts/sanitize.sh tsan [ctest args...]   TSan in build-tsan/
#   scripts/sanitize.sh asan-gui [ctest args...]  the desktop app under ASan + UBSan
#                      in build-asan-gui/, driven by the real-input test
#                      (tests/gui/real_input_test.cpp; needs DISPLAY and xdotool)
#
# Extra arguments go to ctest, e.g. `scripts/sanitize.sh tsan -R 'Executor|Worker'`.
# asan and tsan leave the desktop app out (GUI off), so no Mesa/llvmpipe code runs and
# scripts/asan.supp / scripts/tsan.supp hold no suppression for our code;
# asan-gui builds only the app, the CLI and the gui tests (no CUDA, no MPI),
# and lsan.supp names Mesa's libraries.
# Any sanitizer report fails the test that triggered it; exits non-zero then.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
[[ $# -gt 0 ]] && shift
case "$mode" in
  asan|asan-gui) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" ;;
  tsan) flags="-fsanitize=thread" ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan|asan-gui [ctest args...]" >&2; exit 2 ;;
esac
dir="build-$mode"

cxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z "$cxx" ]]; then
  echo "sanitize.sh: clang++ not found; run scripts/install-deps.sh --fuzz" >&2
  exit 2
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
here=$(pwd)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:suppressions=$here/scripts/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/scripts/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

if [[ "$mode" == asan-gui ]]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DSHARDLAB_WITH_GUI=ON -DSHARDLAB_WITH_CUDA=OFF -DSHARDLAB_WITH_NCCL=OFF \
    -DSHARDLAB_WITH_MPI=OFF -DSHARDLAB_BUILD_BENCH=OFF >/dev/null
  cmake --build "$dir" --target shardlab shardlab-cli test_gui
  [[ $# -gt 0 ]] || set -- -R RealInput
  # Mesa unloads its driver at exit, and LeakSanitizer then counts what the
  # driver's globals held as leaked: keep it loaded in the app under test.
  dri=$(ls /usr/lib/*/dri/swrast_dri.so 2>/dev/null | head -n 1 || true)
  [[ -n "$dri" ]] && export SHARDLAB_REAL_INPUT_PRELOAD="$dri"
  export SHARDLAB_REAL_INPUT=1
  exec ctest --test-dir "$dir" --output-on-failure --no-tests=error --timeout 1800 -L '^gui$' "$@"
fi
mpi=OFF
command -v mpirun >/dev/null && mpi=AUTO
cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DSHARDLAB_WITH_GUI=OFF -DSHARDLAB_WITH_CUDA=OFF -DSHARDLAB_WITH_NCCL=OFF \
  -DSHARDLAB_WITH_MPI="$mpi" -DSHARDLAB_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir"

status=0
ctest --test-dir "$dir" --output-on-failure --no-tests=error --timeout 1800 -j2 \
  -L '^(unit|sim)$' "$@" || status=$?
if [[ "$mpi" == AUTO ]]; then
  # OpenMPI 4.1 leaves allocations of its own behind at MPI_Finalize (op
  # tables, argv copies, its plug-ins' state), and under TSan its own locks
  # form cycles (scripts/tsan-mpi.supp; TSan also ignores the memory accesses
  # of uninstrumented libraries: symbolizing OpenMPI's reports while it
  # unloads plug-ins at MPI_Finalize deadlocked TSan itself). To tell them from ours, keep
  # its plug-ins loaded so their frames have names, unwind fully (libmpi has
  # no frame pointers), and suppress exactly OpenMPI's libraries
  # (scripts/lsan-mpi.supp): a leak with none of their frames still fails.
  OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1 \
  ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0:malloc_context_size=64" \
  LSAN_OPTIONS="$LSAN_OPTIONS:suppressions=$here/scripts/lsan-mpi.supp" \
  TSAN_OPTIONS="$TSAN_OPTIONS:ignore_noninstrumented_modules=1:suppressions=$here/scripts/tsan-mpi.supp" \
    ctest --test-dir "$dir" --output-on-failure --no-tests=error --timeout 1800 -j2 \
      -L '^mpi$' "$@" || status=$?
fi
exit "$status"
