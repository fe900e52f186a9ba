# Source after tests/peers/install.sh: points the tests at the cached peers.
#   BSONDUMP MONGORESTORE MONGODUMP MONGOEXPORT FERRETDB MONGO_JAVA_SERVER
#                                             absolute paths of the programs
#   PEERS_SERVER                              tests/peers/server.sh
#   REMODEL_PEERS                             the cache directory
# and puts the cache's bin/ first on PATH.
REMODEL_PEERS=${REMODEL_PEERS:-$HOME/.cache/remodel-peers}
case $REMODEL_PEERS in /*) ;; *) REMODEL_PEERS=$PWD/$REMODEL_PEERS ;; esac
export REMODEL_PEERS
export BSONDUMP=$REMODEL_PEERS/bin/bsondump
export MONGORESTORE=$REMODEL_PEERS/bin/mongorestore
export MONGODUMP=$REMODEL_PEERS/bin/mongodump
export MONGOEXPORT=$REMODEL_PEERS/bin/mongoexport
export FERRETDB=$REMODEL_PEERS/bin/ferretdb
export MONGO_JAVA_SERVER=$REMODEL_PEERS/bin/mongo-java-server
PEERS_SERVER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/server.sh
export PEERS_SERVER
case ":$PATH:" in
    *":$REMODEL_PEERS/bin:"*) ;;
    *) export PATH="$REMODEL_PEERS/bin:$PATH" ;;
esac
# Optional (install.sh only warns when it cannot install them): MONGOSH
# (2.x) and MONGOSH1 (1.10.6, for mongo-java-server's wire version 7).
if [ -x "$REMODEL_PEERS/bin/mongosh" ]; then export MONGOSH=$REMODEL_PEERS/bin/mongosh; fi
if [ -x "$REMODEL_PEERS/bin/mongosh1" ]; then export MONGOSH1=$REMODEL_PEERS/bin/mongosh1; fi
# mingo for the compile differential (tests/transforms/compile_same.py).
if [ -d "$REMODEL_PEERS/mingo/node_modules/mingo" ]; then export MINGO_DIR=$REMODEL_PEERS/mingo; fi
