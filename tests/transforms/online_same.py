"""Compares what `remodel online run` left on a server with `remodel run`'s
archive, namespace by namespace, document by document (matched by _id),
byte for byte.

  online_same.py URI OFFLINE.archive [--db=DB] NS=COLLECTION [NS=COLLECTION ...]

NS is a namespace of the offline result ("db.coll"); COLLECTION the server
collection of NS's database holding the online result (a side-by-side
target, or the collection itself after --in-place); --db=DB before the
pairs: of database DB instead (the offline run was of a copy of the data
kept under another name, as tests/cli/test_online_copy_inplace.sh keeps
one). Prints one line per namespace ("db.coll: N documents, same" or what
differs) and exits 1 when anything differs."""
import sys

import bson
import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

import rmlib


def key(raw):
    return repr(bson.decode(bytes(raw))["_id"])


def main():
    uri, offline, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    live_db = None
    if pairs and pairs[0].startswith("--db="):
        live_db, pairs = pairs[0][5:], pairs[1:]
    docs = rmlib.read_archive(offline)[0]
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    raw = CodecOptions(document_class=RawBSONDocument)
    bad = False
    for pair in pairs:
        ns, coll = pair.split("=", 1)
        db = live_db or ns.split(".", 1)[0]
        want = {}
        for d in docs.get(ns, []):
            want[key(d)] = bytes(d)
        got = {}
        for d in client[db].get_collection(coll, codec_options=raw).find():
            got[key(d.raw)] = d.raw
        if want == got:
            print("%s: %d documents, same" % (ns, len(want)))
            continue
        bad = True
        only_off = [k for k in want if k not in got]
        only_on = [k for k in got if k not in want]
        changed = [k for k in want if k in got and want[k] != got[k]]
        print("%s: offline %d, online %d; only offline %d %s; only online %d %s; "
              "differ %d %s" % (ns, len(want), len(got), len(only_off), only_off[:3],
                                len(only_on), only_on[:3], len(changed), changed[:2]))
        for k in changed[:1]:
            print("  offline:", bson.decode(want[k]))
            print("  online: ", bson.decode(got[k]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
