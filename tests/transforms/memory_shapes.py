"""The memory promise (docs/commands.md, "How a plan runs"), for the join shapes that used to break it
(issue 10, item 17): under --memory M a run's peak resident memory stays
under M plus a fixed allowance, whatever the data's shape. Each shape runs
at --memory 4M with children several times the allowance, so a run that
held one key's or one parent's children would fail the bound; each run's
output is checked too (counts, values, order), and the spilled run equals
the in-memory run byte for byte where both can run.

  python3 memory_shapes.py WORKDIR     (REMODEL=build/remodel)

Peak memory is the child's ru_maxrss from wait4, the kernel's own figure.
Under the sanitizers (REMODEL_SANITIZE) the shapes are a quarter the size
and only the outputs are checked.
Shapes:
  one key, many children: one parent with N children (N * ~300 bytes),
      beside a parent with 3: summarize ($count, $sum, $max, $topN of 5,
      $addToSet), embed with maxItems and onOverflow "outlier", embed
      without them (a clear error), $topN of 10^6 (a clear error);
  a key shared by every parent: many parents all asking for the same key
      (their requests pass the join's in-memory share), and a few parents
      sharing one key with many children;
  both sides huge: parents with arrays of references and children with
      arrays of owners, many of each, through the external sort (with its
      repeat-dropping pass) against the hash join;
  an extract whose children two parents share: each written once, the
      check of their _ids through the external sort.
"""

import json
import os
import struct
import subprocess
import sys

import bson
from bson.raw_bson import RawBSONDocument

REMODEL = os.environ.get("REMODEL") or "build/remodel"
SLOW = os.environ.get("REMODEL_SANITIZE")
MEMORY = 4 << 20
# What a run may hold beyond --memory: the program and its libraries, the
# write and read buffers, and at most a few documents' worth for the step
# (an embedded array being built and one overflow page, or $topN's 32 MiB
# of kept documents). docs/commands.md, "How a plan runs".
ALLOWANCE = 96 << 20

FAILED = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name)
    if not ok:
        FAILED.append(name)
        if detail:
            print("  " + str(detail)[:1500], file=sys.stderr)


def runner():
    """The process that starts remodel: forked first, while this script is
    small, since a child's peak RSS counts its parent's RSS at the fork (the
    kernel carries the high-water mark across exec). Reads one JSON
    argument list a line, answers [status, stderr, peak bytes]."""
    for line in sys.stdin:
        with open(os.devnull, "wb") as null:
            p = subprocess.Popen([REMODEL] + json.loads(line), stdout=null,
                                 stderr=subprocess.PIPE)
            err = p.stderr.read().decode("utf-8", "replace")
            _, status, usage = os.wait4(p.pid, 0)
        print(json.dumps([os.waitstatus_to_exitcode(status), err, usage.ru_maxrss * 1024]),
              flush=True)


RUNNER = None


def run(args):
    """(status, stderr, peak RSS in bytes) of remodel ARGS."""
    RUNNER.stdin.write(json.dumps(args) + "\n")
    RUNNER.stdin.flush()
    return tuple(json.loads(RUNNER.stdout.readline()))


def bounded(name, peak):
    if SLOW:
        return  # ASan's shadow memory and quarantine are not the program's
    check("%s: peak RSS %d MiB <= --memory 4M + %d MiB" % (name, peak >> 20, ALLOWANCE >> 20),
          peak <= MEMORY + ALLOWANCE, "peak %d bytes" % peak)


def write_bson(path, docs):
    with open(path, "wb") as f:
        for d in docs:
            f.write(bson.encode(d))


def read_bson(path):
    out = []
    with open(path, "rb") as f:
        data = f.read()
    i = 0
    while i < len(data):
        (n,) = struct.unpack_from("<i", data, i)
        out.append(bson.decode(data[i:i + n]))
        i += n
    return out


def dump(root, namespaces):
    os.makedirs(os.path.join(root, "m"), exist_ok=True)
    for coll, docs in namespaces.items():
        write_bson(os.path.join(root, "m", coll + ".bson"), docs)


def plan(path, *steps):
    with open(path, "w") as f:
        json.dump({"remodel": 1, "steps": list(steps)}, f)
    return path


def output(root, coll):
    return read_bson(os.path.join(root, "m", coll + ".bson"))


PAD = "x" * 240


def one_key(work, n):
    src = os.path.join(work, "one-key")
    kids = [{"_id": i, "p": 0 if i < n else 1, "ts": i, "tag": "t%d" % (i % 10), "pad": PAD}
            for i in range(n + 3)]
    dump(src, {"p": [{"_id": 0, "name": "big"}, {"_id": 1, "name": "small"}], "c": kids})
    del kids
    label = "one key with %d children (%d MB)" % (n, n * 300 // 1000000)

    summ = plan(os.path.join(work, "sum.json"), {"summarize": {
        "into": "m.p", "from": "m.c", "localField": "_id", "foreignField": "p",
        "fields": {"n": {"$count": {}}, "s": {"$sum": "$ts"}, "mx": {"$max": "$ts"},
                   "top": {"$topN": {"n": 5, "sortBy": {"ts": -1}, "output": "$ts"}},
                   "tags": {"$addToSet": "$tag"}}}})
    out = os.path.join(work, "o-sum")
    rc, err, peak = run(["run", summ, "--from", src, "--to", out, "--memory", "4M", "-q"])
    check(label + ": summarize exits 0", rc == 0, err)
    bounded(label + ": summarize", peak)
    if rc == 0:
        got = {d["_id"]: d for d in output(out, "p")}
        want_big = {"n": n, "s": n * (n - 1) // 2, "mx": n - 1,
                    "top": [n - 1, n - 2, n - 3, n - 4, n - 5],
                    "tags": ["t%d" % i for i in range(10)]}
        big = {k: got[0].get(k) for k in want_big}
        check(label + ": summarize's values", big == want_big, big)
        check(label + ": the other parent's values",
              [got[1].get("n"), got[1].get("s"), got[1].get("top")] ==
              [3, 3 * n + 3, [n + 2, n + 1, n]], got[1])

    emb = plan(os.path.join(work, "emb.json"), {"embed": {
        "from": "m.c", "into": "m.p", "localField": "_id", "foreignField": "p",
        "as": "kids", "countAs": "nKids", "maxItems": 1000, "onOverflow": "outlier"}})
    out = os.path.join(work, "o-emb")
    rc, err, peak = run(["run", emb, "--from", src, "--to", out, "--memory", "4M", "-q"])
    check(label + ": embed with outlier exits 0", rc == 0, err)
    bounded(label + ": embed with outlier", peak)
    if rc == 0:
        par = {d["_id"]: d for d in output(out, "p")}
        pages = output(out, "p_kids_overflow")
        big = par[0]
        ids = [k["_id"] for k in big["kids"]]
        for pg in sorted((p for p in pages if p["parent_id"] == 0), key=lambda p: p["page"]):
            ids += [k["_id"] for k in pg["kids"]]
        check(label + ": the parent holds 1000, counts them all, is flagged",
              [len(big["kids"]), big["nKids"], big.get("hasExtraKids")] == [1000, n, True],
              [len(big["kids"]), big.get("nKids"), big.get("hasExtraKids")])
        check(label + ": parent and pages hold every child once, in _id order",
              ids == list(range(n)), "%d ids" % len(ids))
        check(label + ": pages numbered from 2, 1000 children each",
              sorted(p["page"] for p in pages) == list(range(2, 2 + (n - 1000 + 999) // 1000)) and
              all(len(p["kids"]) == 1000 for p in pages[:-1]), len(pages))
        check(label + ": the small parent is whole, unflagged",
              [k["_id"] for k in par[1]["kids"]] == [n, n + 1, n + 2] and
              "hasExtraKids" not in par[1], par[1])
        check(label + ": no child left in m.c", output(out, "c") == [])

    for what, step, msg in (
            ("embed past maxItems without outlier",
             {"maxItems": 1000},
             "parent { \"_id\" : 0 } has %d matching children, more than maxItems 1000" % n),
            ("embed past 16 MiB without outlier", {},
             "parent { \"_id\" : 0 } with its %d children would be over the 16 MiB document "
             "limit" % n)):
        spec = {"from": "m.c", "into": "m.p", "localField": "_id", "foreignField": "p",
                "as": "kids"}
        spec.update(step)
        bad = plan(os.path.join(work, "bad.json"), {"embed": spec})
        rc, err, peak = run(["run", bad, "--from", src, "--to", os.path.join(work, "o-bad"),
                             "--memory", "4M", "-q"])
        lines = err.strip().split("\n")
        check(label + ": %s: exit 1, one line naming the parent and the count" % what,
              rc == 1 and len(lines) == 1 and msg in err, err)
        check(label + ": %s: nothing written" % what, not os.path.exists(os.path.join(work, "o-bad")))
        bounded(label + ": " + what, peak)

    topn = plan(os.path.join(work, "topn.json"), {"summarize": {
        "into": "m.p", "from": "m.c", "localField": "_id", "foreignField": "p",
        "fields": {"top": {"$topN": {"n": 1000000, "sortBy": {"ts": -1}, "output": "$pad"}}}}})
    rc, err, peak = run(["run", topn, "--from", src, "--to", os.path.join(work, "o-topn"),
                         "--memory", "4M", "-q"])
    check(label + ": $topN of 10^6: exit 1, one line saying why",
          rc == 1 and len(err.strip().split("\n")) == 1 and
          '"top": $topN: the ' in err and "could not fit in a 16 MiB document" in err, err)
    bounded(label + ": $topN of 10^6", peak)

    sets = plan(os.path.join(work, "set.json"), {"summarize": {
        "into": "m.p", "from": "m.c", "localField": "_id", "foreignField": "p",
        "fields": {"all": {"$addToSet": "$$ROOT"}}}})
    rc, err, peak = run(["run", sets, "--from", src, "--to", os.path.join(work, "o-set"),
                         "--memory", "4M", "-q"])
    check(label + ": $addToSet of 120 MB of distinct values: exit 1, one line saying why",
          rc == 1 and len(err.strip().split("\n")) == 1 and
          '"all": $addToSet: the ' in err and "pass 16 MiB" in err, err)
    bounded(label + ": $addToSet of 120 MB", peak)


def shared_key(work, parents, children, label):
    src = os.path.join(work, "shared-%d" % parents)
    dump(src, {"p": [{"_id": i, "g": 1} for i in range(parents)] + [{"_id": -1, "g": 2}],
               "c": [{"_id": i, "g": 1, "pad": PAD} for i in range(children)]})
    summ = plan(os.path.join(work, "sum-shared.json"), {"summarize": {
        "into": "m.p", "from": "m.c", "localField": "g", "foreignField": "g",
        "fields": {"n": {"$count": {}}, "last": {"$last": "$_id"}}}})
    out = os.path.join(work, "o-shared-%d" % parents)
    rc, err, peak = run(["run", summ, "--from", src, "--to", out, "--memory", "4M", "-q"])
    check(label + ": summarize exits 0", rc == 0, err)
    bounded(label + ": summarize", peak)
    if rc == 0:
        got = output(out, "p")
        check(label + ": every parent counts every child, the other none",
              all((d["n"], d["last"]) == ((children, children - 1) if d["g"] == 1 else (0, None))
                  for d in got) and len(got) == parents + 1,
              got[:2])


def both_huge(work, n):
    src = os.path.join(work, "both")
    # Parent i refers to children i and i+1 (an array: several keys, so
    # the external sort drops repeats); child i is owned by i-1 and i, so
    # a parent reaches child i+1... through both of its keys sometimes.
    dump(src, {"p": [{"_id": i, "refs": [i, i + 1, i]} for i in range(n)],
               "c": [{"_id": i, "owners": [i, i + 1], "pad": PAD} for i in range(n)]})
    emb = plan(os.path.join(work, "emb-both.json"), {"embed": {
        "from": "m.c", "into": "m.p", "localField": "refs", "foreignField": "owners",
        "as": "kids", "keepSource": True}})
    label = "both sides huge (%d parents, %d children, arrays on both)" % (n, n)
    outs = []
    for mem in ("4M", None):
        out = os.path.join(work, "o-both-%s" % mem)
        args = ["run", emb, "--from", src, "--to", out, "-q"] + (["--memory", mem] if mem else [])
        rc, err, peak = run(args)
        check(label + ": embed exits 0 (--memory %s)" % (mem or "default"), rc == 0, err)
        if mem:
            bounded(label + ": embed", peak)
        outs.append(out)
    a, b = (open(os.path.join(o, "m", "p.bson"), "rb").read() for o in outs)
    check(label + ": the external sort gives the hash join's bytes", a == b)
    if a == b:
        got = output(outs[0], "p")
        # refs [i, i+1]: children whose owners meet them: i-1 (owners i-1, i),
        # i (i, i+1), i+1 (i+1, i+2); ordered by slot, then _id: slot 0 (key
        # i) takes i-1 and i, slot 1 (key i+1) takes i+1.
        want = lambda i: [c for c in (i - 1, i, i + 1) if 0 <= c < n]
        check(label + ": each parent's children, each once, by slot then _id",
              all([k["_id"] for k in d["kids"]] == want(d["_id"]) for d in got),
              [(d["_id"], [k["_id"] for k in d["kids"]]) for d in got[:3]])


def extract_shared(work, n):
    """An extract whose children two parents share (issue 34): parent i
    holds children i and i+1, the same bytes in both; each written once,
    in the order first met, in one pass and store to store, the _ids'
    external sort within --memory."""
    src = os.path.join(work, "xs")
    dump(src, {"p": [{"_id": i, "kids": [{"_id": i, "pad": PAD}, {"_id": i + 1, "pad": PAD}]}
                     for i in range(n)]})
    x = plan(os.path.join(work, "x-shared.json"), {"extract": {
        "from": "m.p", "path": "kids", "to": "m.k", "style": "childRefs"}})
    label = "extract, %d children two parents share each" % (n - 1)
    for extra in ([], ["--batch"]):
        out = os.path.join(work, "o-xs%s" % "".join(extra))
        rc, err, peak = run(["run", x, "--from", src, "--to", out, "--memory", "4M", "-q"] + extra)
        name = label + (" (--batch)" if extra else "")
        check(name + ": exits 0, saying how many were left out", rc == 0 and
              "%d element(s) of \"kids\" made a child already made from another" % (n - 1) in err,
              err)
        bounded(name, peak)
        if rc == 0:
            got = [d["_id"] for d in output(out, "k")]
            check(name + ": each child once, in the order first met", got == list(range(n + 1)),
                  got[:5])


def main():
    global RUNNER
    if sys.argv[1] == "--runner":
        return runner()
    RUNNER = subprocess.Popen([sys.executable, __file__, "--runner"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    scale = 1 if not SLOW else 0.25
    one_key(work, int(400000 * scale))
    shared_key(work, int(120000 * scale), 3, "a key shared by %d parents" % int(120000 * scale))
    shared_key(work, 2, int(400000 * scale), "a key shared by 2 parents with %d children"
               % int(400000 * scale))
    both_huge(work, int(200000 * scale))
    extract_shared(work, int(150000 * scale))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
