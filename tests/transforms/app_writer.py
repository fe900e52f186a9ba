"""An application writing to a plan's source collections while `remodel
online` copies them (tests/cli/test_online_follow.sh, issue 23): a bounded
loop of N operations, deterministic for a seed and a starting state, each
followed by a short sleep, touching exactly the collections the profile
names.

  app_writer.py load URI DB SEED
      makes DB.customers and DB.orders (the "shop" profile's sources): 120
      customers with a unique string "code", 800 orders whose "cust" holds
      a customer's code (some a code no customer has: orphans).

  app_writer.py write URI PROFILE DB SEED N [--ready FILE] [--start FILE] [--end FILE]
      PROFILE, and what it writes:
        tasks    DB.people, DB.tasks (tasks.owner = people._id): new tasks
                 and people, a task moved to another owner (or to none),
                 tasks' copied fields changed (description, the sort key
                 due_date, priority set and unset), people's fields, tasks
                 and people deleted, whole tasks and people replaced
        people   DB.people with its addresses arrays: new people, an
                 address moved to another person, address fields changed,
                 addresses pushed, the array emptied or removed, people
                 deleted and replaced
        shop     DB.customers, DB.orders (orders.cust = customers.code, a
                 non-_id key): new orders and customers (some taking a code
                 orphans refer to), an order moved to another customer,
                 customers' codes changed, copied and summed fields changed
                 (name, tier, amount, ts), orders and customers deleted and
                 replaced
        readings DB.readings (iot: sensor_id, ts): new readings (some of a
                 new series), changed temperatures, a reading moved in time
                 or to another series, readings deleted and replaced
      --ready FILE: created once connected, its state read, before any
      write.
      --start FILE: waits (up to 120 s) until FILE is not empty (the run's
      first line, said before it reads any source) before the first write.
      --end FILE: counts the operations made before FILE exists (the test
      creates it when the run has ended).

Prints one JSON line when done: {"ops": N, "during": M, "kinds": {...},
"seconds": S},
M the operations acknowledged before --end's file appeared (N without
it)."""
import datetime
import json
import os
import random
import sys
import time

import pymongo
from bson import ObjectId

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliet", "kilo", "lima")
CITIES = ("Oslo", "Lyon", "Porto", "Graz", "Turku", "Cork", "Split")


def client(uri):
    return pymongo.MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10000)


def load(uri, dbname, seed):
    rnd = random.Random(seed)
    db = client(uri)[dbname]
    customers = []
    for i in range(120):
        customers.append({"_id": i + 1, "code": "C%03d" % i, "name": "customer %d" % i,
                          "tier": rnd.choice(("basic", "gold", "plus")),
                          "region": rnd.choice(("eu", "us", "apac"))})
    codes = [c["code"] for c in customers] + ["X%03d" % i for i in range(5)]
    orders = []
    base = datetime.datetime(2024, 1, 1)
    for i in range(800):
        o = {"_id": 1000 + i, "cust": rnd.choice(codes), "amount": rnd.randrange(1, 500),
             "status": rnd.choice(("new", "paid", "shipped")),
             "ts": base + datetime.timedelta(minutes=rnd.randrange(500000))}
        if i % 7 == 0:
            del o["status"]
        orders.append(o)
    db.customers.insert_many(customers)
    db.orders.insert_many(orders)


class Writer(object):
    def __init__(self, db, rnd):
        self.db, self.rnd = db, rnd
        self.kinds = {}

    def did(self, kind):
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def pick(self, ids):
        return self.rnd.choice(ids) if ids else None

    def drop(self, ids):
        return ids.pop(self.rnd.randrange(len(ids))) if ids else None


class Tasks(Writer):
    def __init__(self, db, rnd):
        Writer.__init__(self, db, rnd)
        self.people = [d["_id"] for d in db.people.find({}, {"_id": 1}).sort("_id", 1)]
        self.tasks = [d["_id"] for d in db.tasks.find({}, {"_id": 1}).sort("_id", 1)]

    def owner(self):
        # Now and then an owner no person has: an orphan.
        return ObjectId() if self.rnd.random() < 0.1 else self.pick(self.people)

    def task(self, n, _id=None):
        t = {"_id": _id or ObjectId(), "description": "%s task %d" % (self.rnd.choice(WORDS), n),
             "due_date": datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=self.rnd.randrange(9000)),
             "owner": self.owner(), "done": self.rnd.random() < 0.5}
        if self.rnd.random() < 0.5:
            t["priority"] = self.rnd.randrange(1, 4)
        return t

    def step(self, n):
        r, db = self.rnd.random(), self.db
        if r < 0.15:
            t = self.task(n)
            db.tasks.insert_one(t)
            self.tasks.append(t["_id"])
            self.did("insert task")
        elif r < 0.2:
            p = {"_id": ObjectId(), "name": "new person %d" % n, "email": "p%d@example.org" % n,
                 "active": True}
            db.people.insert_one(p)
            self.people.append(p["_id"])
            self.did("insert person")
        elif r < 0.38 and self.tasks:
            db.tasks.update_one({"_id": self.pick(self.tasks)}, {"$set": {"owner": self.owner()}})
            self.did("move task")
        elif r < 0.55 and self.tasks:
            f = self.rnd.choice(("description", "due_date", "priority", "-priority"))
            if f == "-priority":
                u = {"$unset": {"priority": ""}}
            elif f == "due_date":
                u = {"$set": {"due_date": datetime.datetime(2023, 6, 1) + datetime.timedelta(hours=n)}}
            elif f == "priority":
                u = {"$set": {"priority": self.rnd.randrange(1, 4)}}
            else:
                u = {"$set": {"description": "changed %d" % n}}
            db.tasks.update_one({"_id": self.pick(self.tasks)}, u)
            self.did("update task")
        elif r < 0.63 and self.people:
            db.people.update_one({"_id": self.pick(self.people)},
                                 {"$set": {"name": "renamed %d" % n, "active": n % 2 == 0}})
            self.did("update person")
        elif r < 0.75 and self.tasks:
            db.tasks.delete_one({"_id": self.drop(self.tasks)})
            self.did("delete task")
        elif r < 0.8 and len(self.people) > 10:
            db.people.delete_one({"_id": self.drop(self.people)})
            self.did("delete person")
        elif r < 0.92 and self.tasks:
            _id = self.pick(self.tasks)
            db.tasks.replace_one({"_id": _id}, self.task(n, _id))
            self.did("replace task")
        elif self.people:
            _id = self.pick(self.people)
            db.people.replace_one({"_id": _id}, {"name": "replaced %d" % n, "active": False,
                                                 "tags": [self.rnd.choice(WORDS)]})
            self.did("replace person")


class People(Writer):
    def __init__(self, db, rnd):
        Writer.__init__(self, db, rnd)
        self.people = [d["_id"] for d in db.people.find({}, {"_id": 1}).sort("_id", 1)]

    def address(self, n):
        a = {"street": "%d %s St" % (n, self.rnd.choice(WORDS).title()),
             "city": self.rnd.choice(CITIES), "cc": self.rnd.choice(("NOR", "FRA", "PRT"))}
        if self.rnd.random() < 0.3:
            a["zip"] = "%05d" % n
        return a

    def addresses(self, _id):
        d = self.db.people.find_one({"_id": _id}, {"addresses": 1})
        return d.get("addresses") if d else None

    def step(self, n):
        r, db = self.rnd.random(), self.db
        if r < 0.15:
            p = {"_id": ObjectId(), "name": "new person %d" % n,
                 "addresses": [self.address(n + k) for k in range(self.rnd.randrange(4))],
                 "active": True}
            db.people.insert_one(p)
            self.people.append(p["_id"])
            self.did("insert person")
        elif r < 0.35:
            # An address moved from one person to another (read, then written back).
            a, b = self.pick(self.people), self.pick(self.people)
            src = self.addresses(a)
            if a == b or not isinstance(src, list) or not src:
                return self.step_push(n)
            moved = src.pop(self.rnd.randrange(len(src)))
            dst = self.addresses(b)
            dst = (dst if isinstance(dst, list) else []) + [moved]
            db.people.update_one({"_id": a}, {"$set": {"addresses": src}})
            db.people.update_one({"_id": b}, {"$set": {"addresses": dst}})
            self.did("move address")
        elif r < 0.5:
            _id = self.pick(self.people)
            src = self.addresses(_id)
            if not isinstance(src, list) or not src:
                return self.step_push(n)
            k = self.rnd.randrange(len(src))
            db.people.update_one({"_id": _id}, {"$set": {"addresses.%d.city" % k: self.rnd.choice(CITIES),
                                                         "addresses.%d.zip" % k: "%05d" % n}})
            self.did("update address")
        elif r < 0.6:
            self.step_push(n)
        elif r < 0.68:
            db.people.update_one({"_id": self.pick(self.people)},
                                 {"$set": {"name": "renamed %d" % n, "active": n % 2 == 0}})
            self.did("update person")
        elif r < 0.74:
            if self.rnd.random() < 0.5:
                db.people.update_one({"_id": self.pick(self.people)}, {"$set": {"addresses": []}})
            else:
                db.people.update_one({"_id": self.pick(self.people)}, {"$unset": {"addresses": ""}})
            self.did("empty addresses")
        elif r < 0.84 and len(self.people) > 10:
            db.people.delete_one({"_id": self.drop(self.people)})
            self.did("delete person")
        else:
            _id = self.pick(self.people)
            db.people.replace_one({"_id": _id}, {
                "name": "replaced %d" % n, "active": False,
                "addresses": [self.address(n + k) for k in range(self.rnd.randrange(1, 3))]})
            self.did("replace person")

    def step_push(self, n):
        _id = self.pick(self.people)
        cur = self.addresses(_id)
        if isinstance(cur, list):
            self.db.people.update_one({"_id": _id}, {"$push": {"addresses": self.address(n)}})
        else:
            self.db.people.update_one({"_id": _id}, {"$set": {"addresses": [self.address(n)]}})
        self.did("push address")


class Shop(Writer):
    def __init__(self, db, rnd):
        Writer.__init__(self, db, rnd)
        self.customers = [d["_id"] for d in db.customers.find({}, {"_id": 1}).sort("_id", 1)]
        self.orders = [d["_id"] for d in db.orders.find({}, {"_id": 1}).sort("_id", 1)]
        self.codes = set(d["code"] for d in db.customers.find({}, {"code": 1}))
        self.referenced = sorted(set(d["cust"] for d in db.orders.find({}, {"cust": 1})) - self.codes)
        # New _ids after every one there (an earlier writer's too).
        self.next_id = max([100000] + self.customers + self.orders)

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def fresh_code(self, n):
        # A code orphans refer to, now and then, else a new one; never one a
        # customer holds (codes stay unique).
        if self.referenced and self.rnd.random() < 0.4:
            return self.referenced.pop(self.rnd.randrange(len(self.referenced)))
        return "N%04d" % n

    def code_of(self, _id):
        d = self.db.customers.find_one({"_id": _id}, {"code": 1})
        return d.get("code") if d else None

    def some_code(self, n):
        if self.rnd.random() < 0.1:
            c = "Z%04d" % n  # nobody's: an orphan
            self.referenced.append(c)
            return c
        return self.rnd.choice(sorted(self.codes))

    def order(self, n, _id=None):
        o = {"_id": _id or self.new_id(), "cust": self.some_code(n), "amount": self.rnd.randrange(1, 500),
             "status": self.rnd.choice(("new", "paid", "shipped")),
             "ts": datetime.datetime(2024, 1, 1) + datetime.timedelta(minutes=self.rnd.randrange(500000))}
        if self.rnd.random() < 0.2:
            o["note"] = self.rnd.choice(WORDS)
        return o

    def step(self, n):
        r, db = self.rnd.random(), self.db
        if r < 0.15:
            o = self.order(n)
            db.orders.insert_one(o)
            self.orders.append(o["_id"])
            self.did("insert order")
        elif r < 0.2:
            c = {"_id": self.new_id(), "code": self.fresh_code(n), "name": "new customer %d" % n,
                 "tier": "basic"}
            db.customers.insert_one(c)
            self.customers.append(c["_id"])
            self.codes.add(c["code"])
            self.did("insert customer")
        elif r < 0.35 and self.orders:
            db.orders.update_one({"_id": self.pick(self.orders)}, {"$set": {"cust": self.some_code(n)}})
            self.did("move order")
        elif r < 0.45 and self.customers:
            _id = self.pick(self.customers)
            old, new = self.code_of(_id), self.fresh_code(n)
            db.customers.update_one({"_id": _id}, {"$set": {"code": new}})
            self.codes.discard(old)
            self.codes.add(new)
            if old is not None:
                self.referenced.append(old)
            self.did("change code")
        elif r < 0.52 and self.customers:
            db.customers.update_one({"_id": self.pick(self.customers)},
                                    {"$set": {"name": "renamed %d" % n,
                                              "tier": self.rnd.choice(("basic", "gold", "plus"))}})
            self.did("update customer")
        elif r < 0.65 and self.orders:
            if self.rnd.random() < 0.5:
                u = {"$inc": {"amount": self.rnd.randrange(1, 50)}}
            else:
                u = {"$set": {"ts": datetime.datetime(2025, 1, 1) + datetime.timedelta(minutes=n),
                              "status": "changed"}}
            db.orders.update_one({"_id": self.pick(self.orders)}, u)
            self.did("update order")
        elif r < 0.75 and self.orders:
            db.orders.delete_one({"_id": self.drop(self.orders)})
            self.did("delete order")
        elif r < 0.8 and len(self.customers) > 10:
            _id = self.drop(self.customers)
            old = self.code_of(_id)
            db.customers.delete_one({"_id": _id})
            self.codes.discard(old)
            if old is not None:
                self.referenced.append(old)
            self.did("delete customer")
        elif r < 0.92 and self.orders:
            _id = self.pick(self.orders)
            db.orders.replace_one({"_id": _id}, self.order(n, _id))
            self.did("replace order")
        elif self.customers:
            # Replaced whole: the same code, or a new one.
            _id = self.pick(self.customers)
            old = self.code_of(_id)
            code = old if old is not None and self.rnd.random() < 0.5 else self.fresh_code(n)
            db.customers.replace_one({"_id": _id}, {"code": code, "name": "replaced %d" % n,
                                                    "tier": "plus", "since": 2024})
            if code != old:
                self.codes.discard(old)
                if old is not None:
                    self.referenced.append(old)
            self.codes.add(code)
            self.did("replace customer")


class Readings(Writer):
    def __init__(self, db, rnd):
        Writer.__init__(self, db, rnd)
        self.readings = [d["_id"] for d in db.readings.find({}, {"_id": 1}).sort("_id", 1)]
        self.sensors = sorted(set(d["sensor_id"] for d in db.readings.find({}, {"sensor_id": 1})
                                  if isinstance(d.get("sensor_id"), str)))
        ts = sorted(d["ts"] for d in db.readings.find({}, {"ts": 1})
                    if isinstance(d.get("ts"), datetime.datetime))
        self.t0, self.t1 = ts[0], ts[-1]

    def when(self):
        span = int((self.t1 - self.t0).total_seconds())
        return self.t0 + datetime.timedelta(seconds=self.rnd.randrange(max(span, 1)),
                                            milliseconds=self.rnd.randrange(1000))

    def sensor(self):
        return "s-new" if self.rnd.random() < 0.1 else self.rnd.choice(self.sensors)

    def reading(self, _id=None):
        d = {"_id": _id or ObjectId(), "sensor_id": self.sensor(), "ts": self.when(),
             "temperature": self.rnd.randrange(150, 300) / 10.0}
        if self.rnd.random() < 0.5:
            d["humidity"] = float(self.rnd.randrange(30, 90))
        return d

    def step(self, n):
        r, db = self.rnd.random(), self.db
        if r < 0.25:
            d = self.reading()
            db.readings.insert_one(d)
            self.readings.append(d["_id"])
            self.did("insert reading")
        elif r < 0.45 and self.readings:
            db.readings.update_one({"_id": self.pick(self.readings)},
                                   {"$set": {"temperature": self.rnd.randrange(150, 300) / 10.0}})
            self.did("update reading")
        elif r < 0.55 and self.readings:
            db.readings.update_one({"_id": self.pick(self.readings)}, {"$set": {"ts": self.when()}})
            self.did("move reading in time")
        elif r < 0.7 and self.readings:
            db.readings.update_one({"_id": self.pick(self.readings)}, {"$set": {"sensor_id": self.sensor()}})
            self.did("move reading to another series")
        elif r < 0.85 and self.readings:
            db.readings.delete_one({"_id": self.drop(self.readings)})
            self.did("delete reading")
        elif self.readings:
            _id = self.pick(self.readings)
            db.readings.replace_one({"_id": _id}, self.reading(_id))
            self.did("replace reading")


PROFILES = {"tasks": Tasks, "people": People, "shop": Shop, "readings": Readings}


def write(argv):
    uri, profile, dbname, seed, n = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    ready = start = end = None
    rest = argv[5:]
    while rest:
        if rest[0] == "--ready":
            ready = rest[1]
        elif rest[0] == "--start":
            start = rest[1]
        elif rest[0] == "--end":
            end = rest[1]
        else:
            sys.exit("app_writer.py: unknown option %s" % rest[0])
        rest = rest[2:]
    rnd = random.Random(seed)
    w = PROFILES[profile](client(uri)[dbname], rnd)
    if ready:
        open(ready, "w").close()
    if start:
        deadline = time.time() + 120
        while time.time() < deadline and not (os.path.exists(start) and os.path.getsize(start) > 0):
            time.sleep(0.01)
    during, t0 = 0, time.time()
    for i in range(n):
        w.step(seed * 100000 + i)
        # Acknowledged before the run ended.
        if end is None or not os.path.exists(end):
            during += 1
        time.sleep(rnd.randrange(2, 12) / 1000.0)
    print(json.dumps({"ops": n, "during": during, "kinds": w.kinds,
                      "seconds": round(time.time() - t0, 1)}, sort_keys=True))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "load" and len(sys.argv) == 5:
        load(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) >= 7 and sys.argv[1] == "write":
        write(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
