#!/usr/bin/env python3
"""By hand: scripts/bench/expr.json's $set over a mongodump archive, archive
to archive, as a user with pymongo's bson module would write it. The
archive is walked block by block; the documents of crm.tasks with done
false are decoded, given the ten fields and encoded again, every other
document is copied as it is; each namespace's EOF block gets the CRC-64 of
what was written (mongorestore checks it; fastcrc computes it).
Usage: expr_by_hand.py SRC.archive DST.archive"""
import datetime
import mmap
import struct
import sys

import bson
import fastcrc

TERM = b"\xff\xff\xff\xff"
NS = ("crm", "tasks")
UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1)


def to_date(s):
    # what {"$toDate": "$due_s"} does with $dateToString's default format
    # ("2014-04-01T00:00:00.000Z"); null stays null
    if s is None:
        return None
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")


def double_string(x):
    # $toString of a double: the shortest digits that read back, no ".0"
    # on a whole number (as the server writes them; repr's exponent form
    # starts at 1e16, past these values)
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


def change(d):
    p = d.get("priority")
    d["due"] = to_date(d.get("due_s"))
    d["label"] = "task: " + d["description"]
    d["urgency"] = "high" if isinstance(p, (int, float)) and p >= 3 else "normal"
    d["shout"] = d["description"].upper()
    d["prio"] = 0 if p is None else p
    d["cost"] = None if p is None else (p + 1) * 1.5
    due = d.get("due_date")
    d["day"] = None if due is None else due.strftime("%Y-%m-%d")
    weeks = None if due is None else (due - EPOCH) // datetime.timedelta(milliseconds=1) / 604800000
    d["weeks"] = None if weeks is None else double_string(weeks)
    d["weeks_r"] = None if weeks is None else round(weeks, 2)
    d["head"] = d["description"][:8]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: expr_by_hand.py SRC.archive DST.archive")
    assert bson.has_c(), "pymongo's bson C extension is not available"
    src = open(sys.argv[1], "rb")
    m = mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ)
    out = open(sys.argv[2], "wb", buffering=1 << 20)
    n = len(m)
    # magic, prelude, namespace entries up to the first terminator: as they are
    pos = 4
    while m[pos:pos + 4] != TERM:
        pos += struct.unpack_from("<i", m, pos)[0]
    pos += 4
    out.write(m[:pos])
    crc = {}
    while pos < n:
        hlen = struct.unpack_from("<i", m, pos)[0]
        header = bson.decode(m[pos:pos + hlen])
        ns = (header["db"], header["collection"])
        pos += hlen
        if header["EOF"]:
            if ns == NS:
                header["CRC"] = bson.int64.Int64(struct.unpack("<q", struct.pack("<Q", crc.get(ns, 0)))[0])
            out.write(bson.encode(header))
        else:
            out.write(m[pos - hlen:pos])
        # the block's documents, up to its terminator
        while m[pos:pos + 4] != TERM:
            dlen = struct.unpack_from("<i", m, pos)[0]
            raw = m[pos:pos + dlen]
            pos += dlen
            if ns == NS:
                d = bson.decode(raw)
                if d.get("done") is False:
                    change(d)
                    raw = bson.encode(d)
                crc[ns] = fastcrc.crc64.xz(raw, crc[ns]) if ns in crc else fastcrc.crc64.xz(raw)
            out.write(raw)
        out.write(TERM)
        pos += 4
    out.close()


main()
