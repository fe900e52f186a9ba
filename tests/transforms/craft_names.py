#!/usr/bin/env python3
"""Crafts dumps whose namespace names are hostile, in every input format.

    craft_names.py archive OUT DB COLL [HDB HCOLL]
                                            a mongodump archive (CRCs right); its
                                            namespace headers name HDB.HCOLL if given
    craft_names.py tar OUT MEMBER [MEMBER...]
                                            a tar with one .bson member at each
                                            MEMBER (NAME=TEXT: a member NAME holding
                                            TEXT, for metadata)
    craft_names.py dir OUT DB FILESTEM [METADATA]
                                            a directory dump OUT/DB/FILESTEM.bson,
                                            with FILESTEM.metadata.json if given
    craft_names.py longname OUT             an archive OUT.archive whose collection
                                            name is 300 bytes (hashed file name)
    craft_names.py hashed - NAME            prints mongodump's hashed file stem
                                            for the collection NAME
    craft_names.py tarcuts DIR              DIR/whole.tar, a dump of two namespaces,
                                            and DIR/cut-N.tar, its first N bytes for
                                            every N where a member or block ends

In names, "\\x00" stands for a NUL byte; everything else is taken as it is.  Each dump holds
two documents, {_id: 1} and {_id: 2}.
"""
import base64
import hashlib
import io
import os
import struct
import sys
import tarfile
import urllib.parse

import bson

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402

DOCS = [bson.encode({"_id": 1}), bson.encode({"_id": 2})]


def crc64(data):
    """CRC-64/XZ, the CRC mongodump writes (rmlib's)."""
    return rmlib.crc64(0, data)


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


def archive(out, db, coll, hdb=None, hcoll=None):
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
    hdb, hcoll = db if hdb is None else hdb, coll if hcoll is None else hcoll
    head = lambda eof, c: doc([("db", 0x02, string(hdb)), ("collection", 0x02, string(hcoll)),
                               ("EOF", 0x08, b"\x01" if eof else b"\x00"),
                               ("CRC", 0x12, struct.pack("<q", c - (1 << 64) if c >= 1 << 63 else c))])
    w.write(head(False, 0))
    w.write(data)
    w.write(terminator)
    w.write(head(True, crc))
    w.write(terminator)
    open(out, "wb").write(w.getvalue())


def tar(out, *members):
    # ustar, unless a name is too long for it (then pax, as GNU tar does)
    fmt = tarfile.PAX_FORMAT if any(len(m.partition("=")[0]) > 100 for m in members) \
        else tarfile.USTAR_FORMAT
    with tarfile.open(out, "w", format=fmt) as t:
        for member in members:
            name, eq, text = member.partition("=")
            data = text.encode("utf-8", "surrogateescape") if eq else b"".join(DOCS)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def tarcuts(out):
    """A two-namespace tar and its cuts: at every end of a member's header,
    of its data, and of each end-of-archive block (all short of the whole)."""
    os.makedirs(out, exist_ok=True)
    whole = os.path.join(out, "whole.tar")
    tar(whole, "dump/db/a.bson", "dump/db/b.bson")
    data = open(whole, "rb").read()
    cuts = set()
    with tarfile.open(whole) as t:
        for m in t.getmembers():
            cuts.add(m.offset_data)                              # after the header
            cuts.add(m.offset_data + (m.size + 511) // 512 * 512)  # after the data
    end = max(cuts)
    cuts.update([end + 512])     # one zero block of the two
    for n in sorted(cuts):
        open(os.path.join(out, "cut-%d.tar" % n), "wb").write(data[:n])
    # the two zero blocks alone end it: the rest of the record is padding
    open(os.path.join(out, "ended.tar"), "wb").write(data[:end + 1024])


def directory(out, db, stem, metadata=None):
    os.makedirs(os.path.join(out, db), exist_ok=True)
    open(os.path.join(out, db, stem + ".bson"), "wb").write(b"".join(DOCS))
    if metadata is not None:
        open(os.path.join(out, db, stem + ".metadata.json"), "wb").write(
            metadata.encode("utf-8", "surrogateescape"))


def longname(out):
    coll = "c" * 300
    archive(out + ".archive", "long", coll)


def hashed(_out, name):
    """mongodump's file stem for a long name: the first 208 bytes of the
    escaped name, %24, the unpadded base64url SHA-1 of the raw name."""
    esc = urllib.parse.quote_plus(name, safe="-_.~")
    if len(esc) <= 238:
        print(esc)
        return
    digest = base64.urlsafe_b64encode(hashlib.sha1(name.encode("utf-8", "surrogateescape")).digest())
    print(esc[:208] + "%24" + digest.decode().rstrip("="))


def unescape(s):
    """Only "\\x00" is read as an escape (for a NUL); any other backslash stays."""
    return s.replace("\\x00", "\x00")


if __name__ == "__main__":
    kind, out, args = sys.argv[1], sys.argv[2], [unescape(a) for a in sys.argv[3:]]
    {"archive": archive, "tar": tar, "dir": directory, "longname": longname,
     "tarcuts": tarcuts, "hashed": hashed}[kind](out, *args)
