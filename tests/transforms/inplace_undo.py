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
  inplace_undo.py check URI FILE LOG ERR
      after rollback: every task's last acknowledged value of each field
      the application wrote is there; no task holds owner_email that its
      original lacked unless ERR (rollback's stderr) names it; every task
      the application never wrote is its original (byte for byte with
      "bytes" as a fifth argument, else the same fields and values).
      Prints "lost N stale N unnamed N changed N".
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


def check(uri, path, log, err, mode=""):
    from bson import decode_file_iter
    with open(path, "rb") as f:
        orig = {d["_id"]: d for d in decode_file_iter(f)}
    last = {}
    for line in open(log):
        w = json_util.loads(line)
        last[(w["_id"], w["field"])] = w["value"]
    touched = {k[0] for k in last}
    said = open(err).read()
    lost = stale = unnamed = changed = 0
    for d in client(uri).tasks.find():
        i = d["_id"]
        named = str(i) in said
        for (j, f), v in last.items():
            if j == i and d.get(f) != v:
                lost += 1
        if "owner_email" in d and "owner_email" not in orig[i]:
            stale += 1
            unnamed += not named
        if i not in touched:
            if mode == "bytes":
                same = BSON.encode(d) == BSON.encode(orig[i])
            else:
                same = sorted(d.items()) == sorted(orig[i].items())
            changed += not same and not named
    print("lost %d stale %d unnamed %d changed %d" % (lost, stale, unnamed, changed))


if __name__ == "__main__":
    {"snap": snap, "write": write, "check": check}[sys.argv[1]](*sys.argv[2:])
