"""The pipelines of `remodel compile PLAN --format pipeline`, run by mingo
(an independent implementation of MongoDB's aggregation language, npm,
tests/peers/mingo/run_pipelines.js), give the documents `remodel run PLAN`
writes: for every namespace of compile's "results", the same set of _ids
and, for each _id, the same document (the same field names in the same
order, the same values); and the namespaces outside "results" are the ones
remodel run leaves as they were.

  mingo_same.py --remodel R --mingo DIR --plan PLAN --src SRC --name NAME
                [--server-version V] [--label TEXT]

Prints one "PASS ..." or "FAIL ..." line per check (details of a failure on
stderr: the first differing path and both documents); a plan with a step
compile leaves client-side is not run here: a "SKIP ..." line names the
step and its reason, after a check that compile gave one. Exits 1 on any
FAIL.

Numbers compare by value, the named departure: JavaScript has one number
type, so mingo cannot keep int32, int64 and double apart, while MongoDB's
arithmetic and accumulators keep the BSON type of their inputs ("$sum":
"the result has the same type as the input, widened on overflow";
https://www.mongodb.com/docs/manual/reference/operator/aggregation/sum/).
An int32 5, an int64 5 and a double 5.0 are equal here; Decimal128 is
compared by value too. Everything else compares exactly: strings,
booleans, dates (to the millisecond), ObjectIds (their 12 bytes), binary,
nested documents (field names and their order) and arrays (elements and
their order). The types of numbers are checked byte for byte on a server
by tests/cli/test_compile.sh.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

from bson import decode_file_iter, json_util
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.decimal128 import Decimal128
from bson.json_util import JSONMode, JSONOptions
from bson.son import SON

DEPARTURE = "numbers by value: JavaScript has one number type"
CODEC = CodecOptions(document_class=SON, datetime_conversion=DatetimeConversion.DATETIME_AUTO)
CANON = JSONOptions(json_mode=JSONMode.CANONICAL, document_class=SON,
                    datetime_conversion=DatetimeConversion.DATETIME_AUTO)
RELAXED = JSONOptions(json_mode=JSONMode.RELAXED, document_class=SON,
                      datetime_conversion=DatetimeConversion.DATETIME_AUTO)
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "peers", "mingo", "run_pipelines.js")


def canon(v):
    return json_util.dumps(v, json_options=CANON)


def relaxed(v):
    return json_util.dumps(v, json_options=RELAXED)


def read_dir_dump(d):
    """{"db.coll": [documents]} of a directory dump (DIR/db/coll.bson)."""
    out = {}
    for db in sorted(os.listdir(d)):
        if not os.path.isdir(os.path.join(d, db)):
            continue
        for f in sorted(os.listdir(os.path.join(d, db))):
            if f.endswith(".bson"):
                with open(os.path.join(d, db, f), "rb") as fh:
                    out["%s.%s" % (db, f[:-5])] = list(decode_file_iter(fh, codec_options=CODEC))
    return out


def number(v):
    """v as an exact number when it is one (bool is not), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):  # int32 and Int64 (an int) and double
        return v
    if isinstance(v, Decimal128):
        return v.to_decimal()
    return None


def num_equal(a, b):
    if isinstance(a, float) and math.isnan(a) or isinstance(a, Decimal) and a.is_nan():
        return isinstance(b, float) and math.isnan(b) or isinstance(b, Decimal) and b.is_nan()
    if isinstance(b, float) and math.isnan(b) or isinstance(b, Decimal) and b.is_nan():
        return False
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a) == Decimal(b)  # Decimal(float) is exact
    return a == b  # exact between int and float in Python


def first_difference(want, have, path="$"):
    """None when equal (numbers by value), else (path, what differs)."""
    nw, nh = number(want), number(have)
    if nw is not None or nh is not None:
        if nw is None or nh is None:
            return path, "a number and a %s" % type(have if nw is not None else want).__name__
        return None if num_equal(nw, nh) else (path, "different numbers")
    if isinstance(want, dict) or isinstance(have, dict):
        if not (isinstance(want, dict) and isinstance(have, dict)):
            return path, "a document and a %s" % type(have if isinstance(want, dict) else want).__name__
        kw, kh = list(want.keys()), list(have.keys())
        if kw != kh:
            if sorted(kw) == sorted(kh):
                return path, "the same fields in another order: %s against %s" % (kw, kh)
            return path, "fields only in remodel run: %s; only in mingo: %s" % (
                [k for k in kw if k not in have], [k for k in kh if k not in want])
        for k in kw:
            d = first_difference(want[k], have[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(want, list) or isinstance(have, list):
        if not (isinstance(want, list) and isinstance(have, list)):
            return path, "an array and a %s" % type(have if isinstance(want, list) else want).__name__
        if len(want) != len(have):
            return path, "arrays of %d and %d elements" % (len(want), len(have))
        for i, (w, h) in enumerate(zip(want, have)):
            d = first_difference(w, h, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if type(want) is not type(have):
        return path, "a %s and a %s" % (type(want).__name__, type(have).__name__)
    return None if want == have else (path, "different values")


def at(doc, path):
    """The value at a path first_difference gave ("$.a[2].b")."""
    v = doc
    for name, idx in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:]):
        v = v[int(idx)] if idx else v[name]
    return v


def integer_like_names(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            if re.fullmatch(r"0|[1-9][0-9]{0,8}", k):  # an array index to JavaScript
                out.add(k)
            integer_like_names(x, out)
    elif isinstance(v, list):
        for x in v:
            integer_like_names(x, out)


def id_key(v):
    """A key for an _id, its numbers by value (mingo gives an int64 2 or a
    double 2.0 back as 2): the same key exactly when first_difference finds
    the two equal."""
    def norm(x):
        n = number(x)
        if n is not None:
            d = Decimal(n) if not isinstance(n, Decimal) else n
            return {"$number": "NaN" if d.is_nan() else str(d.normalize() if d else Decimal(0))}
        if isinstance(x, dict):
            return SON((k, norm(y)) for k, y in x.items())
        if isinstance(x, list):
            return [norm(y) for y in x]
        return x
    return canon(norm(v))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remodel", required=True)
    ap.add_argument("--mingo", required=True, help="the directory holding node_modules/mingo")
    ap.add_argument("--plan", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--server-version")
    ap.add_argument("--label", default="", help="added to every line (a named departure)")
    ap.add_argument("--departs-ns", action="append", default=[],
                    help="with --departs: a namespace the departure must show in")
    ap.add_argument("--departs", action="store_true",
                    help="the named departure is expected to show: a namespace that differs "
                         "passes (the difference reported), one that does not fails (update "
                         "the test); the real server judges such a case (test_compile.sh)")
    a = ap.parse_args()
    name = "mingo %s%s" % (a.name, " (%s)" % a.label if a.label else "")
    tmp = tempfile.mkdtemp(prefix="remodel-mingo.")
    try:
        return compare(a, name, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(a, name, tmp):
    cmd = [a.remodel, "compile", a.plan, "--format", "pipeline", "--canonical"]
    if a.server_version:
        cmd += ["--server-version", a.server_version]
    c = run(cmd)
    if c.returncode != 0:
        print("FAIL %s: remodel compile exits %d" % (name, c.returncode))
        print("  " + c.stderr.decode(errors="replace")[-800:], file=sys.stderr)
        return 1
    compiled = json_util.loads(c.stdout, json_options=CANON)
    client = [s for s in compiled["steps"] if not s.get("serverSide")]
    if client:
        bad = 0
        for s in client:
            label = "%s: compile names step %d (%s) client-side, with a reason" % (name, s["step"], s["op"])
            if s.get("reason") and "passes" not in s:
                print("PASS %s" % label)
            else:
                print("FAIL %s" % label)
                print("  the step: %s" % canon(s), file=sys.stderr)
                bad += 1
            print("SKIP %s: not run by mingo: step %d (%s) runs client-side: %s" % (
                name, s["step"], s["op"], s.get("reason")))
        return 1 if bad else 0

    out, src = os.path.join(tmp, "out"), os.path.join(tmp, "src")
    for cmd in ([a.remodel, "run", a.plan, "--from", a.src, "--to", out, "-q"],
                [a.remodel, "convert", a.src, src, "-q"]):
        r = run(cmd)
        if r.returncode != 0:
            print("FAIL %s: %s exits %d" % (name, " ".join(cmd[:2]), r.returncode))
            print("  " + r.stderr.decode(errors="replace")[-800:], file=sys.stderr)
            return 1
    source, offline = read_dir_dump(src), read_dir_dump(out)

    # mingo gets every collection of the databases the passes read or write.
    dbs = set()
    for s in compiled["steps"]:
        for p in s["passes"]:
            dbs.add(p["aggregate"]["db"])
            dbs.add(p["pipeline"][-1]["$merge"]["into"]["db"])
    payload = json_util.dumps(
        {"collections": {ns: docs for ns, docs in source.items() if ns.split(".", 1)[0] in dbs},
         "compiled": compiled}, json_options=CANON)
    # JavaScript objects put integer-like field names ("0", "7") first, in
    # numeric order, whatever their place in the document: mingo never sees
    # the order of such fields (MongoDB keeps every field's order:
    # https://www.mongodb.com/docs/manual/core/document/#document-field-order).
    # No dataset here has one; a case that does is labelled with it.
    ints = set()
    for ns, docs in source.items():
        if ns.split(".", 1)[0] in dbs:
            integer_like_names(docs, ints)
    if ints:
        name += " (holds integer-like field names %s, which JavaScript reorders)" % sorted(ints)[:5]
    env = dict(os.environ, NODE_PATH=os.path.join(a.mingo, "node_modules"))
    g = run(["node", RUNNER], input=payload.encode(), env=env)
    if g.returncode != 0:
        print("FAIL %s: run_pipelines.js exits %d" % (name, g.returncode))
        print("  " + g.stderr.decode(errors="replace")[-1500:], file=sys.stderr)
        return 1
    store = json_util.loads(g.stdout, json_options=CANON)["collections"]

    bad = 0
    results = compiled["results"]
    # Outside "results", remodel run leaves every namespace as it was.
    changed = [ns for ns in sorted(set(source) | set(offline))
               if ns not in results and first_difference(source.get(ns), offline.get(ns))]
    label = "%s: remodel run leaves the %d namespaces outside compile's results as they were" % (
        name, len(set(source) | set(offline)) - len(results))
    if changed:
        print("FAIL %s" % label)
        print("  changed by remodel run, not in results: %s" % changed, file=sys.stderr)
        bad += 1
    else:
        print("PASS %s" % label)

    for ns, where in results.items():
        coll = "%s.%s" % (where["db"], where["coll"])
        want = offline.get(ns, [])
        have = store.get(coll, [])
        wmap = {id_key(d["_id"]): d for d in want}
        hmap = {id_key(d.get("_id")): d for d in have}
        label = "%s: %s (%d documents; %s)" % (name, ns, len(want), DEPARTURE)
        problems = []
        if len(wmap) != len(want) or len(hmap) != len(have):
            problems.append("duplicate _ids: remodel run %d documents, %d _ids; mingo (%s) %d documents, %d _ids"
                            % (len(want), len(wmap), coll, len(have), len(hmap)))
        only_w, only_h = sorted(set(wmap) - set(hmap)), sorted(set(hmap) - set(wmap))
        if only_w or only_h:
            problems.append("%d _ids only in remodel run %s, %d only in mingo's %s %s" % (
                len(only_w), only_w[:5], len(only_h), coll, only_h[:5]))
        diffs = []
        for k in wmap:
            if k in hmap:
                d = first_difference(wmap[k], hmap[k])
                if d:
                    diffs.append((k, d))
        if diffs:
            problems.append("%d of %d documents differ" % (len(diffs), len(want)))
            for k, (path, what) in diffs[:3]:
                w, h = wmap[k], hmap[k]
                try:
                    wv, hv = canon(at(w, path)), canon(at(h, path))
                except (KeyError, IndexError, TypeError):
                    wv = hv = "(see the documents)"
                problems.append("_id %s at %s: %s\n    remodel run: %s\n    mingo:       %s\n"
                                "    remodel run's document: %s\n    mingo's document:       %s" % (
                                    k, path, what, wv, hv, relaxed(w), relaxed(h)))
        if problems and a.departs:
            print("PASS %s: differs from remodel run where the named departure predicts" % label)
            for p in problems:
                print("  " + p, file=sys.stderr)
        elif problems:
            print("FAIL %s" % label)
            for p in problems:
                print("  " + p, file=sys.stderr)
            bad += 1
        elif a.departs and ns in a.departs_ns:
            print("FAIL %s: the named departure no longer shows (update this test)" % label)
            bad += 1
        else:
            print("PASS %s" % label)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
