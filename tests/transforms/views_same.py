"""Runs the views `remodel compile --format views --canonical` printed over
a server holding a plan's output, and compares each view's documents with
the namespace it stands for in the dump the plan ran on.

  views_same.py URI ORIGINAL_DUMP_DIR VIEWS_FILE

Each printed `create` command is run first. Where the server then gives
the view's documents (a find on it), those are compared; where it does
not (mongo-java-server accepts the command but makes an empty collection:
it has no views), the view's pipeline is run as an aggregate on its
viewOn collection, what a server does for a find on a view. Its
trailing $unionWith stages are run here, each as its own aggregate, their
results appended: the server's $unionWith does exactly that, and
mongo-java-server does not have it. Documents are matched by _id and
compared typed-equal (an int32 is not an int64 nor a double), arrays in
order, a document's fields in any order (a view puts the fields it gives
back where $addFields puts them). Prints one line per view, and how many
documents are also the same byte for byte; exits 1 when any differs."""
import sys

import bson
import pymongo
from bson import json_util
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

import rmlib

RAW = CodecOptions(document_class=RawBSONDocument)


def run(db, coll, pipeline):
    """The documents of pipeline over coll, its trailing $unionWith stages
    run as separate aggregates and appended in order."""
    cut = len(pipeline)
    while cut and "$unionWith" in pipeline[cut - 1]:
        cut -= 1
    out = [d.raw for d in db.get_collection(coll, codec_options=RAW).aggregate(pipeline[:cut])]
    for stage in pipeline[cut:]:
        u = stage["$unionWith"]
        out += run(db, u["coll"], u.get("pipeline", []))
    return out


def norm(v):
    """A value as a comparable key: its type, and its contents (a
    document's fields sorted by name)."""
    if isinstance(v, dict):
        return ("doc", tuple(sorted((k, norm(x)) for k, x in v.items())))
    if isinstance(v, list):
        return ("arr", tuple(norm(x) for x in v))
    return (type(v).__name__, repr(v))


def main():
    uri, original, views = sys.argv[1:4]
    want_all = rmlib.read_dir(original)[0]
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    bad = False
    with open(views) as f:
        lines = [json_util.loads(l) for l in f if l.strip()]
    for line in lines:
        cmd = line["command"]
        # COLL_before, or COLL itself (the mongosh script's view of a
        # namespace the new design no longer holds under its name)
        name = cmd["create"]
        ns = line["db"] + "." + (name[:-len("_before")] if name.endswith("_before") else name)
        db = client[line["db"]]
        db.drop_collection(cmd["create"])
        db.command(cmd)
        got = [d.raw for d in db.get_collection(cmd["create"], codec_options=RAW).find()]
        how = "the view"
        if not got:
            got = run(db, cmd["viewOn"], cmd["pipeline"])
            how = "its pipeline"
        want = want_all.get(ns, [])
        wmap = {repr(bson.decode(d)["_id"]): d for d in want}
        gmap = {}
        dup = 0
        for d in got:
            k = repr(bson.decode(d)["_id"])
            dup += k in gmap
            gmap[k] = d
        diff = [k for k in wmap if k not in gmap or
                norm(bson.decode(gmap[k])) != norm(bson.decode(wmap[k]))]
        extra = [k for k in gmap if k not in wmap]
        same_bytes = sum(1 for k in wmap if k in gmap and bytes(gmap[k]) == bytes(wmap[k]))
        if diff or extra or dup or len(got) != len(want):
            bad = True
            print("%s: %d documents from the view, %d in the dump: %d differ, %d extra, %d "
                  "repeated; first: %s" % (ns, len(got), len(want), len(diff), len(extra), dup,
                                           (diff + extra)[:1]))
            for k in (diff + extra)[:1]:
                print("  view: %s" % (bson.decode(gmap[k]) if k in gmap else None))
                print("  dump: %s" % (bson.decode(wmap[k]) if k in wmap else None))
        else:
            print("%s: %d documents from %s, same (%d byte for byte)" % (ns, len(want), how,
                                                                    same_bytes))
    sys.exit(1 if bad or not lines else 0)


if __name__ == "__main__":
    main()
