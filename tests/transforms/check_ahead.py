#!/usr/bin/env python3
"""Documents checked ahead on the read-ahead thread (docs/performance.md).
One PASS/FAIL line per check.

    REMODEL=build/remodel python3 tests/transforms/check_ahead.py WORKDIR

A big input read from a regular file gets a read-ahead thread, which checks
its documents before the main thread frames them (a plain file is mapped,
and convert writes its documents from the mapping without a copy);
standard input gets no thread, and the main thread checks and copies
every document. So the same bytes read
both ways must give the same result: the same output (byte for byte), the
same error message for a bad document (the file's name aside) and exit
status, no output left behind on an error, and with --skip-invalid the same
documents set aside.

The input is a 26 MB collection of small documents and, every 5,000th, one
of 0.3-1.5 MB, which lies across the thread's 1 MiB chunks. It is read as a
mongodump archive and as a .bson file, each intact and with one document
spoiled in several ways and places: early (before the thread starts),
past 8 MiB, at the far end of a big document (in a later chunk than its
start), the last document, and a document length below 5.
"""

import os
import random
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402

W = sys.argv[1]
REMODEL = rmlib.REMODEL
failures = 0


def check(name, ok, detail=""):
    global failures
    if ok:
        print("PASS check-ahead: %s" % name)
    else:
        failures += 1
        print("FAIL check-ahead: %s%s" % (name, (": " + detail) if detail else ""))


def run(args, stdin_path=None):
    """remodel args, from a file or with stdin_path on standard input."""
    with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as inp:
        p = subprocess.run([REMODEL] + args, stdin=inp, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120 * rmlib.SLOW)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def frames(data, start):
    """(offset, length) of each document from start; terminators skipped."""
    out, pos = [], start
    while pos < len(data):
        n = struct.unpack_from("<i", data, pos)[0]
        if n == -1:
            pos += 4
            continue
        out.append((pos, n))
        pos += n
    return out


def collection_docs(data, start):
    """The frames that are documents of t.c (not archive headers)."""
    return [d for d in frames(data, start) if data.find(b"name\0", d[0], d[0] + d[1]) >= 0]


def spoilers(data, docs):
    """(name, spoiled bytes) for each kind and place of damage."""
    big = [d for d in docs if d[1] > 200000]
    late = next(d for d in docs if d[0] > 9 << 20)
    far = next(d for d in big if d[0] > 9 << 20)
    cases = []

    def utf8_at(doc, field):
        b = bytearray(data)
        i = b.find(field + b"\0", doc[0], doc[0] + doc[1])
        assert i > 0
        b[i + len(field) + 1 + 4] = 0xFF  # the string's first byte
        return bytes(b)

    def unknown_type(doc):
        b = bytearray(data)
        i = b.find(b"name\0", doc[0], doc[0] + doc[1])
        b[i - 1] = 0x42  # the element's type byte
        return bytes(b)

    def unterminated(doc):
        b = bytearray(data)
        b[doc[0] + doc[1] - 1] = 1
        return bytes(b)

    def short_length(doc):
        b = bytearray(data)
        struct.pack_into("<i", b, doc[0], 3)
        return bytes(b)

    cases.append(("early bad UTF-8", utf8_at(docs[100], b"name")))
    cases.append(("bad UTF-8 past 8 MiB", utf8_at(late, b"name")))
    cases.append(("unknown type past 8 MiB", unknown_type(late)))
    cases.append(("bad UTF-8 at the end of a 0.3-1.5 MB document", utf8_at(far, b"u")))
    cases.append(("unterminated 0.3-1.5 MB document", unterminated(far)))
    cases.append(("bad UTF-8 in the last document", utf8_at(docs[-1], b"u")))
    cases.append(("document length 3 past 8 MiB", short_length(late)))
    return cases


def spoiled_header(data):
    """The archive's header document (after the magic) unterminated."""
    b = bytearray(data)
    n = struct.unpack_from("<i", b, 4)[0]
    b[4 + n - 1] = 1
    return bytes(b)


def compare(kind, path, stdin_name):
    """The file read directly against the same bytes on standard input."""
    base = os.path.basename(path)
    out1, out2 = os.path.join(W, "o1.archive"), os.path.join(W, "o2.archive")
    q1, q2 = os.path.join(W, "q1.bson"), os.path.join(W, "q2.bson")
    for f in (out1, out2, q1, q2):
        if os.path.exists(f):
            os.remove(f)
    rc1, err1 = run(["convert", "-q", path, out1])
    rc2, err2 = run(["convert", "-q", "-", out2], stdin_path=path)
    same_msg = err1.replace(path, stdin_name).replace(base, stdin_name) == err2
    check("%s: exit %d from the file and %d from standard input" % (kind, rc1, rc2),
          rc1 == rc2)
    check("%s: the same message" % kind, same_msg, "%r vs %r" % (err1, err2))
    if rc1 == 0:
        check("%s: the same output" % kind, open(out1, "rb").read() == open(out2, "rb").read())
        return
    check("%s: no output left" % kind, not os.path.exists(out1) and not os.path.exists(out2))
    check("%s: the message names the document" % kind, "document " in err1, err1)
    if "length 3" in err1:
        return  # framing is lost after a bad length: nothing to skip to
    if "archive header" in err1:
        # the dump's own structure cannot be set aside (this used to crash)
        rc1, err1 = run(["convert", "-q", "--skip-invalid=" + q1, path, out1])
        check("%s: --skip-invalid still fails, with exit 1" % kind, rc1 == 1, err1)
        return
    rc1, _ = run(["convert", "-q", "--skip-invalid=" + q1, path, out1])
    rc2, _ = run(["convert", "-q", "--skip-invalid=" + q2, "-", out2], stdin_path=path)
    check("%s: --skip-invalid gives exit 0 both ways" % kind, rc1 == 0 and rc2 == 0,
          "%d %d" % (rc1, rc2))
    if rc1 == 0 and rc2 == 0:
        check("%s: --skip-invalid gives the same output and sets aside the same document"
              % kind, open(out1, "rb").read() == open(out2, "rb").read() and
              open(q1, "rb").read() == open(q2, "rb").read())


def main():
    rng = random.Random(7)
    docs = []
    for i in range(60000):
        pad = "x" * rng.randint(10, 400) if i % 5000 else "y" * rng.randint(300000, 1500000)
        docs.append({"_id": i, "name": "doc %d" % i, "pad": pad, "sub": {"k": i, "u": "é"}})
    src = os.path.join(W, "src")
    rmlib.write_dump(src, {"t.c": docs})
    bson_path = os.path.join(src, "t", "c.bson")
    archive = os.path.join(W, "input.archive")
    rc, err = run(["convert", "-q", "--force", src, archive])
    check("the input archive is written", rc == 0, err)

    # A .bson on standard input is named test.stdin: so is this file.
    os.makedirs(os.path.join(W, "test"), exist_ok=True)
    bson_copy = os.path.join(W, "test", "stdin.bson")
    inputs = [("archive", archive, open(archive, "rb").read(), 4),
              (".bson", bson_copy, open(bson_path, "rb").read(), 0)]
    for label, path, data, start in inputs:
        with open(path, "wb") as f:
            f.write(data)
        compare("%s, intact" % label, path, "<stdin>")
        for name, spoiled in spoilers(data, collection_docs(data, start)):
            with open(path, "wb") as f:
                f.write(spoiled)
            compare("%s, %s" % (label, name), path, "<stdin>")
        if label == "archive":
            with open(path, "wb") as f:
                f.write(spoiled_header(data))
            compare("archive, unterminated header", path, "<stdin>")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
