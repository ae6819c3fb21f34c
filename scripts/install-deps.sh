#!/usr/bin/env bash
# Installs the Debian 12 packages ShardLab needs, skipping apt when all are
# already there. Used by scripts/setup.sh and .ci/run.
#
#   scripts/install-deps.sh          build + tests + what later parts use
#                                    (GUI: ImGui, stb, GLFW; MPI; headless X)
#   scripts/install-deps.sh --build  only the build and the unit/sim tests
#
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail

build_packages=(cmake ninja-build g++ libgtest-dev libbenchmark-dev)
# xauth: xvfb-run needs it, and it is only a Recommends of xvfb.
extra_packages=(libimgui-dev libstb-dev libglfw3-dev libopenmpi-dev openmpi-bin xvfb xauth xdotool)

packages=("${build_packages[@]}")
case "${1:-}" in
  --build) ;;
  "") packages+=("${extra_packages[@]}") ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps.sh: unknown option '$1' (use --build or nothing)" >&2; exit 2 ;;
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
