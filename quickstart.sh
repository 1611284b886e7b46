#!/bin/sh
# quickstart.sh — set up sim on Debian 12 and run it, or run its tests.
#
#   ./quickstart.sh sim ARGS...   install what is missing, build, install, run sim ARGS
#   ./quickstart.sh test          install what is missing, build, run the whole test suite
#
# As root, missing Debian packages are installed with apt-get and sim goes to
# /usr/local (on the PATH).  As another user, the exact apt-get line is printed
# and nothing is installed; sim then goes to ~/.local.
# SIM_WERROR=1 builds with warnings as errors (CI does).
set -eu
cd "$(dirname "$0")"

packages="meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev libxml2-dev libcairo2-dev python3"
# the test suite also runs the headline command under valgrind memcheck, and
# loads the --html pages in headless Chromium (tests/test-html-browser.py;
# about 122 MB to download, 414 MB installed, on Debian 12)
[ "${1:-}" = test ] && packages="$packages valgrind chromium"

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $p"
    fi
  done
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "quickstart: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends $missing >&2
  else
    echo "quickstart: these Debian packages are missing:$missing" >&2
    echo "quickstart: install them as root, then run this again:" >&2
    echo "    sudo apt-get install -y$missing" >&2
    exit 1
  fi
fi

if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
werror=false
[ "${SIM_WERROR:-0}" = 1 ] && werror=true

if [ ! -f build/build.ninja ]; then
  meson setup build --prefix="$prefix" -Dwerror="$werror" >&2
fi
meson compile -C build >&2

case "${1:-}" in
  sim)
    shift
    meson install -C build --quiet >&2
    exec "$prefix/bin/sim" "$@"
    ;;
  test)
    exec meson test -C build --print-errorlogs
    ;;
  *)
    echo "usage: ./quickstart.sh sim ARGS... | ./quickstart.sh test" >&2
    exit 2
    ;;
esac
