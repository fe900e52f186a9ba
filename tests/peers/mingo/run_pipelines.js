// Runs remodel compile's pipelines (--format pipeline) with mingo, an
// independent implementation of MongoDB's aggregation language, the way a
// server would: each pass aggregates its collection; $lookup's "from" is a
// collection of the same database in the store below; the final $merge is
// applied here (replace or insert by _id) since it writes to the store.
// stdin: {"collections": {"db.coll": [canonical Extended JSON docs]},
//         "compiled": <compile's output>}
// stdout: {"collections": {...}} after every pass, canonical Extended JSON.
const mingo = require("mingo");
const { EJSON } = require("bson");

const input = EJSON.parse(require("fs").readFileSync(0, "utf8"), { relaxed: true });
const store = new Map(Object.entries(input.collections));
const get = (db, coll) => {
  const k = `${db}.${coll}`;
  if (!store.has(k)) store.set(k, []);
  return store.get(k);
};
const key = (id) => EJSON.stringify({ id }, { relaxed: true });

for (const step of input.compiled.steps) {
  if (!step.serverSide) throw new Error(`step ${step.step} (${step.op}) is not a pipeline: ${step.reason}`);
  for (const pass of step.passes) {
    const stages = pass.pipeline.slice(0, -1);
    const merge = pass.pipeline[pass.pipeline.length - 1].$merge;
    const docs = get(pass.aggregate.db, pass.aggregate.coll);
    const out = mingo.aggregate(docs, stages, {
      collectionResolver: (name) => get(pass.aggregate.db, name),
    });
    const target = get(merge.into.db, merge.into.coll);
    const at = new Map(target.map((d, i) => [key(d._id), i]));
    for (const d of out) {
      const i = at.get(key(d._id));
      if (i === undefined) { at.set(key(d._id), target.length); target.push(d); }
      else target[i] = d;
    }
  }
}
process.stdout.write(EJSON.stringify({ collections: Object.fromEntries(store) }, { relaxed: false }));
