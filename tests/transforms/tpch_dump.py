#!/usr/bin/env python3
"""Loads TPC-H tables, as tpchgen-cli writes them in CSV, into a directory
dump, one collection per table in database "tpch": what `mongoimport
--type csv --headerline` makes of them (numbers typed as numbers, dates
left as strings, a fresh ObjectId a row), written by the tests' own
writer. Usage: tpch_dump.py CSV_DIR DUMP_DIR"""
import csv
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
from bson import ObjectId  # noqa: E402

INT = re.compile(r"^-?(0|[1-9][0-9]{0,17})$")
DEC = re.compile(r"^-?[0-9]+\.[0-9]+$")
TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]


def typed(v):
    """mongoimport's guess for a CSV cell: integers, then doubles, else the string."""
    if INT.match(v):
        return int(v)  # int32 where it fits, else int64, as bson encodes it
    if DEC.match(v):
        return float(v)
    return v


def main():
    src, dst = sys.argv[1], sys.argv[2]
    oid = 0
    namespaces = {}
    for t in TABLES:
        docs = []
        with open(os.path.join(src, t + ".csv"), newline="") as f:
            for row in csv.DictReader(f):
                oid += 1
                d = rmlib.collections.OrderedDict()
                d["_id"] = ObjectId("%024x" % (0x5f0000000000000000000000 + oid))
                for k, v in row.items():
                    d[k] = typed(v)
                docs.append(d)
        namespaces["tpch." + t] = docs
    rmlib.write_dump(dst, namespaces)


main()
