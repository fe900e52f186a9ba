"""Whether a server applies each update to a document atomically: two
clients, each $set-ting its own field of the same few documents by _id,
N times each, every acknowledged value recorded; then each document must
hold the last value each client was acknowledged for its field.

  python3 tests/peers/update_race.py URI [N]

Prints each acknowledged value the server lost and "N lost"; exits 1 when
any was. FerretDB 1.x runs an update as a read of the document, then a
write of the whole of it (its backends' Query, then UpdateAll), so one
client's update whose read came before the other's write puts the other's
field back: it loses some (docs/online-servers.md, "How they differ from MongoDB");
mongo-java-server and MongoDB lose none. It uses the database
remodel_update_race, dropped first. Run a server with tests/peers/server.sh
in the same shell command (it stops when that shell exits).
"""
import sys
import threading

import pymongo

DOCS = 3


def client(uri):
    return pymongo.MongoClient(uri, directConnection=True,
                               serverSelectionTimeoutMS=10000).remodel_update_race.docs


def writer(uri, field, n, last):
    c = client(uri)
    for i in range(1, n + 1):
        c.update_one({"_id": i % DOCS}, {"$set": {field: i}})
        last[(i % DOCS, field)] = i


def main(uri, n=300):
    c = client(uri)
    c.drop()
    c.insert_many([{"_id": i} for i in range(DOCS)])
    last = {}
    ts = [threading.Thread(target=writer, args=(uri, f, int(n), last)) for f in ("a", "b")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    lost = 0
    for d in c.find():
        for f in ("a", "b"):
            if d.get(f) != last[(d["_id"], f)]:
                lost += 1
                print("document %s: %s acknowledged as %s, holds %s"
                      % (d["_id"], f, last[(d["_id"], f)], d.get(f)))
    c.database.client.drop_database("remodel_update_race")
    print("%d lost" % lost)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
