#!/usr/bin/env bash
# Installs the Debian 12 packages ShardLab needs, skipping apt when all are
# already there. Used by scripts/setup.sh, scripts/test.sh and .ci/run.
#
#   scripts/install-deps.sh          everything: the build, the tests and the desktop app
#                                    (today the same as --test)
#   scripts/install-deps.sh --test   the build, the desktop app, a headless X
#                                    server and xdotool for its tests, OpenMPI for the
#                                    mpi backend's tests (what test.sh needs)
#   scripts/install-deps.sh --build  only the build and the unit/sim tests
#   scripts/install-deps.sh --fuzz   the build plus clang and its libFuzzer and
#                                    sanitizer runtimes (scripts/fuzz.sh, sanitize.sh)
#
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail

# zlib and pugixml: the readers of field files (engine/field/: .gz, NCCL's XML).
build_packages=(cmake ninja-build g++ libgtest-dev libbenchmark-dev zlib1g-dev libpugixml-dev)
# The desktop app: ImGui (+ stb for PNGs), GLFW, Mesa's software OpenGL for
# machines without a GPU, and the fonts it looks for at run time (DejaVu;
# WenQuanYi Micro Hei for the app in Chinese, --lang zh-CN). xauth:
# xvfb-run needs it, and it is only a Recommends of xvfb. xdotool: the
# real-input test (tests/gui/real_input_test.cpp) clicks and types with it.
gui_packages=(libimgui-dev libstb-dev libglfw3-dev libgl1-mesa-dri fonts-dejavu-core fonts-wqy-microhei xvfb xauth
              xdotool)
# The mpi backend and its tests (label mpi); iproute2's `ip netns` makes the
# two "hosts" of the test across machines (tests/mpi/mpi_two_hosts_test.cpp).
mpi_packages=(libopenmpi-dev openmpi-bin iproute2)
# libclang-rt-14-dev holds libclang_rt.fuzzer and the ASan/UBSan/TSan runtimes.
fuzz_packages=(clang-14 libclang-rt-14-dev)

packages=("${build_packages[@]}")
case "${1:-}" in
  --build) ;;
  --test) packages+=("${gui_packages[@]}" "${mpi_packages[@]}") ;;
  --fuzz) packages+=("${fuzz_packages[@]}") ;;
  "") packages+=("${gui_packages[@]}" "${mpi_packages[@]}") ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps.sh: unknown option '$1' (use --build, --test, --fuzz or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-deps: missing ${missing[*]}; run this as root or install sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
