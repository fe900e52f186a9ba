#!/usr/bin/env bash
# Installs the Debian packages remodel builds and tests with, only those missing.
# Called by the Makefile before every build, so a fresh machine needs nothing by hand.
set -eu

# zstd (and its pzstd), gzip, xz-utils, bzip2, bsdutils (script) and python3 are used by the tests;
# maven and a JDK fetch and run the second test server (tests/peers/install.sh);
# time (GNU time) measures make bench and make bench-online; faketime runs a client of
# the online lease's test with its clock an hour off.
packages="gcc make pkg-config libbson-dev libmongoc-dev libarchive-dev libzstd-dev zlib1g-dev libpcre2-dev tzdata zstd gzip xz-utils bzip2 bsdutils python3 python3-pip maven openjdk-17-jdk-headless time faketime groff-base"
# gdb stops a process at a chosen call for the online switch's kill matrix
# (tests/peers/killat.sh, tests/cli/test_online_switch.sh).
packages="$packages gdb"
# valgrind's memcheck watches remodel-online's end with a call still
# running (tests/cli/test_online_hooks.sh).
packages="$packages valgrind"
# Graphviz's libraries lay out and draw --report's diagrams (the build links
# them where pkg-config finds them); graphviz's dot and chromium (headless)
# judge the pictures in tests/cli/test_report.sh.
packages="$packages libgraphviz-dev graphviz chromium"
# make fuzz also needs clang (its libFuzzer runtime comes with it); make check does not.
[ "${1:-}" == --fuzz ] && packages="$packages clang"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "remodel: missing system packages:$missing" >&2
    echo "remodel: install them with: sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "remodel: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || true
apt-get install -y -q $missing >/dev/null
