"""Shared by the archive-to-archive by-hand scripts: a mongodump archive
walked block by block, as a user with pymongo's bson module would write it.
The documents of one namespace are decoded and handed to a function that
changes them in place and says whether it did (only those are encoded
again); every other document is copied as it is; that namespace's EOF
block gets the CRC-64 of what was written (mongorestore checks it; fastcrc
computes it)."""
import mmap
import struct

import bson
import fastcrc

TERM = b"\xff\xff\xff\xff"


def double_string(x):
    """$toString of a double: the shortest digits that read back, no ".0"
    on a whole number (as the server writes them; repr's exponent form
    starts at 1e16, past the values these scripts meet)."""
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


def rewrite(src_path, dst_path, ns, change):
    """Copies the archive src_path to dst_path, change(doc) -> bool applied
    to each document of ns, a (db, collection) pair."""
    assert bson.has_c(), "pymongo's bson C extension is not available"
    src = open(src_path, "rb")
    m = mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ)
    out = open(dst_path, "wb", buffering=1 << 20)
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
        this = (header["db"], header["collection"])
        pos += hlen
        if header["EOF"]:
            if this == ns:
                header["CRC"] = bson.int64.Int64(struct.unpack("<q", struct.pack("<Q", crc.get(ns, 0)))[0])
            out.write(bson.encode(header))
        else:
            out.write(m[pos - hlen:pos])
        # the block's documents, up to its terminator
        while m[pos:pos + 4] != TERM:
            dlen = struct.unpack_from("<i", m, pos)[0]
            raw = m[pos:pos + dlen]
            pos += dlen
            if this == ns:
                d = bson.decode(raw)
                if change(d):
                    raw = bson.encode(d)
                crc[ns] = fastcrc.crc64.xz(raw, crc[ns]) if ns in crc else fastcrc.crc64.xz(raw)
            out.write(raw)
        out.write(TERM)
        pos += 4
    out.close()
