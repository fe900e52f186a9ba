#!/usr/bin/env python3
"""Independent reader for mongodump --archive files (standard library only).

Used by the peer-tool tests to count and extract documents without going
through the tools under test.

  archive.py count ARCHIVE          prints "db.collection N" per namespace
  archive.py split ARCHIVE OUTDIR   writes OUTDIR/db.collection.bson

Format: magic 0x8199e26d; a prelude header document and one metadata document
per collection, ended by a terminator (int32 -1); then segments, each a
namespace header {db, collection, EOF, CRC} followed (when EOF is false) by
body documents and a terminator.
"""
import os
import struct
import sys

MAGIC = 0x8199E26D
TERMINATOR = -1


def cstring(buf, pos):
    end = buf.index(b"\x00", pos)
    return buf[pos:end].decode("utf-8"), end + 1


def decode_header(doc):
    """Decodes the flat header documents of the archive format."""
    out = {}
    pos = 4
    while pos < len(doc) - 1:
        etype = doc[pos]
        name, pos = cstring(doc, pos + 1)
        if etype == 0x02:  # string
            n = struct.unpack_from("<i", doc, pos)[0]
            out[name] = doc[pos + 4:pos + 4 + n - 1].decode("utf-8")
            pos += 4 + n
        elif etype == 0x08:  # bool
            out[name] = doc[pos] != 0
            pos += 1
        elif etype == 0x10:  # int32
            out[name] = struct.unpack_from("<i", doc, pos)[0]
            pos += 4
        elif etype in (0x12, 0x01, 0x11, 0x09):  # int64, double, ts, date
            out[name] = doc[pos:pos + 8]
            pos += 8
        else:
            raise ValueError("unexpected BSON type 0x%02x in header" % etype)
    return out


def read_docs(path):
    """Yields ("db.coll", raw_document_bytes) for every body document."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 4 or struct.unpack_from("<I", buf, 0)[0] != MAGIC:
        raise ValueError("%s: not a mongodump archive" % path)
    pos = 4

    def next_item():
        nonlocal pos
        if pos + 4 > len(buf):
            raise ValueError("%s: truncated at offset %d" % (path, pos))
        n = struct.unpack_from("<i", buf, pos)[0]
        if n == TERMINATOR:
            pos += 4
            return None
        if n < 5 or pos + n > len(buf):
            raise ValueError("%s: bad document length %d at %d" % (path, n, pos))
        doc = buf[pos:pos + n]
        pos += n
        return doc

    while next_item() is not None:  # prelude and collection metadata
        pass
    while pos < len(buf):
        header = next_item()
        if header is None:
            raise ValueError("%s: unexpected terminator at %d" % (path, pos - 4))
        h = decode_header(header)
        ns = "%s.%s" % (h.get("db", ""), h.get("collection", ""))
        if h.get("EOF"):
            if next_item() is not None:
                raise ValueError("%s: EOF header of %s not terminated" % (path, ns))
            continue
        while True:
            doc = next_item()
            if doc is None:
                break
            yield ns, doc


def main(argv):
    if len(argv) < 3 or argv[1] not in ("count", "split"):
        sys.stderr.write(__doc__)
        return 2
    counts = {}
    files = {}
    try:
        for ns, doc in read_docs(argv[2]):
            counts[ns] = counts.get(ns, 0) + 1
            if argv[1] == "split":
                if ns not in files:
                    files[ns] = open(os.path.join(argv[3], ns + ".bson"), "wb")
                files[ns].write(doc)
    finally:
        for f in files.values():
            f.close()
    if argv[1] == "count":
        for ns in sorted(counts):
            print("%s %d" % (ns, counts[ns]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
