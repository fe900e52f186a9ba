#!/usr/bin/env python3
"""Crafts dumps whose namespace names are hostile, in every input format.

    craft_names.py archive OUT DB COLL      a mongodump archive (CRCs right)
    craft_names.py tar OUT MEMBER           a tar with one .bson member at MEMBER
    craft_names.py dir OUT DB FILESTEM      a directory dump OUT/DB/FILESTEM.bson
    craft_names.py longname OUT             a directory dump whose collection
                                            name is 300 bytes (hashed file name)

In names, "\\x00" stands for a NUL byte; everything else is taken as it is.  Each dump holds
two documents, {_id: 1} and {_id: 2}.
"""
import io
import os
import struct
import sys
import tarfile

import bson

DOCS = [bson.encode({"_id": 1}), bson.encode({"_id": 2})]


def crc64(data, crc=0):
    """CRC-64/XZ (ECMA-182, reflected), the CRC mongodump writes."""
    table = crc64.table
    crc ^= 0xFFFFFFFFFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFFFFFFFFFF


def _table():
    poly = 0xC96C5795D7870F42
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t


crc64.table = _table()


def cstr(s):
    return s.encode("utf-8", "surrogateescape") + b"\x00"


def doc(fields):
    """A BSON document from (key, type, raw value) triples, names as given."""
    body = b""
    for key, t, raw in fields:
        body += bytes([t]) + cstr(key) + raw
    return struct.pack("<i", len(body) + 5) + body + b"\x00"


def string(v):
    b = v.encode("utf-8", "surrogateescape")
    return struct.pack("<i", len(b) + 1) + b + b"\x00"


def archive(out, db, coll):
    terminator = b"\xff\xff\xff\xff"
    data = b"".join(DOCS)
    crc = crc64(data)
    w = io.BytesIO()
    w.write(b"\x6d\xe2\x99\x81")
    w.write(doc([("concurrent_collections", 0x10, struct.pack("<i", 1)),
                 ("version", 0x02, string("0.1")),
                 ("server_version", 0x02, string("7.0.16")),
                 ("tool_version", 0x02, string("crafted"))]))
    w.write(doc([("db", 0x02, string(db)), ("collection", 0x02, string(coll)),
                 ("metadata", 0x02, string('{"indexes":[]}')), ("size", 0x10, struct.pack("<i", 0)),
                 ("type", 0x02, string("collection"))]))
    w.write(terminator)
    head = lambda eof, c: doc([("db", 0x02, string(db)), ("collection", 0x02, string(coll)),
                               ("EOF", 0x08, b"\x01" if eof else b"\x00"),
                               ("CRC", 0x12, struct.pack("<q", c - (1 << 64) if c >= 1 << 63 else c))])
    w.write(head(False, 0))
    w.write(data)
    w.write(terminator)
    w.write(head(True, crc))
    w.write(terminator)
    open(out, "wb").write(w.getvalue())


def tar(out, member):
    with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as t:
        data = b"".join(DOCS)
        info = tarfile.TarInfo(member)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))


def directory(out, db, stem):
    os.makedirs(os.path.join(out, db), exist_ok=True)
    open(os.path.join(out, db, stem + ".bson"), "wb").write(b"".join(DOCS))


def longname(out):
    coll = "c" * 300
    archive(out + ".archive", "long", coll)


def unescape(s):
    """Only "\\x00" is read as an escape (for a NUL); any other backslash stays."""
    return s.replace("\\x00", "\x00")


if __name__ == "__main__":
    kind, out, args = sys.argv[1], sys.argv[2], [unescape(a) for a in sys.argv[3:]]
    {"archive": archive, "tar": tar, "dir": directory, "longname": longname}[kind](out, *args)
