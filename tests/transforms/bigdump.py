#!/usr/bin/env python3
"""A dump big enough for a spilling run that lasts a while: bigdump.py DIR N
t.p: N/10 parents; t.c: N children, owners scattered."""
import os
import struct
import sys

d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(d, "t"), exist_ok=True)
np = max(1, n // 10)


def doc(body):
    return struct.pack("<i", len(body) + 5) + body + b"\0"


def i32(name, v):
    return b"\x10" + name + b"\0" + struct.pack("<i", v)


def st(name, s):
    return b"\x02" + name + b"\0" + struct.pack("<i", len(s) + 1) + s + b"\0"


with open(os.path.join(d, "t", "p.bson"), "wb") as f:
    f.write(b"".join(doc(i32(b"_id", i) + st(b"name", b"parent %d" % i)) for i in range(np)))
with open(os.path.join(d, "t", "c.bson"), "wb") as f:
    f.write(b"".join(doc(i32(b"_id", i) + i32(b"owner", (i * 7919) % np) + st(b"pad", b"x" * 40))
                     for i in range(n)))
