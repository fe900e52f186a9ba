#!/usr/bin/env bash
# Runs an online suite's servers as remodel-memsrv, whatever kind the
# suite asks for (PEERS_SERVER=tests/mem/as_peer.sh, read by tests/cli/
# lib.sh's use_peers): to find what the in-memory server lacks, and to
# time a suite against it. A suite's kind-specific branches still follow
# the kind it named.
#   PEERS_SERVER=$PWD/tests/mem/as_peer.sh REMODEL=build/remodel bash tests/cli/test_X.sh
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" == start ]; then
    exec "$here/../peers/server.sh" start "$2" mem ${4:-}
fi
exec "$here/../peers/server.sh" "$@"
