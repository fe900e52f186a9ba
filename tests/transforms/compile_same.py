"""Runs `remodel compile`'s pipelines with mingo (an independent
implementation of MongoDB's aggregation language, tests/peers/mingo) over
a dump, and compares the documents with those `remodel run` writes:
namespace by namespace, the same _ids, and for each the same fields in
the same order with the same values.

  compile_same.py REMODEL MINGO_DIR PLAN SRC NAME [--server-version V]

One departure of JavaScript, named rather than hidden: it has one number
type, so mingo cannot keep int32, int64 and double apart as $group does
(MongoDB's "$sum" documentation: the result has the type of its inputs,
widened on overflow). Numbers are compared by value here; their types are
checked byte for byte on a real server instead (tests/cli/test_compile.sh).
Prints one PASS/FAIL line per namespace; exits 1 on any FAIL."""
import json
import os
import subprocess
import sys
import tempfile

from bson import decode, json_util
from bson.int64 import Int64
from bson.json_util import JSONMode, JSONOptions
from bson.son import SON

import rmlib

CANON = JSONOptions(json_mode=JSONMode.CANONICAL, document_class=SON)


def norm(v):
    """v with every number as a float (the named departure), order kept."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float, Int64)):
        return float(v)
    if isinstance(v, dict):
        return [(k, norm(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def main():
    remodel, mingo, plan, src, name = sys.argv[1:6]
    version = sys.argv[7] if len(sys.argv) > 7 and sys.argv[6] == "--server-version" else "5.0"
    tmp = tempfile.mkdtemp(prefix="remodel-mingo.")
    off, whole = os.path.join(tmp, "off.archive"), os.path.join(tmp, "src.archive")
    subprocess.run([remodel, "run", plan, "--from", src, "--to", off, "-q"], check=True)
    subprocess.run([remodel, "convert", src, whole, "-q"], check=True)
    compiled = json_util.loads(subprocess.run([remodel, "compile", plan, "--server-version", version],
                                              check=True, capture_output=True).stdout, json_options=CANON)
    dbs = {ns.split(".", 1)[0] for ns in compiled["results"]}
    source = rmlib.read_archive(whole)[0]
    collections = {ns: [decode(bytes(d), codec_options=CANON.with_options()) for d in docs]
                   for ns, docs in source.items() if ns.split(".", 1)[0] in dbs}
    payload = json_util.dumps({"collections": collections, "compiled": compiled}, json_options=CANON)
    env = dict(os.environ, NODE_PATH=os.path.join(mingo, "node_modules"))
    here = os.path.dirname(os.path.abspath(__file__))
    runner = os.path.join(here, "..", "peers", "mingo", "run_pipelines.js")
    got = subprocess.run(["node", runner], input=payload.encode(), capture_output=True, env=env)
    if got.returncode != 0:
        print("FAIL mingo %s: the runner failed: %s" % (name, got.stderr.decode()[-600:]))
        return 1
    store = json_util.loads(got.stdout, json_options=CANON)["collections"]
    want_all = rmlib.read_archive(off)[0]
    bad = 0
    for ns, where in compiled["results"].items():
        want = [decode(bytes(d), codec_options=CANON.with_options()) for d in want_all.get(ns, [])]
        have = store.get("%s.%s" % (where["db"], where["coll"]), [])
        wmap = {json_util.dumps(d["_id"], json_options=CANON): d for d in want}
        hmap = {json_util.dumps(d["_id"], json_options=CANON): d for d in have}
        label = "mingo %s: %s (%d documents; numbers by value: JavaScript has one number type)" % (
            name, ns, len(want))
        if set(wmap) != set(hmap):
            print("FAIL %s" % label)
            print("  _ids only in remodel run: %s; only in mingo: %s" % (
                sorted(set(wmap) - set(hmap))[:3], sorted(set(hmap) - set(wmap))[:3]), file=sys.stderr)
            bad += 1
            continue
        diff = [k for k in wmap if norm(wmap[k]) != norm(hmap[k])]
        if diff:
            k = diff[0]
            print("FAIL %s" % label)
            print("  %d differ; first %s\n  remodel run: %s\n  mingo:       %s" % (
                len(diff), k, json_util.dumps(wmap[k])[:700], json_util.dumps(hmap[k])[:700]), file=sys.stderr)
            bad += 1
        else:
            print("PASS %s" % label)
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        print("FAIL mingo %s: %s" % (sys.argv[5] if len(sys.argv) > 5 else "?", e))
        sys.exit(1)
