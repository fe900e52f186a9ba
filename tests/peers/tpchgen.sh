#!/usr/bin/env bash
# Prints the path of tpchgen-cli (TPC-H's data generator, data no one on
# the project wrote), installed from its package on first use and cached
# beside the peers: the wheel holds the binary, nothing else is fetched.
# Used by test_analyze_relational and make bench-untuned.
set -u
cache=${REMODEL_PEERS_CACHE:-$HOME/.cache/remodel-peers}/tpchgen
bin=$cache/tpchgen-cli
if [ ! -x "$bin" ]; then
    mkdir -p "$cache/whl" &&
        python3 -m pip download -q --no-deps -d "$cache/whl" "tpchgen-cli==4.0.0" >&2 &&
        python3 -m zipfile -e "$cache"/whl/tpchgen_cli-*.whl "$cache/x" &&
        cp "$cache"/x/tpchgen_cli-*.data/scripts/tpchgen-cli "$bin" && chmod +x "$bin" &&
        rm -rf "$cache/x" || exit 1
fi
echo "$bin"
