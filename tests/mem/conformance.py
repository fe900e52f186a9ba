"""One sequence of operations against a server, each step's outcome
printed as a line of JSON, for tests/cli/test_mem_server.sh to compare
remodel-memsrv's lines with FerretDB's and mongo-java-server's.

  conformance.py URI

A step's outcome is its documents (each as its BSON bytes in hex: byte
for byte), a count, or the error code a refused write or command gave."""
import json
import sys

import bson
import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import BulkWriteError, OperationFailure

RAW = CodecOptions(document_class=RawBSONDocument)


def hexes(docs):
    return [None if d is None else bytes(d.raw).hex() if isinstance(d, RawBSONDocument) else
            bson.encode(d).hex() for d in docs]


def main():
    c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
    c.drop_database("conf")
    c.drop_database("conf2")
    db = c.get_database("conf", codec_options=RAW)
    p = db.people
    out = []

    def step(name, fn):
        try:
            r = fn()
        except BulkWriteError as e:
            r = {"writeErrors": [w["code"] for w in e.details["writeErrors"]],
                 "nInserted": e.details.get("nInserted")}
        except OperationFailure as e:
            r = {"error": e.code}
        except pymongo.errors.PyMongoError as e:
            r = {"exception": type(e).__name__}
        out.append(json.dumps({"step": name, "result": r}, sort_keys=True))

    def docs(cursor):
        return hexes(list(cursor))

    every = lambda: docs(p.find({}, sort=[("_id", 1)]))
    step("insert_many", lambda: p.insert_many(
        [{"_id": i, "name": "p%02d" % i, "age": 20 + i % 7, "tags": ["a", "b"] if i % 2 else ["c"],
          "address": {"city": "c%d" % (i % 3), "zip": 100 + i}, "score": i * 1.5}
         for i in range(1, 31)]).inserted_ids)
    step("insert_dup", lambda: p.insert_many([{"_id": 31, "name": "d31"}, {"_id": 5}, {"_id": 32, "name": "d32"}]).inserted_ids)
    step("after_dup", lambda: p.count_documents({}))
    step("insert_dup_unordered", lambda: p.insert_many([{"_id": 33, "name": "d33"}, {"_id": 5}, {"_id": 34, "name": "d34"}],
                                                      ordered=False).inserted_ids)
    step("set", lambda: p.update_one({"_id": 1}, {"$set": {"age": 99, "address.city": "x",
                                                          "new.deep": True}}).modified_count)
    step("unset", lambda: p.update_one({"_id": 2}, {"$unset": {"score": "", "address.zip": ""}}).modified_count)
    step("inc", lambda: p.update_many({"age": {"$lt": 22}}, {"$inc": {"age": 1, "score": 0.5,
                                                                      "visits": 2}}).modified_count)
    step("addToSet", lambda: p.update_one({"_id": 3}, {"$addToSet": {"tags": {"$each": ["a", "z", "z"]}}}).modified_count)
    step("push", lambda: p.update_one({"_id": 4}, {"$push": {"tags": "d", "log": {"at": 1}}}).modified_count)
    step("pull", lambda: p.update_many({}, {"$pull": {"tags": "b"}}).modified_count)
    step("replace", lambda: p.replace_one({"_id": 6}, {"name": "six", "age": 6}).modified_count)
    step("upsert_set", lambda: str(p.update_one({"name": "new", "age": 40},
                                                {"$set": {"k": 1}, "$setOnInsert": {"_id": 100, "made": True}},
                                                upsert=True).upserted_id))
    step("upsert_hit", lambda: p.update_one({"_id": 100}, {"$setOnInsert": {"made": False}, "$inc": {"k": 1}},
                                            upsert=True).modified_count)
    step("upsert_replace", lambda: p.replace_one({"_id": 101}, {"name": "r"}, upsert=True).upserted_id)
    step("update_id", lambda: p.update_one({"_id": 7}, {"$set": {"_id": 70}}).modified_count)
    step("inc_string", lambda: p.update_one({"_id": 8}, {"$inc": {"name": 1}}).modified_count)
    step("unknown_op", lambda: p.update_one({"_id": 8}, {"$frobnicate": {"a": 1}}).modified_count)
    step("docs_after_updates", every)
    step("delete_one", lambda: p.delete_one({"age": {"$gte": 25}}).deleted_count)
    step("delete_many", lambda: p.delete_many({"address.city": "c2"}).deleted_count)
    step("docs_after_deletes", every)
    step("find_sort_proj", lambda: docs(p.find({"age": {"$gt": 20}}, {"name": 1, "age": 1},
                                               sort=[("age", -1), ("_id", 1)], limit=5)))
    step("find_exclude", lambda: docs(p.find({"tags": "a"}, {"address": 0, "tags": 0},
                                             sort=[("_id", 1)], skip=2, limit=3)))
    step("find_dotted", lambda: docs(p.find({"address.city": {"$in": ["c0", "x"]}},
                                            {"address.city": 1, "_id": 0}, sort=[("_id", 1)])))
    step("find_batches", lambda: docs(p.find({}, sort=[("_id", -1)], batch_size=4)))
    step("count", lambda: p.count_documents({"age": {"$lte": 23}}))
    step("agg_group", lambda: docs(p.aggregate([
        {"$match": {"age": {"$exists": True}}},
        {"$group": {"_id": "$address.city", "n": {"$sum": 1}, "ages": {"$sum": "$age"}}},
        {"$sort": {"_id": 1}}])))
    step("agg_project", lambda: docs(p.aggregate([
        {"$sort": {"_id": 1}}, {"$skip": 1}, {"$limit": 4},
        {"$project": {"name": 1, "older": {"$add": ["$age", 10]}}}])))
    step("agg_unwind", lambda: docs(p.aggregate([
        {"$match": {"_id": {"$lte": 6}}}, {"$unwind": "$tags"},
        {"$sort": {"_id": 1, "tags": 1}}, {"$project": {"tags": 1}}])))
    step("agg_count", lambda: docs(p.aggregate([{"$match": {"age": {"$gt": 21}}}, {"$count": "n"}])))
    step("agg_addfields", lambda: docs(p.aggregate([
        {"$match": {"_id": {"$in": [3, 4, 5]}}}, {"$sort": {"_id": 1}},
        {"$addFields": {"twice": {"$multiply": ["$age", 2]}}},
        {"$replaceRoot": {"newRoot": {"id": "$_id", "t": "$twice"}}}])))
    step("agg_unknown_stage", lambda: docs(p.aggregate([{"$frobnicate": {}}])))
    step("create_index", lambda: p.create_index("name", unique=True))
    step("unique_violation", lambda: p.insert_one({"_id": 200, "name": "p03"}).inserted_id)
    step("unique_update", lambda: p.update_one({"_id": 4}, {"$set": {"name": "p05"}}).modified_count)
    step("index_on_dups", lambda: p.create_index("age", unique=True))
    step("list_indexes", lambda: sorted((i["name"], list(i["key"].items()), bool(i.get("unique")))
                                        for i in c.conf.people.list_indexes()))
    step("drop_index", lambda: c.conf.people.drop_index("name_1"))
    step("drop_missing_index", lambda: c.conf.people.drop_index("nope_1"))
    step("create", lambda: c.conf.create_collection("capped", capped=True, size=4096) is not None)
    step("create_exists", lambda: c.conf.command("create", "capped")["ok"])
    step("list_collections", lambda: sorted(c.conf.list_collection_names()))
    step("list_filtered", lambda: sorted(x["name"] for x in c.conf.list_collections(filter={"name": "capped"})))
    step("rename", lambda: c.conf.people.rename("persons") is not None)
    step("rename_missing", lambda: c.conf.people.rename("x") is not None)
    step("rename_onto", lambda: c.conf.capped.rename("persons") is not None)
    step("rename_drop_target", lambda: c.conf.persons.rename("people2", dropTarget=True) is not None)
    step("after_renames", lambda: sorted(c.conf.list_collection_names()))
    q = db.people2
    step("fam_update", lambda: hexes([q.find_one_and_update(
        {"_id": 3}, {"$set": {"fam": 1}}, return_document=pymongo.ReturnDocument.AFTER)]))
    step("fam_before", lambda: hexes([q.find_one_and_update({"_id": 5}, {"$inc": {"age": 1}})]))
    step("fam_upsert", lambda: hexes([q.find_one_and_update({"_id": 300}, {"$set": {"u": 1}}, upsert=True,
                                                            return_document=pymongo.ReturnDocument.AFTER)]))
    step("fam_delete", lambda: hexes([q.find_one_and_delete({"_id": 4})]))
    step("fam_none", lambda: hexes([q.find_one_and_delete({"_id": 4})]))
    step("docs_at_end", lambda: docs(q.find({}, sort=[("_id", 1)])))
    step("drop", lambda: c.conf.people2.drop() or sorted(c.conf.list_collection_names()))
    step("unknown_command", lambda: c.conf.command("frobnicate"))
    for name in ("conf", "conf2"):
        step("drop_database " + name, lambda: c.drop_database(name))
    print("\n".join(out))


main()
