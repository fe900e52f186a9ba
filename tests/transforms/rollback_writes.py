"""The application's writes after the cut-over, for
tests/cli/test_online_rollback_writes.sh (issue 34): the embed of
dumps/plans/embed-tasks.json finalized, the application then writes the
new design, and rollback must not lose it.

  rollback_writes.py snapshot URI FILE
      crm.people and crm.tasks as they are (the originals, before
      finalize), raw, into FILE.
  rollback_writes.py write URI FILE [TAG]
      the application's writes to the new crm.people (tasks embedded) and
      crm.tasks (the orphans), after the switch: a person renamed, a task
      pushed into their array, another of theirs changed in place, a task
      pulled from a second person, a person inserted with a task of their
      own, an orphan task inserted. What the originals must become is
      noted in FILE (beside the snapshot). The new _ids end with TAG, so
      that a later cycle writes others.
  rollback_writes.py check URI FILE MODE
      MODE carried: crm.people and crm.tasks are the snapshot with those
      writes carried back: every untouched document byte for byte, each
      written one with the fields and values expected (any order).
      MODE original: they are the snapshot, byte for byte.
      Prints "ok" or what differs.
"""
import pickle
import sys

import bson
import pymongo
from bson.raw_bson import RawBSONDocument


def client(uri):
    return pymongo.MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10000,
                               document_class=RawBSONDocument)


def raw(coll):
    return {bson.decode(d.raw)["_id"]: d.raw for d in coll.find()}


def main():
    cmd, uri, path = sys.argv[1:4]
    c = client(uri)
    db = c.crm
    if cmd == "snapshot":
        with open(path, "wb") as f:
            pickle.dump({"people": raw(db.people), "tasks": raw(db.tasks)}, f)
        return
    with open(path, "rb") as f:
        snap = pickle.load(f)
    if cmd == "write":
        tag = sys.argv[4] if len(sys.argv) > 4 else ""
        people = [bson.decode(d.raw) for d in db.people.find().sort("_id", 1)]
        with_tasks = [p for p in people if len(p.get("tasks", [])) >= 2]
        p1, p2 = with_tasks[0], with_tasks[1]
        t_changed, t_pulled = p1["tasks"][0]["_id"], p2["tasks"][0]["_id"]
        db.people.update_one({"_id": p1["_id"]}, {"$set": {"name": "Renamed After Switch"}})
        db.people.update_one({"_id": p1["_id"]}, {"$push": {"tasks": {
            "_id": "t-new" + tag, "description": "added after the switch", "priority": 1}}})
        # The whole array set: FerretDB has no positional update.
        now = bson.decode(db.people.find_one({"_id": p1["_id"]}).raw)["tasks"]
        for t in now:
            if t["_id"] == t_changed:
                t["description"] = "changed after the switch"
        db.people.update_one({"_id": p1["_id"]}, {"$set": {"tasks": now}})
        # (FerretDB's $pull takes no condition on an element's field.)
        db.people.update_one({"_id": p2["_id"]},
                             {"$set": {"tasks": [t for t in p2["tasks"] if t["_id"] != t_pulled]}})
        db.people.insert_one(RawBSONDocument(bson.encode({
            "_id": "p-new" + tag, "name": "Inserted After Switch",
            "tasks": [{"_id": "t-new2" + tag, "description": "theirs"}]})))
        db.tasks.insert_one(RawBSONDocument(bson.encode({
            "_id": "o-new" + tag, "description": "an orphan after the switch", "owner": "nobody"})))
        snap["want"] = {"p1": p1["_id"], "p2": p2["_id"], "changed": t_changed,
                        "pulled": t_pulled, "tag": tag}
        with open(path, "wb") as f:
            pickle.dump(snap, f)
        return
    mode = sys.argv[4]
    got = {"people": raw(db.people), "tasks": raw(db.tasks)}
    want = {k: {i: bson.decode(b) for i, b in v.items()} for k, v in snap.items() if k != "want"}
    touched = {"people": set(), "tasks": set()}
    if mode == "carried":
        w = snap["want"]
        tag = w["tag"]
        want["people"][w["p1"]]["name"] = "Renamed After Switch"
        want["people"]["p-new" + tag] = {"_id": "p-new" + tag, "name": "Inserted After Switch"}
        want["tasks"]["t-new" + tag] = {"_id": "t-new" + tag,
                                         "description": "added after the switch", "priority": 1, "owner": w["p1"]}
        want["tasks"][w["changed"]]["description"] = "changed after the switch"
        del want["tasks"][w["pulled"]]
        want["tasks"]["t-new2" + tag] = {"_id": "t-new2" + tag, "description": "theirs", 
                                          "owner": "p-new" + tag}
        want["tasks"]["o-new" + tag] = {"_id": "o-new" + tag,
                                         "description": "an orphan after the switch",
                                         "owner": "nobody"}
        touched = {"people": {w["p1"], "p-new" + tag},
                   "tasks": {"t-new" + tag, w["changed"], "t-new2" + tag, "o-new" + tag}}
    bad = []
    for ns in ("people", "tasks"):
        if set(got[ns]) != set(want[ns]):
            bad.append("%s: _ids: %d extra, %d missing" % (
                ns, len(set(got[ns]) - set(want[ns])), len(set(want[ns]) - set(got[ns]))))
            continue
        for i, b in got[ns].items():
            if i in touched[ns]:
                if bson.decode(b) != want[ns][i]:
                    bad.append("%s %r: %r, want %r" % (ns, i, bson.decode(b), want[ns][i]))
            elif b != snap[ns][i]:
                bad.append("%s %r: not byte for byte the original" % (ns, i))
    print("ok %d %d" % (len(got["people"]), len(got["tasks"])) if not bad else "; ".join(bad[:5]))


main()
