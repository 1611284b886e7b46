#!/bin/sh
# quickstart.sh — set up sim on Debian 12 and run it, or run its tests.
#
#   ./quickstart.sh sim ARGS...   install what is missing, build, install, run sim ARGS
#   ./quickstart.sh test          install what is missing, build, run the whole test suite
#   ./quickstart.sh python        install what is missing, build, install sim and libsim, then
#                                 the Python binding (pip install ./python, offline)
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
[ "${1:-}" = test ] && packages="$packages valgrind chromium python3-venv"
# pip installs the Python binding
[ "${1:-}" = python ] && packages="$packages python3-pip"

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
  python)
    meson install -C build --quiet >&2
    # the new libsim on the loader's path (PREFIX/lib is in ld.so.conf)
    if [ "$(id -u)" -eq 0 ]; then ldconfig; fi
    # into the active virtual environment; else, as root, Python's own
    # folder for local packages (Debian: /usr/local/lib/python3.X/
    # dist-packages, beside no Debian package), or the user's site
    flags="--quiet --no-index"
    if [ -z "${VIRTUAL_ENV:-}" ]; then
      [ "$(id -u)" -eq 0 ] || flags="$flags --user"
      python3 -m pip install --help | grep -q -- --break-system-packages && flags="$flags --break-system-packages"
    fi
    python3 -m pip install $flags ./python >&2
    [ "$(id -u)" -eq 0 ] || echo "quickstart: libsim is in $prefix/lib; set SIM_LIBRARY to its libsim.so.1 if Python does not find it" >&2
    exec python3 -c "import simtrain; print('simtrain', simtrain.API_VERSION)"
    ;;
  *)
    echo "usage: ./quickstart.sh sim ARGS... | ./quickstart.sh test | ./quickstart.sh python" >&2
    exit 2
    ;;
esac
