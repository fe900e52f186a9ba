#!/usr/bin/env python3
"""A small importer of CSV files into a mongodump directory, as a new user
would load public data with mongoimport --type csv --headerline (without
--columnsHaveTypes) and dump it, but without a server:

  csv_import.py OUT DB.COLL=FILE.csv [DB.COLL=FILE.csv ...] [--ignore-blanks]
                [--text FIELD,...]

writes OUT/DB/COLL.bson and OUT/DB/COLL.metadata.json (the _id index, a
uuid) for each file. The first line names the fields; each later line is a
document, fields in the header's order after an _id:

- _id: an ObjectId, first, as a driver adds it to a document without one;
  made from the namespace and the row's number (not the clock or a random
  source), so that the same files give the same bytes on every run: its
  first 4 bytes are a fixed time (2020-01-01), the next 5 a hash of the
  namespace, the last 3 the row's number.
- each value typed as mongoimport's autoParse types it: an integer (Go's
  strconv.ParseInt in base 10: digits with an optional sign) is an int32
  when it fits and an int64 otherwise; else a number Go's
  strconv.ParseFloat reads (decimal with an optional exponent, "inf",
  "infinity", "nan" in any case, hexadecimal with a "p" exponent; never
  with spaces or underscores, and one past the double range is no number)
  is a double; else the string as it is ("NA", dates, codes like "00M"
  stay strings: nothing is read as a date).
  So an IATA code "0E0" or "0E8" becomes the double 0.0, as mongoimport
  makes it; --text FIELD,... keeps those fields' values as strings (what
  mongoimport --columnsHaveTypes with FIELD.string() does).
- an empty field is the empty string "", as mongoimport writes it by
  default; with --ignore-blanks (mongoimport's --ignoreBlanks) the field is
  left out of that document.
- a header with dots ("loc.lat") makes nested documents, as mongoimport's
  does; a line with more fields than the header names them field4, field5,
  ... (mongoimport's "fieldN", N from 0), one with fewer has fewer fields.

The files are read as UTF-8 with Python's csv module (RFC 4180 quoting:
"a, b" and "W. H. ""Bud"" Barron" are one field each).
"""
import csv
import hashlib
import json
import math
import os
import re
import struct
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.objectid import ObjectId  # noqa: E402
from bson.son import SON  # noqa: E402

OID_TIME = 1577836800  # 2020-01-01T00:00:00Z
INT = re.compile(r"[+-]?[0-9]+\Z")
DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
HEX = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+\Z")
SPECIAL = re.compile(r"([+-]?(inf|infinity)|nan)\Z", re.IGNORECASE)


def auto_parse(text):
    """The value mongoimport's autoParse gives TEXT (int32, int64, double or
    the string itself)."""
    if INT.match(text):
        n = int(text)
        if -2 ** 31 <= n < 2 ** 31:
            return n  # the bson package writes a Python int in range as int32
        if -2 ** 63 <= n < 2 ** 63:
            return Int64(n)
        # past int64: ParseInt fails, ParseFloat reads it
    if SPECIAL.match(text):
        return float(text)
    if DECIMAL.match(text) or INT.match(text):
        f = float(text)
    elif HEX.match(text):
        sign = -1.0 if text[0] == "-" else 1.0
        try:
            f = sign * float.fromhex(text.lstrip("+-"))
        except OverflowError:
            return text
    else:
        return text
    # ParseFloat fails (range error) on a value rounding past the largest
    # double: the string stays.
    return text if math.isinf(f) else f


def object_id(ns, row):
    if row >= 1 << 24:
        raise SystemExit("csv_import.py: %s: more than %d rows" % (ns, (1 << 24) - 1))
    mid = hashlib.sha1(ns.encode()).digest()[:5]
    return ObjectId(struct.pack(">I", OID_TIME) + mid + row.to_bytes(3, "big"))


def put(doc, name, value):
    """Sets NAME (dotted: nested documents) in DOC."""
    parts = name.split(".")
    for p in parts[:-1]:
        if not isinstance(doc.get(p), SON):
            doc[p] = SON()
        doc = doc[p]
    doc[parts[-1]] = value


def read_csv(ns, path, ignore_blanks, text_fields):
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        try:
            header = next(rows)
        except StopIteration:
            raise SystemExit("csv_import.py: %s: empty file, no header line" % path)
        if len(set(header)) != len(header) or "" in header:
            raise SystemExit("csv_import.py: %s: line 1: the header names a field twice, or none" % path)
        docs = []
        for row in rows:
            doc = SON([("_id", object_id(ns, len(docs)))])
            for i, text in enumerate(row):
                if text == "" and ignore_blanks:
                    continue
                name = header[i] if i < len(header) else "field%d" % i
                put(doc, name, text if name in text_fields else auto_parse(text))
            docs.append(doc)
    return docs


def metadata(ns):
    db, coll = ns.split(".", 1)
    return json.dumps({"indexes": [{"v": {"$numberInt": "2"}, "key": {"_id": {"$numberInt": "1"}},
                                    "name": "_id_"}],
                       "uuid": hashlib.sha1(("uuid " + ns).encode()).hexdigest()[:32],
                       "collectionName": coll, "type": "collection"}, separators=(",", ":"))


def main(argv):
    ignore = "--ignore-blanks" in argv
    args = [a for a in argv if a != "--ignore-blanks"]
    text_fields = set()
    while "--text" in args:
        i = args.index("--text")
        text_fields |= set(args[i + 1].split(",")) if i + 1 < len(args) else set([""])
        del args[i:i + 2]
    if len(args) < 2 or any("=" not in a or "." not in a.split("=", 1)[0] for a in args[1:]):
        raise SystemExit(__doc__)
    nss, metas = {}, {}
    for a in args[1:]:
        ns, path = a.split("=", 1)
        nss[ns] = read_csv(ns, path, ignore, text_fields)
        metas[ns] = metadata(ns)
    rmlib.write_dump(args[0], nss, metas)
    for ns, docs in nss.items():
        print("%s: %d document(s)" % (ns, len(docs)))


if __name__ == "__main__":
    main(sys.argv[1:])
