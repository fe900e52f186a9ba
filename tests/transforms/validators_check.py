"""Checks every document of the collections `remodel compile --format
validators --canonical` names against its $jsonSchema, here, in Python:
mongo-java-server has neither collMod nor $jsonSchema.

  validators_check.py URI VALIDATORS_FILE

The keywords remodel writes are checked as MongoDB's $jsonSchema defines
them: bsonType (an alias or a list of them; "number" too), required,
properties (of a document), items (each element of an array),
description (nothing to check). Types are read from the raw BSON, so an
int32 is "int", an int64 "long". Prints one line per collection (how many
documents, how many fail, the first failure's _id and path); exits 1 when
any document fails."""
import struct
import sys

import bson
import pymongo
from bson import json_util
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

ALIAS = {1: "double", 2: "string", 3: "object", 4: "array", 5: "binData", 6: "undefined",
         7: "objectId", 8: "bool", 9: "date", 10: "null", 11: "regex", 12: "dbPointer",
         13: "javascript", 14: "symbol", 15: "javascriptWithScope", 16: "int",
         17: "timestamp", 18: "long", 19: "decimal", 0xFF: "minKey", 0x7F: "maxKey"}
NUMBER = {"double", "int", "long", "decimal"}


def elements(data):
    """(key, type code, value bytes) of a BSON document's bytes."""
    i, end = 4, len(data) - 1
    while i < end:
        t = data[i]
        k_end = data.index(b"\x00", i + 1)
        key = data[i + 1:k_end].decode()
        j = k_end + 1
        if t in (1, 9, 17, 18):
            n = 8
        elif t == 19:
            n = 16
        elif t in (2, 13, 14):
            n = 4 + struct.unpack_from("<i", data, j)[0]
        elif t in (3, 4, 15):
            n = struct.unpack_from("<i", data, j)[0]
        elif t == 5:
            n = 5 + struct.unpack_from("<i", data, j)[0]
        elif t == 7:
            n = 12
        elif t == 8:
            n = 1
        elif t == 16:
            n = 4
        elif t in (6, 10, 0xFF, 0x7F):
            n = 0
        elif t == 11:
            a = data.index(b"\x00", j)
            n = data.index(b"\x00", a + 1) + 1 - j
        elif t == 12:
            n = 4 + struct.unpack_from("<i", data, j)[0] + 12
        else:
            raise ValueError("BSON type %d" % t)
        yield key, t, data[j:j + n]
        i = j + n


def check(schema, t, value, path):
    """The first place value (of type code t) breaks schema, or None."""
    types = schema.get("bsonType")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        name = ALIAS[t]
        if name not in types and not ("number" in types and name in NUMBER):
            return "%s: %s, not %s" % (path or "the document", name, "/".join(types))
    if t == 3 and ("properties" in schema or "required" in schema):
        fields = {k: (ft, v) for k, ft, v in elements(value)}
        for r in schema.get("required", []):
            if r not in fields:
                return "%s: no field %s" % (path or "the document", r)
        for k, sub in schema.get("properties", {}).items():
            if k in fields:
                why = check(sub, fields[k][0], fields[k][1], (path + "." if path else "") + k)
                if why:
                    return why
    if t == 4 and "items" in schema:
        for k, et, v in elements(value):
            why = check(schema["items"], et, v, "%s.%s" % (path, k))
            if why:
                return why
    return None


def main():
    uri, path = sys.argv[1:3]
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    raw = CodecOptions(document_class=RawBSONDocument)
    bad = False
    with open(path) as f:
        lines = [json_util.loads(l) for l in f if l.strip()]
    for line in lines:
        cmd = line["command"]
        schema = cmd["validator"]["$jsonSchema"]
        coll = client[line["db"]].get_collection(cmd["collMod"], codec_options=raw)
        n, fails, first = 0, 0, None
        for d in coll.find():
            n += 1
            why = check(schema, 3, d.raw, "")
            if why:
                fails += 1
                first = first or "_id %s: %s" % (bson.decode(d.raw)["_id"], why)
        ns = "%s.%s" % (line["db"], cmd["collMod"])
        if fails:
            bad = True
            print("%s: %d documents, %d fail; first: %s" % (ns, n, fails, first))
        else:
            print("%s: %d documents, all valid" % (ns, n))
    sys.exit(1 if bad or not lines else 0)


if __name__ == "__main__":
    main()
