#!/usr/bin/env python3
"""Writes dumps of many collections for remodel analyze at scale (issue 50,
item 2): a directory DIR/DB/COLL.bson per collection, the BSON written by
hand (struct) so that a dump of thousands of collections takes a second.

  analyze_scale.py DIR unrelated N     N collections of five documents
                                       whose fields look like nothing
                                       (ObjectId _id, a word, a date)
  analyze_scale.py DIR refs N          N collections of five documents,
                                       _id 1..5 and a field c<K>_id of
                                       small integers: every field's values
                                       are found among every _id (looks
                                       like references everywhere)
  analyze_scale.py DIR refs N --wide F the same and one collection "wide"
                                       of five documents of F fields each
                                       (f0..f<F-1>, small integers)
"""
import os
import struct
import sys


def elem(t, name, payload):
    return bytes([t]) + name.encode() + b"\0" + payload


def i32(name, v):
    return elem(0x10, name, struct.pack("<i", v))


def string(name, s):
    b = s.encode() + b"\0"
    return elem(0x02, name, struct.pack("<i", len(b)) + b)


def oid(name, n):
    return elem(0x07, name, struct.pack(">IQ", 0x65000000, n))


def date(name, ms):
    return elem(0x09, name, struct.pack("<q", ms))


def doc(elems):
    body = b"".join(elems)
    return struct.pack("<i", len(body) + 5) + body + b"\0"


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def write(root, db, coll, docs):
    os.makedirs(os.path.join(root, db), exist_ok=True)
    with open(os.path.join(root, db, coll + ".bson"), "wb") as f:
        for d in docs:
            f.write(d)


def main(argv):
    if len(argv) < 4 or argv[2] not in ("unrelated", "refs"):
        sys.exit(__doc__)
    root, kind, n = argv[1], argv[2], int(argv[3])
    wide = int(argv[5]) if len(argv) > 5 and argv[4] == "--wide" else 0
    for c in range(n):
        name = "c%05d" % c
        docs = []
        for i in range(5):
            if kind == "unrelated":
                docs.append(doc([oid("_id", c * 5 + i),
                                 string("word", "%s %d" % (WORDS[(c + i) % 8], c * 7 + i)),
                                 date("at", 1700000000000 + (c * 5 + i) * 86400000)]))
            else:
                # Another collection's number: its values 1..5 are found
                # among every collection's _id.
                docs.append(doc([i32("_id", i + 1), i32("c%05d_id" % ((c + 1) % n), (i + c) % 5 + 1),
                                 string("label", "%s %d" % (WORDS[i], c))]))
        write(root, "db", name, docs)
    if wide:
        docs = [doc([i32("_id", i + 1)] + [i32("f%d" % k, (i + k) % 5 + 1) for k in range(wide)])
                for i in range(5)]
        write(root, "db", "wide", docs)


if __name__ == "__main__":
    main(sys.argv)
