#!/usr/bin/env python3
"""By hand: scripts/bench/untuned_set.json's $set over the TPC-H archive of
make bench-untuned, archive to archive (archive_by_hand.py): the lineitems
with l_returnflag "N" are decoded, given the six fields and encoded again.
Usage: untuned_by_hand.py SRC.archive DST.archive"""
import datetime
import sys

from archive_by_hand import double_string, rewrite


def change(d):
    if d.get("l_returnflag") != "N":
        return False
    price = d["l_extendedprice"]
    d["ship"] = datetime.datetime.strptime(d["l_shipdate"], "%Y-%m-%d").strftime("%d/%m/%Y")
    d["price_s"] = double_string(price)
    d["net"] = round(price * (1 - d["l_discount"]), 2)
    d["note"] = d["l_comment"][:10]
    d["mode"] = d["l_shipmode"].lower()
    d["late"] = d["l_receiptdate"] > d["l_commitdate"]
    return True


if len(sys.argv) != 3:
    sys.exit("usage: untuned_by_hand.py SRC.archive DST.archive")
rewrite(sys.argv[1], sys.argv[2], ("tpch", "lineitem"), change)
