#!/usr/bin/env bash
# Builds and caches the peer tools the tests compare remodel against:
#   bsondump, mongorestore, mongodump, mongoexport, mongoimport (mongo-tools, built from Go source)
#   ferretdb                           (FerretDB v1, SQLite backend: a MongoDB
#                                       wire-compatible server, no service needed)
#   mongosh, mongosh1                  (optional, from npm; failures only warn)
#   mongo-java-server                  (the second test server, in memory: its
#                                       jars from Maven, java/Launcher.java)
#   data/vega_datasets-*.whl           (optional, pip download: public CSVs
#                                       for tests/cli/test_public_csv.sh)
# The Go programs are built from Go modules fetched through the Go module
# proxy, with the machine's Go toolchain; nothing else is downloaded.
#
#   tests/peers/install.sh          # idempotent; near-instant once cached
#
# Cache: ${REMODEL_PEERS:-$HOME/.cache/remodel-peers} (bin/ holds the programs, data/
# the data sets).
# A build is redone only when its pins (this script, go/*/go.mod, go.sum) or
# the Go version change. Go's own module and build caches are used as usual.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${REMODEL_PEERS:-$HOME/.cache/remodel-peers}

# --- pins -------------------------------------------------------------------
# mongo-tools has no semver tags (r100.x / 100.x), so it is pinned by
# pseudo-version: commit 8876412689777b31b1d9b0686805e7881ccd84a2,
# `git describe` 100.12.2-5-g887641268 (2025-07-15). Its module hashes are
# pinned in go/mongo-tools/go.sum (the checksum database has no record of
# this module, so go.sum is the only verification and must stay complete).
MONGO_TOOLS_VERSION=v0.0.0-20250715155915-887641268977
MONGO_TOOLS_DESCRIBE=100.12.2-5-g887641268
MONGO_TOOLS_COMMIT=8876412689777b31b1d9b0686805e7881ccd84a2
# FerretDB v1.24.0 is the last v1 release (v2 needs PostgreSQL with the
# DocumentDB extension). It is built from a copy of its module source so the
# version files it embeds can be written (its main package panics without
# them when it is the main module).
FERRETDB_VERSION=v1.24.0
FERRETDB_COMMIT=7d9c7b9922555c1c8b64fe1ac596f4c1efb570ce
# FerretDB v1.24.0 reports MongoDB 7.0.42. mongorestore sends the insert
# option bypassEmptyTsReplacement to 7.0.13 and later, and FerretDB v1 rejects
# it ("unknown field"), so nothing restores. Reporting 7.0.12 (same 7.0
# feature set, before that backport) makes mongorestore use its plain path.
FERRETDB_REPORTED_MONGODB=7.0.12
# Optional shells, from npm (their dependencies are resolved at install
# time): 2.x, and 1.10.6, the last that talks to wire version 7.
MONGOSH_VERSION=2.12.0
MONGOSH1_VERSION=1.10.6

die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

GO=${GO:-}
if [ -z "$GO" ]; then
    if [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else GO=$(command -v go) || die "no Go toolchain (looked for /usr/local/go/bin/go and go on PATH)"
    fi
fi

grep -q "github.com/mongodb/mongo-tools $MONGO_TOOLS_VERSION" "$HERE/go/mongo-tools/go.mod" ||
    die "go/mongo-tools/go.mod does not pin mongo-tools $MONGO_TOOLS_VERSION"
grep -q "github.com/FerretDB/FerretDB $FERRETDB_VERSION" "$HERE/go/ferretdb/go.mod" ||
    die "go/ferretdb/go.mod does not pin FerretDB $FERRETDB_VERSION"

mkdir -p "$CACHE/bin" "$CACHE/stamps"
CACHE=$(cd "$CACHE" && pwd)

# One install at a time per cache (test runs may start together).
exec 9>"$CACHE/.lock"
flock -w 900 9 || die "timed out waiting for another install.sh on $CACHE"

# Go settings for every build: only the local toolchain (no toolchain
# downloads), module files read-only (go.sum must already be complete),
# pure-Go static binaries (no C compiler needed), no VCS stamping.
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"

GO_VERSION=$("$GO" env GOVERSION) || die "$GO does not run"

# stamp_key SECTION FILES...: a key for the inputs of one build: the Go
# version, the pins, the script's own section for it (from its "# --- SECTION"
# line to the next such line) and FILES. Only those: an edit elsewhere in
# this script (another peer, the test data) must not rebuild a Go peer,
# which takes minutes and replaces binaries other test runs are using.
stamp_key() {
    local section=$1; shift
    { echo "$GO_VERSION"
      sed -n '/^# --- pins/,/^# --- /p' "$HERE/install.sh"
      awk -v s="# --- $section " 'index($0, s) == 1 { on = 1; print; next } /^# --- / { on = 0 } on' "$HERE/install.sh"
      cat "$@"; } | sha256sum | cut -d' ' -f1
}
# fresh NAME KEY BINARIES...: true when NAME was built from KEY and all exist.
fresh() {
    local name=$1 key=$2; shift 2
    [ -f "$CACHE/stamps/$name" ] && [ "$(cat "$CACHE/stamps/$name")" == "$key" ] || return 1
    local b; for b in "$@"; do [ -x "$CACHE/bin/$b" ] || return 1; done
}

# --- mongo-tools --------------------------------------------------------------
mt_key=$(stamp_key mongo-tools "$HERE/go/mongo-tools/go.mod" "$HERE/go/mongo-tools/go.sum")
if fresh mongo-tools "$mt_key" bsondump mongorestore mongodump mongoexport mongoimport; then
    say "mongo-tools $MONGO_TOOLS_DESCRIBE: cached"
else
    say "mongo-tools $MONGO_TOOLS_DESCRIBE: building with $GO_VERSION (takes about a minute)"
    rm -f "$CACHE/stamps/mongo-tools"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    ldflags="-X main.VersionStr=$MONGO_TOOLS_DESCRIBE -X main.GitCommit=$MONGO_TOOLS_COMMIT"
    for tool in bsondump mongorestore mongodump mongoexport mongoimport; do
        "$GO" -C "$HERE/go/mongo-tools" build -trimpath -ldflags "$ldflags" \
            -o "$tmp/$tool" "github.com/mongodb/mongo-tools/$tool/main" ||
            die "building $tool (mongo-tools $MONGO_TOOLS_VERSION) failed"
        "$tmp/$tool" --version >/dev/null || die "built $tool does not run"
    done
    for tool in bsondump mongorestore mongodump mongoexport mongoimport; do mv -f "$tmp/$tool" "$CACHE/bin/$tool"; done
    rm -rf "$tmp"; trap - EXIT
    echo "$mt_key" >"$CACHE/stamps/mongo-tools"
    say "mongo-tools: built $CACHE/bin/{bsondump,mongorestore,mongodump,mongoexport,mongoimport}"
fi

# --- FerretDB ---------------------------------------------------------------
fd_key=$(stamp_key FerretDB "$HERE/go/ferretdb/go.mod" "$HERE/go/ferretdb/go.sum")
if fresh ferretdb "$fd_key" ferretdb; then
    say "FerretDB $FERRETDB_VERSION: cached"
else
    say "FerretDB $FERRETDB_VERSION: building with $GO_VERSION (takes about a minute)"
    rm -f "$CACHE/stamps/ferretdb"
    # Download (verified against go/ferretdb/go.sum) and find the module source.
    json=$("$GO" -C "$HERE/go/ferretdb" mod download -json github.com/FerretDB/FerretDB) ||
        die "downloading FerretDB $FERRETDB_VERSION failed: $json"
    src=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    [ -n "$src" ] && [ -f "$src/go.mod" ] || die "FerretDB module source not found: $json"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    cp -R "$src" "$tmp/src"
    chmod -R u+w "$tmp/src"
    echo "$FERRETDB_VERSION" >"$tmp/src/build/version/version.txt"
    echo "$FERRETDB_COMMIT" >"$tmp/src/build/version/commit.txt"
    echo "remodel-tests" >"$tmp/src/build/version/package.txt"
    echo "$FERRETDB_REPORTED_MONGODB" >"$tmp/src/build/version/mongodb.txt"
    # Built as its own main module, with its own go.mod and go.sum.
    "$GO" -C "$tmp/src" build -trimpath -o "$tmp/ferretdb" ./cmd/ferretdb ||
        die "building FerretDB $FERRETDB_VERSION failed"
    "$tmp/ferretdb" --version >/dev/null || die "built ferretdb does not run"
    mv -f "$tmp/ferretdb" "$CACHE/bin/ferretdb"
    rm -rf "$tmp"; trap - EXIT
    echo "$fd_key" >"$CACHE/stamps/ferretdb"
    say "FerretDB: built $CACHE/bin/ferretdb"
fi

# --- mongosh (optional) -------------------------------------------------------
# A shell for poking at a test server, and the judge of the scripts remodel
# will compile; a failure here only warns. Two: mongosh 2.x for FerretDB and
# real servers, 1.10.6 for mongo-java-server (it reports wire version 7,
# which 2.x refuses). Skip both with REMODEL_PEERS_MONGOSH=0. Install
# scripts are not run (they only build optional native add-ons).
# install_mongosh NAME VERSION: $CACHE/NAME/node_modules, linked as bin/NAME.
install_mongosh() {
    local name=$1 version=$2 key tmp
    key=$(echo "mongosh@$version $(node --version 2>/dev/null)" | sha256sum | cut -d' ' -f1)
    if fresh "$name" "$key" "$name"; then
        say "$name $version: cached"
        return 0
    fi
    say "$name $version: installing with npm (optional; about 30 s)"
    rm -f "$CACHE/stamps/$name" "$CACHE/bin/$name"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    if timeout 600 npm install --prefix "$tmp" --no-audit --no-fund --no-save \
            --ignore-scripts --loglevel=error "mongosh@$version" >"$tmp/npm.log" 2>&1 &&
        [ -x "$tmp/node_modules/.bin/mongosh" ]; then
        rm -rf "${CACHE:?}/$name"
        mkdir "$CACHE/$name"
        mv "$tmp/node_modules" "$CACHE/$name/node_modules"
        ln -s "../$name/node_modules/.bin/mongosh" "$CACHE/bin/$name"
        if "$CACHE/bin/$name" --version >/dev/null 2>&1; then
            echo "$key" >"$CACHE/stamps/$name"
            say "$name: installed $CACHE/bin/$name"
        else
            rm -f "$CACHE/bin/$name"
            say "$name: WARNING: installed but does not run; skipped"
        fi
    else
        say "$name: WARNING: npm install failed (optional, skipped):"
        tail -n 10 "$tmp/npm.log" | sed 's/^/    /'
    fi
    rm -rf "$tmp"
}
if [ "${REMODEL_PEERS_MONGOSH:-1}" == 0 ]; then
    say "mongosh: skipped (REMODEL_PEERS_MONGOSH=0)"
elif ! command -v npm >/dev/null; then
    say "mongosh: skipped (no npm)"
else
    install_mongosh mongosh "$MONGOSH_VERSION"
    install_mongosh mongosh1 "$MONGOSH1_VERSION"
fi

# --- mongo-java-server --------------------------------------------------------
# The second, independent server (in-memory): Maven fetches the jars pinned
# in java/pom.xml by name; java/Launcher.java is compiled against them.
# bin/mongo-java-server [PORT] [--oplog] runs it (tests/peers/server.sh).
command -v mvn >/dev/null && command -v javac >/dev/null ||
    die "mongo-java-server needs mvn and javac (Debian: maven, default-jdk-headless)"
# The launcher. The serial collector and the first JIT tier only: a test
# server lives seconds to minutes, and C2's compiles and the parallel
# collector's threads were half its CPU (a collection of 5,000 read 150
# times: 3.2 CPU s, 1.65 with these), on two cores shared by every suite.
mj_launch='#!/bin/sh
# mongo-java-server on 127.0.0.1 (tests/peers/java/Launcher.java).
here=$(cd "$(dirname "$0")/../mongo-java-server" && pwd)
exec java -Xss4m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$here/lib/*:$here/classes" Launcher "$@"'
mj_key=$({ javac -version 2>&1; cat "$HERE/java/pom.xml" "$HERE/java/Launcher.java"; echo "$mj_launch"; } |
    sha256sum | cut -d' ' -f1)
if fresh mongo-java-server "$mj_key" mongo-java-server; then
    say "mongo-java-server: cached"
else
    say "mongo-java-server: fetching with Maven and compiling the launcher"
    rm -f "$CACHE/stamps/mongo-java-server" "$CACHE/bin/mongo-java-server"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    timeout 600 mvn -q -B -f "$HERE/java/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$tmp/lib" >"$tmp/mvn.log" 2>&1 ||
        { tail -n 20 "$tmp/mvn.log" >&2; die "Maven could not fetch mongo-java-server"; }
    mkdir "$tmp/classes"
    javac -cp "$tmp/lib/*" -d "$tmp/classes" "$HERE/java/Launcher.java" ||
        die "compiling java/Launcher.java failed"
    rm -rf "$CACHE/mongo-java-server"
    mkdir "$CACHE/mongo-java-server"
    mv "$tmp/lib" "$tmp/classes" "$CACHE/mongo-java-server/"
    printf '%s\n' "$mj_launch" >"$CACHE/bin/mongo-java-server"
    chmod +x "$CACHE/bin/mongo-java-server"
    rm -rf "$tmp"; trap - EXIT
    echo "$mj_key" >"$CACHE/stamps/mongo-java-server"
    say "mongo-java-server: installed $CACHE/bin/mongo-java-server"
fi

# --- pymongo (its bson package: the golden-test harness decodes with it) -----
PYMONGO_VERSION=4.10.1
if python3 -c "import bson, pymongo, sys; sys.exit(pymongo.version != '$PYMONGO_VERSION')" 2>/dev/null; then
    say "pymongo $PYMONGO_VERSION: installed"
else
    say "pymongo $PYMONGO_VERSION: installing with pip"
    python3 -m pip install --quiet --disable-pip-version-check "pymongo==$PYMONGO_VERSION" >/dev/null 2>&1 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "pymongo==$PYMONGO_VERSION"
fi

# --- mingo (the differential test of remodel compile's pipelines) -----------
# An independent implementation of the aggregation language, with the bson
# package for Extended JSON, pinned in mingo/package.json; installed with npm
# into $CACHE/mingo (tests/transforms/mingo_same.py runs it with Node:
# tests/cli/test_compile_mingo.sh; optional here: a failure only warns).
mg_key=$({ node --version 2>/dev/null; cat "$HERE/mingo/package.json"; } | sha256sum | cut -d' ' -f1)
if [ -f "$CACHE/stamps/mingo" ] && [ "$(cat "$CACHE/stamps/mingo")" == "$mg_key" ] &&
    [ -d "$CACHE/mingo/node_modules/mingo" ]; then
    say "mingo: cached"
elif ! command -v npm >/dev/null; then
    say "mingo: WARNING: no npm; skipped"
else
    say "mingo: installing with npm"
    rm -f "$CACHE/stamps/mingo"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    cp "$HERE/mingo/package.json" "$tmp/"
    if timeout 600 npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts \
            --loglevel=error >"$tmp/npm.log" 2>&1 && [ -d "$tmp/node_modules/mingo" ]; then
        rm -rf "${CACHE:?}/mingo"
        mkdir "$CACHE/mingo"
        mv "$tmp/node_modules" "$CACHE/mingo/node_modules"
        echo "$mg_key" >"$CACHE/stamps/mingo"
        say "mingo: installed $CACHE/mingo"
    else
        say "mingo: WARNING: npm install failed:"
        tail -n 10 "$tmp/npm.log" | sed 's/^/    /'
    fi
    rm -rf "$tmp"
fi

# --- lizard (scripts/check_complexity.sh: each function's complexity) --------
# From PyPI with pip, pinned, into a venv of its own in $CACHE/lizard,
# linked as bin/lizard; a failure only warns (tests/cli/test_complexity.sh
# then says it skipped).
LIZARD_VERSION=1.24.3
lz_key=$(echo "lizard==$LIZARD_VERSION $(python3 --version 2>&1)" | sha256sum | cut -d' ' -f1)
if fresh lizard "$lz_key" lizard; then
    say "lizard $LIZARD_VERSION: cached"
else
    say "lizard $LIZARD_VERSION: installing with pip into a venv"
    rm -f "$CACHE/stamps/lizard" "$CACHE/bin/lizard"
    rm -rf "${CACHE:?}/lizard"
    if python3 -m venv "$CACHE/lizard" >/dev/null 2>&1 &&
        "$CACHE/lizard/bin/python" -m pip install --quiet --disable-pip-version-check \
            "lizard==$LIZARD_VERSION" >"$CACHE/lizard/pip.log" 2>&1 &&
        "$CACHE/lizard/bin/lizard" --version >/dev/null 2>&1; then
        ln -s ../lizard/bin/lizard "$CACHE/bin/lizard"
        echo "$lz_key" >"$CACHE/stamps/lizard"
        say "lizard: installed $CACHE/bin/lizard"
    else
        say "lizard: WARNING: pip install failed (skipped):"
        tail -n 10 "$CACHE/lizard/pip.log" 2>/dev/null | sed 's/^/    /'
    fi
fi

# --- vega_datasets (public CSVs: tests/cli/test_public_csv.sh) ---------------
# Real public data no one here chose: its wheel carries airports.csv,
# stocks.csv, seattle-temps.csv and seattle-weather.csv under
# vega_datasets/_data/. Only the wheel is fetched (pip download, no
# dependencies, nothing installed), checked against its SHA-256, and kept
# in $CACHE/data; the suite reads the CSVs out of it. Optional here: a
# failure only warns (the suite then fails, saying it is not installed).
VEGA_DATASETS_VERSION=0.9.0
VEGA_DATASETS_SHA256=3d7c63917be6ca9b154b565f4779a31fedce57b01b5b9d99d8a34a7608062a1d
vd_wheel=$CACHE/data/vega_datasets-$VEGA_DATASETS_VERSION-py3-none-any.whl
if [ -f "$vd_wheel" ] && echo "$VEGA_DATASETS_SHA256  $vd_wheel" | sha256sum -c --quiet >/dev/null 2>&1; then
    say "vega_datasets $VEGA_DATASETS_VERSION: cached"
else
    say "vega_datasets $VEGA_DATASETS_VERSION: downloading the wheel with pip"
    mkdir -p "$CACHE/data"
    rm -f "$vd_wheel"
    tmp=$(mktemp -d "$CACHE/build.XXXXXX")
    if timeout 300 python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --only-binary=:all: -d "$tmp" "vega_datasets==$VEGA_DATASETS_VERSION" >"$tmp/pip.log" 2>&1 &&
        [ -f "$tmp/${vd_wheel##*/}" ] &&
        echo "$VEGA_DATASETS_SHA256  $tmp/${vd_wheel##*/}" | sha256sum -c --quiet >/dev/null 2>&1; then
        mv "$tmp/${vd_wheel##*/}" "$vd_wheel"
        say "vega_datasets: saved $vd_wheel"
    else
        say "vega_datasets: WARNING: pip download failed or the wheel's SHA-256 differs (optional, skipped):"
        tail -n 10 "$tmp/pip.log" 2>/dev/null | sed 's/^/    /'
    fi
    rm -rf "$tmp"
fi

say "peers ready in $CACHE/bin"
