"""An application writing while `remodel online` runs: random updates,
inserts and deletes of crm.people and crm.tasks documents, one at a time,
until STOPFILE exists (then it removes it and exits).

  online_writer.py URI STOPFILE SEED

Prints what it did ("updates N inserts N deletes N") when it stops."""
import datetime
import os
import random
import sys
import time

import pymongo
from bson import ObjectId


def main():
    uri, stop, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rnd = random.Random(seed)
    db = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000).crm
    people = [d["_id"] for d in db.people.find({}, {"_id": 1})]
    tasks = [d["_id"] for d in db.tasks.find({}, {"_id": 1})]
    counts = {"updates": 0, "inserts": 0, "deletes": 0}
    n = 0
    while not os.path.exists(stop):
        n += 1
        what = rnd.random()
        if what < 0.5 and tasks:
            db.tasks.update_one({"_id": rnd.choice(tasks)},
                                {"$set": {"title": "changed %d" % n, "owner": rnd.choice(people)}})
            counts["updates"] += 1
        elif what < 0.65:
            t = {"_id": ObjectId(), "owner": rnd.choice(people), "title": "new %d" % n,
                 "due_date": datetime.datetime(2024, 1, 1) + datetime.timedelta(days=n)}
            db.tasks.insert_one(t)
            tasks.append(t["_id"])
            counts["inserts"] += 1
        elif what < 0.75 and tasks:
            victim = tasks.pop(rnd.randrange(len(tasks)))
            db.tasks.delete_one({"_id": victim})
            counts["deletes"] += 1
        elif what < 0.9 and people:
            db.people.update_one({"_id": rnd.choice(people)}, {"$set": {"active": n % 2 == 0}})
            counts["updates"] += 1
        elif what < 0.95:
            p = {"_id": ObjectId(), "name": "new person %d" % n, "active": True}
            db.people.insert_one(p)
            people.append(p["_id"])
            counts["inserts"] += 1
        elif len(people) > 10:
            victim = people.pop(rnd.randrange(len(people)))
            db.people.delete_one({"_id": victim})
            counts["deletes"] += 1
        time.sleep(0.002)
    os.remove(stop)
    print("updates %(updates)d inserts %(inserts)d deletes %(deletes)d" % counts)


if __name__ == "__main__":
    main()
