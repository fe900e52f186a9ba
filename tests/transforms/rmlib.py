"""Shared helpers for the transform tests: dumps in and out, running remodel,
comparing documents byte for byte (so field order and types count).

Documents in the JSON cases are MongoDB Extended JSON (canonical or relaxed:
`1` is an int32, `{"$numberLong": "1"}` an int64, `1.0` a double). Two
placeholders may stand for values docs/plans.md leaves to remodel:
  {"$anyOid": "label"}                   any ObjectId; the same label must be the
                                         same value everywhere in the case
  {"$anyOid": "label", "$time": N}       ... whose first 4 bytes are the seconds N
  {"$any": "label"}                      any value at all (same label, same value)
A document written {"$rawHex": "..."} is taken byte for byte.
"""

import collections
import difflib
import json
import os
import shutil
import struct
import subprocess
import sys

import bson
from bson import json_util
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.son import SON

JOPTS = json_util.JSONOptions(document_class=SON,
                              datetime_conversion=DatetimeConversion.DATETIME_AUTO)
COPTS = CodecOptions(document_class=SON,
                     datetime_conversion=DatetimeConversion.DATETIME_AUTO)
CANON = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL,
                              document_class=SON,
                              datetime_conversion=DatetimeConversion.DATETIME_AUTO)

REMODEL = os.environ.get("REMODEL") or "build/remodel"
SLOW = 3 if os.environ.get("REMODEL_SANITIZE") else 1


class Placeholder(object):
    def __init__(self, kind, label, time=None):
        self.kind, self.label, self.time = kind, label, time

    def __repr__(self):
        return "<%s %s>" % (self.kind, self.label)


def _hook(pairs):
    keys = [k for k, _ in pairs]
    d = dict(pairs)
    if keys and keys[0] == "$anyOid" and set(keys) <= {"$anyOid", "$time"}:
        return Placeholder("$anyOid", d["$anyOid"], d.get("$time"))
    if keys == ["$any"]:
        return Placeholder("$any", d["$any"])
    if keys == ["$rawHex"]:
        return RawBSONDocument(bytes.fromhex(d["$rawHex"]))
    return json_util.object_pairs_hook(pairs, JOPTS)


def ext(value):
    """Extended JSON value (already parsed by json with OrderedDict) -> BSON
    values, keeping field order. Raw documents (bytes, RawBSONDocument) and
    SON documents built in Python pass as they are."""
    if isinstance(value, (bytes, bytearray)):
        return RawBSONDocument(bytes(value))
    if isinstance(value, (RawBSONDocument, SON)):
        return value  # built in Python: already BSON values
    return json.loads(json.dumps(value), object_pairs_hook=_hook)


def load_cases(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f, object_pairs_hook=collections.OrderedDict)
    return data if isinstance(data, list) else [data]


def canon(doc):
    try:
        if isinstance(doc, (bytes, bytearray)):
            doc = bson.decode(bytes(doc), COPTS)
        return json_util.dumps(doc, json_options=CANON)
    except Exception as e:  # pragma: no cover - only for diagnostics
        return "<undecodable: %s: %s>" % (e, bytes(doc).hex())


# --- dumps -----------------------------------------------------------------

def split_docs(data, where="?"):
    out, i = [], 0
    while i < len(data):
        if i + 4 > len(data):
            raise ValueError("%s: trailing %d bytes" % (where, len(data) - i))
        n = struct.unpack_from("<i", data, i)[0]
        if n < 5 or i + n > len(data):
            raise ValueError("%s: bad length %d at byte %d" % (where, n, i))
        out.append(bytes(data[i:i + n]))
        i += n
    return out


def encode_doc(d):
    if isinstance(d, RawBSONDocument):
        return bytes(d.raw)
    if isinstance(d, (bytes, bytearray)):
        return bytes(d)
    return bson.encode(d)


def write_dump(root, namespaces, metadata=None):
    """namespaces: {"db.coll": [doc or bytes]} -> ROOT/db/coll.bson."""
    os.makedirs(root, exist_ok=True)
    for ns, docs in namespaces.items():
        db, coll = ns.split(".", 1)
        os.makedirs(os.path.join(root, db), exist_ok=True)
        with open(os.path.join(root, db, coll + ".bson"), "wb") as f:
            for d in docs:
                f.write(encode_doc(d))
    for ns, meta in (metadata or {}).items():
        db, coll = ns.split(".", 1)
        os.makedirs(os.path.join(root, db), exist_ok=True)
        text = meta if isinstance(meta, str) else json.dumps(meta)
        with open(os.path.join(root, db, coll + ".metadata.json"), "w") as f:
            f.write(text)


def read_dir(root):
    """A dump directory -> ({ns: [raw docs]}, {ns: metadata text})."""
    nss, metas = {}, {}
    for db in sorted(os.listdir(root)):
        p = os.path.join(root, db)
        if not os.path.isdir(p):
            continue
        for name in sorted(os.listdir(p)):
            fp = os.path.join(p, name)
            if name.endswith(".bson"):
                with open(fp, "rb") as f:
                    nss[db + "." + name[:-5]] = split_docs(f.read(), fp)
            elif name.endswith(".metadata.json"):
                with open(fp, encoding="utf-8") as f:
                    metas[db + "." + name[:-len(".metadata.json")]] = f.read()
    return nss, metas


def read_archive(path):
    """A plain mongodump archive -> ({ns: [raw docs]}, {ns: metadata text})."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x6d\xe2\x99\x81":
        raise ValueError("%s: bad magic %s" % (path, data[:4].hex()))
    i = 4

    def doc_at(i):
        n = struct.unpack_from("<i", data, i)[0]
        if n == -1:
            return None, i + 4
        if n < 5 or i + n > len(data):
            raise ValueError("%s: bad length %d at %d" % (path, n, i))
        return data[i:i + n], i + n

    _, i = doc_at(i)  # header
    metas, nss, closed = {}, {}, set()
    while True:
        d, i = doc_at(i)
        if d is None:
            break
        m = bson.decode(d)
        ns = m["db"] + "." + m["collection"]
        metas[ns] = m.get("metadata", "")
        nss.setdefault(ns, [])
    while i < len(data):
        h, i = doc_at(i)
        if h is None:
            raise ValueError("%s: terminator where a header is expected" % path)
        h = bson.decode(h)
        ns = h["db"] + "." + h["collection"]
        if ns not in nss:
            raise ValueError("%s: namespace %s not in the prelude" % (path, ns))
        while True:
            d, i = doc_at(i)
            if d is None:
                break
            if h["EOF"]:
                raise ValueError("%s: documents after EOF header of %s" % (path, ns))
            nss[ns].append(bytes(d))
        if h["EOF"]:
            closed.add(ns)
    if set(nss) - closed:
        raise ValueError("%s: namespaces never closed: %s" % (path, sorted(set(nss) - closed)))
    return nss, metas


# --- running ---------------------------------------------------------------

class Run(object):
    pass


def run_remodel(args, timeout=60):
    r = Run()
    p = subprocess.run([REMODEL] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout * SLOW)
    r.rc, r.out, r.err = p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")
    r.args = args
    return r


def leftovers(tmpdir):
    if not os.path.isdir(tmpdir):
        return []
    return sorted(os.listdir(tmpdir))


# --- comparison ------------------------------------------------------------

class Bindings(object):
    def __init__(self):
        self.values = {}
        self.problems = []

    def bind(self, ph, actual, where):
        if ph.kind == "$anyOid":
            if not isinstance(actual, ObjectId):
                self.problems.append("%s: want an ObjectId, got %r" % (where, actual))
                return
            if ph.time is not None:
                t = struct.unpack(">I", actual.binary[:4])[0]
                if t != ph.time:
                    self.problems.append("%s: ObjectId %s: time %d, want %d"
                                         % (where, actual, t, ph.time))
        key = ph.label
        if key in self.values:
            if encode_doc({"v": self.values[key]}) != encode_doc({"v": actual}):
                self.problems.append("%s: placeholder %s is %r here but %r elsewhere"
                                     % (where, key, actual, self.values[key]))
        else:
            # a label must not stand for two places holding the same id twice
            self.values[key] = actual


def _walk(exp, act, b, where):
    """Binds placeholders in exp to the values at the same place in act."""
    if isinstance(exp, Placeholder):
        b.bind(exp, act, where)
        return
    if isinstance(exp, dict) and isinstance(act, dict) and not isinstance(exp, RawBSONDocument):
        for k in exp:
            if k in act:
                _walk(exp[k], act[k], b, where + "." + k)
    elif isinstance(exp, list) and isinstance(act, list):
        for n, (e, a) in enumerate(zip(exp, act)):
            _walk(e, a, b, "%s.%d" % (where, n))


def _subst(exp, b):
    if isinstance(exp, Placeholder):
        if exp.label in b.values:
            return b.values[exp.label]
        return "<unbound %s %s>" % (exp.kind, exp.label)
    if isinstance(exp, RawBSONDocument):
        return exp
    if isinstance(exp, dict):
        return SON((k, _subst(v, b)) for k, v in exp.items())
    if isinstance(exp, list):
        return [_subst(v, b) for v in exp]
    return exp


def has_placeholder(exp):
    if isinstance(exp, Placeholder):
        return True
    if isinstance(exp, RawBSONDocument):
        return False
    if isinstance(exp, dict):
        return any(has_placeholder(v) for v in exp.values())
    if isinstance(exp, list):
        return any(has_placeholder(v) for v in exp)
    return False


def compare_ns(ns, expected, actual_raw, b, unordered=False):
    """expected: list of docs (maybe with placeholders); actual_raw: raw bytes.
    Returns a list of problem strings (empty when equal byte for byte)."""
    problems = []
    actual = []
    for n, raw in enumerate(actual_raw):
        try:
            actual.append(bson.decode(raw, COPTS))
        except Exception as e:
            problems.append("%s: document %d does not decode: %s" % (ns, n, e))
            actual.append(None)
    if not unordered:
        for n, (e, a) in enumerate(zip(expected, actual)):
            if a is not None:
                _walk(e, a, b, "%s[%d]" % (ns, n))
    want = [encode_doc(_subst(e, b)) for e in expected]
    got = list(actual_raw)
    if unordered:
        want_s, got_s = sorted(want), sorted(got)
    else:
        want_s, got_s = want, got
    if want_s != got_s:
        if unordered:
            wl = sorted(canon(x) for x in want)
            gl = sorted(canon(x) for x in got)
        else:
            wl = [canon(x) for x in want]
            gl = [canon(x) for x in got]
        diff = list(difflib.unified_diff(wl, gl, "expected " + ns, "got " + ns, lineterm="", n=2))
        if not diff or wl == gl:
            # same JSON, other bytes: show the first differing document in hex
            for n, (w, g) in enumerate(zip(want_s, got_s)):
                if w != g:
                    diff = ["%s document %d: same JSON, other bytes" % (ns, n),
                            "  want " + w.hex(), "  got  " + g.hex()]
                    break
            else:
                diff = ["%s: %d documents, want %d" % (ns, len(got_s), len(want_s))]
        problems.append("\n".join(diff))
    return problems


def bson_bytes_equal(a, b):
    """Two {ns: [raw]} maps -> list of differences."""
    out = []
    for ns in sorted(set(a) | set(b)):
        if ns not in a or ns not in b:
            out.append("namespace %s only in one output" % ns)
        elif a[ns] != b[ns]:
            out.append("namespace %s differs (%d vs %d documents)" % (ns, len(a[ns]), len(b[ns])))
    return out


class Reporter(object):
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, name):
        self.passed += 1
        print("PASS " + name, flush=True)

    def bad(self, name, why):
        self.failed += 1
        print("FAIL " + name, flush=True)
        for line in str(why).splitlines():
            sys.stderr.write("  " + line + "\n")
        sys.stderr.flush()

    def result(self, name, problems):
        if problems:
            self.bad(name, "\n".join(problems))
        else:
            self.ok(name)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        os.remove(path)


# CRC-64/XZ (ECMA-182, reflected), the CRC mongodump writes per namespace.
POLY = 0xC96C5795D7870F42
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc64(crc, data):
    """CRC-64/XZ continued over data (crc: a finished value, 0 to start)."""
    reg = crc ^ 0xFFFFFFFFFFFFFFFF
    for b in data:
        reg = TABLE[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg ^ 0xFFFFFFFFFFFFFFFF
