"""An application writing crm.tasks while an in-place plan (owner_email
denormalized into each task) runs, follows and syncs, and the judge of the
rollback after it (tests/cli/test_online_rollback_inplace.sh, issue 35).

  inplace_undo.py snap URI FILE
      crm.tasks as it is now (before remodel), into FILE.
  inplace_undo.py write URI STOP SEED LOG
      until STOP exists: $set of a random task's description, priority or
      owner, and of a random person's email (which remodel copies); each
      acknowledged task write appended to LOG as an extended JSON line
      {"_id", "field", "value"}. Prints how many writes it made.
  inplace_undo.py tail URI STOP OUT
      until STOP exists (then once more): each new entry of crm.tasks in
      the server's oplog (FerretDB's local.oplog.rs; none where the server
      has none), in its order, appended to OUT, read every 50 ms, so that
      the judge has the trial's whole history though the oplog is 1 MiB.
  inplace_undo.py before URI BEFORE
      once the writer has stopped, before rollback: crm.tasks into
      BEFORE.
  inplace_undo.py check URI FILE LOG ERR BEFORE OPLOG [bytes]
      after rollback: every task's last acknowledged value of each field
      the application wrote is there; no task holds owner_email that its
      original lacked unless ERR (rollback's stderr) names it; every task
      the application never wrote is its original (byte for byte with
      "bytes", else the same fields and values). Prints "lost N stale N
      unnamed N changed N"; each write lost on stderr.

      A write already gone before rollback is not counted as lost when the
      oplog shows FerretDB 1.x's own update race undid it (raced): that
      server runs an update as a read of the document, then a write of the
      whole of it, with nothing between, so an update whose read came
      before another's write puts back what that write changed
      (docs/online-servers.md). Its mark, in OPLOG (tail's): an entry with the
      value, and another without it that is an entry from before both
      (or the original) with only remodel's owner_email changed: the
      stale read with remodel's $set applied, which no $set of
      owner_email can make on a server whose updates are atomic. That
      other entry comes after the value's, or before it when the value's
      entry is that same earlier version with only the value changed
      (both updates read it; the server logs each after it commits, so
      the one that committed last may be logged first). Anything else (a write rollback undid, one the oplog does not
      explain, every loss where the server has no oplog) is lost. Prints the raced ones on stderr, their count as
      "raced N" on the last line of stderr.
"""
import os
import random
import sys
import time

import pymongo
from bson import BSON, json_util


def client(uri):
    return pymongo.MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10000).crm


def snap(uri, path):
    with open(path, "wb") as f:
        for d in client(uri).tasks.find({}, sort=[("_id", 1)]):
            f.write(BSON.encode(d))


def write(uri, stop, seed, log):
    rnd = random.Random(int(seed))
    db = client(uri)
    tasks = sorted(d["_id"] for d in db.tasks.find({}, {"_id": 1}))
    people = sorted(d["_id"] for d in db.people.find({}, {"_id": 1}))
    n = 0
    with open(log, "a") as f:
        while not os.path.exists(stop):
            n += 1
            if rnd.random() < 0.2:
                db.people.update_one({"_id": rnd.choice(people)}, {"$set": {"email": "p%d@app.test" % n}})
            else:
                field = rnd.choice(["description", "priority", "owner"])
                value = ("app %s %d" % (seed, n) if field == "description"
                         else n if field == "priority" else rnd.choice(people))
                t = rnd.choice(tasks)
                db.tasks.update_one({"_id": t}, {"$set": {field: value}})
                f.write(json_util.dumps({"_id": t, "field": field, "value": value}) + "\n")
                f.flush()
            time.sleep(0.01)
    print(n)


def tail(uri, stop, out):
    c = pymongo.MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10000)
    if "oplog.rs" not in c.local.list_collection_names():
        open(out, "wb").close()
        return
    last = None
    with open(out, "wb") as f:
        while True:
            done = os.path.exists(stop)
            q = {"ns": "crm.tasks"}
            if last is not None:
                q["ts"] = {"$gt": last}
            for e in c.local.oplog.rs.find(q):
                f.write(BSON.encode(e))
                last = e["ts"] if last is None or e["ts"] > last else last
            f.flush()
            if done:
                return
            time.sleep(0.05)


def before(uri, path):
    snap(uri, path)


def raced(ops, orig, t, f, v):
    """Whether the oplog shows FerretDB's update race undid task t's
    field f = v (see check above)."""
    docs = [orig]
    for e in ops:
        if e["op"] == "u" and e["o2"]["_id"] == t:
            docs.append(e["o"]["$set"])
        elif e["op"] == "i" and e["o"]["_id"] == t:
            docs.append(e["o"])
    rest = lambda d: sorted((k, x) for k, x in d.items() if k != "owner_email")
    but = lambda d: sorted((k, x) for k, x in d.items() if k != f)
    for a, d in enumerate(docs):
        if a == 0 or d.get(f) != v:
            continue
        for b, undo in enumerate(docs):
            if b == 0 or undo.get(f) == v:
                continue
            for prev in docs[:min(a, b)]:
                if rest(undo) != rest(prev) or undo.get("owner_email") == prev.get("owner_email"):
                    continue
                # After the value's entry; or before it, the value's own
                # write made of that same earlier version (both read it).
                if b > a or but(d) == but(prev):
                    return True
    return False


def check(uri, path, log, err, pre, oplog, mode=""):
    from bson import decode_file_iter
    with open(path, "rb") as f:
        orig = {d["_id"]: d for d in decode_file_iter(f)}
    with open(pre, "rb") as f:
        was = {d["_id"]: d for d in decode_file_iter(f)}
    with open(oplog, "rb") as f:
        ops = list(decode_file_iter(f))
    last = {}
    for line in open(log):
        w = json_util.loads(line)
        last[(w["_id"], w["field"])] = w["value"]
    touched = {k[0] for k in last}
    said = open(err).read()
    lost = stale = unnamed = changed = n_raced = 0
    for d in client(uri).tasks.find():
        i = d["_id"]
        named = str(i) in said
        for (j, f), v in last.items():
            if j != i or d.get(f) == v:
                continue
            gone = was.get(i, {}).get(f) != v
            if gone and raced(ops, orig[i], i, f, v):
                n_raced += 1
                print("raced: task %s %s: %r written, undone by the server's update race "
                      "before rollback" % (i, f, v), file=sys.stderr)
                continue
            lost += 1
            print("lost: task %s %s: %r written, %r found (%s)" % (
                i, f, v, d.get(f), "before rollback" if gone else "by rollback"), file=sys.stderr)
            for e in ops:  # what the oplog holds of it, to see why
                o = e["o"].get("$set", e["o"])
                if o.get("_id") == i:
                    print("  %s %s: %s" % (e["ts"], e["op"], json_util.dumps(
                        {k: x for k, x in o.items() if k in (f, "owner", "owner_email")})),
                        file=sys.stderr)
        if "owner_email" in d and "owner_email" not in orig[i]:
            stale += 1
            unnamed += not named
        if i not in touched:
            if mode == "bytes":
                same = BSON.encode(d) == BSON.encode(orig[i])
            else:
                same = sorted(d.items()) == sorted(orig[i].items())
            changed += not same and not named
    print("raced %d" % n_raced, file=sys.stderr)
    print("lost %d stale %d unnamed %d changed %d" % (lost, stale, unnamed, changed))


if __name__ == "__main__":
    {"snap": snap, "write": write, "tail": tail, "before": before, "check": check}[sys.argv[1]](*sys.argv[2:])
