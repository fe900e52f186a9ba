"""mixed_ids.py URI DB N: DB.parents with N _ids of each of seven BSON
types (int, long, double, string, ObjectId, date, binary), and two
children of each parent in DB.kids (owner: the parent's _id, indexed).
Prints how many parents. For the partition suites
(test_online_partitioned.sh, test_online_workers.sh)."""
import datetime, sys
import pymongo
from bson import Binary, Int64, ObjectId
uri, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
c.drop_database(db)
ids = []
for i in range(n):
    ids += [i, Int64(10**12 + i), i + 0.5, "s%04d" % i, ObjectId(b"%012d" % i),
            datetime.datetime(2000, 1, 1) + datetime.timedelta(days=i), Binary(b"b%04d" % i)]
c[db].parents.insert_many([{"_id": v, "n": k} for k, v in enumerate(ids)])
c[db].kids.insert_many([{"_id": k, "owner": ids[k // 2], "x": k % 7} for k in range(2 * len(ids))])
c[db].kids.create_index("owner")
print(len(ids))
