#!/usr/bin/env bash
# Build the venv with everything robokin_ros needs on a fresh machine: one ROS 2 distro's pinned wheels, Pinocchio,
# example-robot-data, the interface packages compiled into the venv, and robokin_ros itself (editable).
# Idempotent: every step is skipped when its inputs have not changed since the last run.
# Usage: scripts/setup.sh [--distro jazzy|kilted] [--bench]
#   --distro (or ROBOKIN_ROS_DISTRO): the ROS 2 distro, default jazzy; the venv (ROBOKIN_VENV, default .venv) holds
#            one distro and is rebuilt from scratch when another one is asked for (scripts/distro.sh)
#   --bench  also installs the peers the benchmarks compare against
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/distro.sh"
take_distro_args "$@"
DISTRO=$ROBOKIN_ROS_DISTRO
BENCH=0
for arg in "${ARGS[@]}"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    *) echo "[setup] unknown argument '$arg'; usage: scripts/setup.sh [--distro jazzy|kilted] [--bench]" >&2; exit 2 ;;
  esac
done
STAMPS="$VENV/.robokin-stamps"
PY=${PYTHON:-python3}
log() { printf '[setup] %s\n' "$*"; }

"$PY" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || {
  echo "[setup] the ROS 2 wheels are built for CPython 3.11; $PY is $("$PY" --version 2>&1)" >&2; exit 1; }
command -v cmake >/dev/null || { echo "[setup] cmake is needed to build the interface packages (apt-get install cmake)" >&2; exit 1; }

drop_venv_of_other_distro "$DISTRO"
if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV for ROS 2 $DISTRO"
  "$PY" -m venv "$VENV"
  echo "$DISTRO" > "$VENV/.robokin-distro"
fi
mkdir -p "$STAMPS"
export VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

# Run "$@" only when the hash of the named inputs changed; records the hash on success.
stamped() {
  local name=$1 inputs=$2; shift 2
  local digest; digest=$(cd "$ROOT" && for file in $(eval "echo $inputs"); do echo "$file"; cat "$file"; done \
                          | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$STAMPS/$name" 2>/dev/null)" = "$digest" ]; then return 0; fi
  "$@"
  echo "$digest" > "$STAMPS/$name"
}

REQUIREMENTS="requirements/ros-$DISTRO.txt requirements/core.txt requirements/studio.txt requirements/test.txt requirements/build.txt"
install_requirements() {
  log "installing pinned wheels (ROS 2 $DISTRO, Pinocchio, numpy/scipy, toppra, viser, test tools)"
  local file args=()
  for file in $REQUIREMENTS; do args+=(-r "$ROOT/$file"); done
  "${PIP[@]}" install "${args[@]}"
  # viser rebuilds its web client (with Node.js from the network) when the client's sources look more than 10 s
  # newer than the build it ships; a slow pip install can extract them that far apart. The shipped build is current.
  "$VENV/bin/python" -c 'import os, pathlib, viser
build = pathlib.Path(viser.__file__).parent / "client" / "build"
for path in [build, *build.rglob("*")]:
    os.utime(path)'
}
stamped requirements "$REQUIREMENTS" install_requirements
# The docs site's tools (mkdocs, mkdocs-material: test/docs/test_docs_site.py builds the site), in a step of
# their own so that changing them does not reinstall the wheels above.
stamped docs "requirements/docs.txt" bash -c "echo '[setup] installing the docs tools (mkdocs)'; ${PIP[*]} install -r '$ROOT/requirements/docs.txt'"

if [ "$BENCH" = 1 ]; then
  stamped bench "requirements/bench.txt" bash -c "echo '[setup] installing benchmark peers'; ${PIP[*]} install -r '$ROOT/requirements/bench.txt'"
fi

# The ros-* wheels export CMake files that still name the wheel builder's Python paths; point them at
# this venv so rosidl can generate and link our interfaces against the installed message packages.
fix_cmake_paths() {
  local pyinc npinc
  pyinc=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  npinc=$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')
  { grep -rlZ --include='*.cmake' '/opt/python/cp3' "$VENV/share" 2>/dev/null || true; } | xargs -0 -r sed -i -E \
    -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#${pyinc}#g" \
    -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#${npinc}#g"
}

build_interface() {
  local src=$1 name; name=$(basename "$src")
  local build="$VENV/.robokin-build/$name"
  log "building interface package $name into the venv"
  fix_cmake_paths
  local gen="Unix Makefiles"; command -v ninja >/dev/null && gen=Ninja
  mkdir -p "$build"
  if ! { env -u AMENT_PREFIX_PATH CMAKE_PREFIX_PATH="$VENV" cmake -S "$src" -B "$build" -G "$gen" \
           -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$VENV" -DBUILD_TESTING=OFF \
           -DPython3_EXECUTABLE="$VENV/bin/python" \
         && cmake --build "$build" -j"$(nproc)" && cmake --install "$build"; } > "$build.log" 2>&1; then
    tail -40 "$build.log" >&2; echo "[setup] building $name failed; full log: $build.log" >&2; exit 1
  fi
}
# tf2_msgs, control_msgs and moveit_msgs have no wheels; the vendored subsets keep upstream's type names and the
# hashes of this distro's text: vendor/common/<package> with vendor/<distro>/<package> laid over it (vendor/README.md).
build_vendored() {
  local name=$1 src="$VENV/.robokin-build/src/$1"
  rm -rf "$src"; mkdir -p "$src"
  cp -R "$ROOT/vendor/common/$name/." "$src/"
  if [ -d "$ROOT/vendor/$DISTRO/$name" ]; then cp -R "$ROOT/vendor/$DISTRO/$name/." "$src/"; fi
  build_interface "$src"
}
# (object_recognition_msgs and octomap_msgs before moveit_msgs, whose CollisionObject and PlanningScene use them)
for vendored in tf2_msgs control_msgs object_recognition_msgs octomap_msgs moveit_msgs; do
  stamped "$vendored" "\$(find vendor/common/$vendored vendor/$DISTRO/$vendored -type f 2>/dev/null | sort)" \
    build_vendored "$vendored"
done
stamped robokin_interfaces "robokin_interfaces/package.xml robokin_interfaces/CMakeLists.txt robokin_interfaces/msg/* robokin_interfaces/action/*" \
  build_interface "$ROOT/robokin_interfaces"

install_package() {
  log "installing robokin_ros (editable)"
  "${PIP[@]}" install --no-deps --no-build-isolation --use-pep517 --config-settings editable_mode=compat -e "$ROOT"
}
stamped package "setup.py setup.cfg" install_package
# numba compiles the path kernels on first use (~20 s on 2 cores with an empty cache) and caches them next to the
# sources; doing it here keeps that out of a node's start-up and a first goal. Cached, this takes ~1 s.
log "compiling the path kernels (numba cache)"
"$VENV/bin/python" -c "from robokin_ros.core.robot import RobotModel
from robokin_ros.core.program.planner import MotionPlanner, ensure_compiled
ensure_compiled(MotionPlanner(RobotModel.from_name('panda')))"
log "ready: $VENV (ROS 2 $DISTRO)"
