# Helpers for suites that run remodel against the in-memory server
# (tests/mem/, build/tests/remodel-memsrv), after tests/cli/lib.sh:
#   mem_cmd JSON          one command on $uri's admin database (pymongo),
#                         its reply as JSON on stdout
#   mem_snapshot NAME     saves every database on the server (oplog too)
#   mem_restore NAME      puts them back
#   mem_digest            a line per namespace: "db.coll COUNT SHA1"
mem_cmd() {
    python3 -c 'import sys, json, pymongo
from bson import json_util
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
print(json_util.dumps(c.admin.command(json_util.loads(sys.argv[2]))))' "$uri" "$1"
}
mem_snapshot() { mem_cmd "{\"memSnapshot\": \"$1\"}" >/dev/null; }
mem_restore() { mem_cmd "{\"memRestore\": \"$1\"}" >/dev/null; }
mem_digest() {
    mem_cmd '{"memDigest": 1}' | python3 -c 'import sys, json
for ns, d in sorted(json.load(sys.stdin)["namespaces"].items()):
    print(ns, d["count"], d["sha1"])'
}
