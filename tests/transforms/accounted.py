#!/usr/bin/env python3
"""accounted.py SRC OUT: whether every document of the dump SRC (a
directory) is still somewhere in OUT (a directory or an archive), written
by `remodel run`: in a collection or embedded at any depth in another
document. A source document is found when some (sub)document of the
output has its _id and holds every one of its fields with an equal value,
an array holding each of its elements (a reference may have become the
embedded document it refers to); fields may have been added (denormalize,
embed). Independent of remodel
analyze's own check: it reads nothing but the two dumps.

Prints one line per source namespace, "ns found/documents", then the
first few documents not found; exit status 1 when any is missing."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bson  # noqa: E402
import rmlib  # noqa: E402
from bson import json_util  # noqa: E402


def key(v):
    return json_util.dumps(v, json_options=json_util.CANONICAL_JSON_OPTIONS, sort_keys=True)


def walk(v, index, outer=None):
    """Every (sub)document with an _id, by the _id's canonical JSON, with
    the document that holds it (a bucket holds its readings' series)."""
    if isinstance(v, dict):
        if "_id" in v:
            index.setdefault(key(v["_id"]), []).append((v, outer))
        for x in v.values():
            walk(x, index, v)
    elif isinstance(v, list):
        for x in v:
            walk(x, index, outer)


def holds(c, s):
    """Whether output value c still holds source value s: equal; a
    document holding each of s's fields; an array holding each of s's
    elements, a reference being held by an embedded document with that
    value in one of its fields."""
    if isinstance(s, dict):
        return isinstance(c, dict) and all(k in c and holds(c[k], v) for k, v in s.items())
    if isinstance(s, list):
        return isinstance(c, list) and all(
            any(holds(x, e) or (isinstance(x, dict) and not isinstance(e, (dict, list)) and
                                any(key(y) == key(e) for y in x.values())) for x in c)
            for e in s)
    return key(c) == key(s)


def found(doc, index):
    """Found whole, or as an element of a bucket whose other fields (the
    series, bucketize's metaField) the bucket holds."""
    for cand, outer in index.get(key(doc["_id"]), []):
        if all(k in cand and holds(cand[k], v) or k not in cand and isinstance(outer, dict) and
               k in outer and holds(outer[k], v) for k, v in doc.items()):
            return True
    return False


src, _ = rmlib.read_dir(sys.argv[1])
out = sys.argv[2]
dst, _ = rmlib.read_dir(out) if os.path.isdir(out) else rmlib.read_archive(out)
index = {}
for docs in dst.values():
    for raw in docs:
        walk(bson.decode(raw), index)
missing = []
for ns in sorted(src):
    docs = [bson.decode(raw) for raw in src[ns]]
    lost = [d for d in docs if not found(d, index)]
    print("%s %d/%d" % (ns, len(docs) - len(lost), len(docs)))
    missing += [(ns, d) for d in lost]
for ns, d in missing[:5]:
    print("missing from %s: %s" % (ns, key(d)[:200]))
sys.exit(1 if missing else 0)
