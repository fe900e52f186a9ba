// Runs the passes of `remodel compile PLAN --format pipeline` with mingo,
// an independent implementation of MongoDB's aggregation language, the way
// a server would run them, over an in-memory store of collections:
//   - the passes run in order; each aggregates the collection named by its
//     "aggregate" ({db, coll}; a collection never written is empty);
//   - $lookup's "from" names a collection of the same database;
//   - the last stage, $merge, is applied here: each output document
//     replaces the one with its _id in into.db.into.coll, or is inserted.
// Every pass reads copies of the store's documents (made through Extended
// JSON), so nothing mingo does to its input leaks into a later pass.
//
// stdin:  {"collections": {"db.coll": [documents, canonical Extended JSON]},
//          "compiled": <compile's output>}
// stdout: {"collections": {...}} after the last pass, canonical Extended JSON
// Exits 2 (message on stderr) when the compiled output has something this
// harness does not run: a step that is not server-side, a pass without a
// final $merge, or a $merge with other options than the ones below.
"use strict";
const fs = require("fs");
const mingo = require("mingo");
const { EJSON } = require("bson");

function refuse(msg) {
  process.stderr.write(`run_pipelines.js: ${msg}\n`);
  process.exit(2);
}

// relaxed: numbers become JavaScript numbers (mingo computes with those);
// dates become Date, ObjectIds stay ObjectId. See mingo_same.py for what
// that costs (int32, int64 and double are one type here).
const parse = (text) => EJSON.parse(text, { relaxed: true });
const input = parse(fs.readFileSync(0, "utf8"));

// The store keeps each collection as its documents' Extended JSON texts:
// a pass gets fresh objects, and what it merges is frozen into text at once.
const store = new Map();
for (const [ns, docs] of Object.entries(input.collections)) {
  store.set(ns, docs.map((d) => EJSON.stringify(d, { relaxed: false })));
}
const load = (db, coll) => (store.get(`${db}.${coll}`) || []).map(parse);
const idKey = (id) => EJSON.stringify({ id }, { relaxed: false });

function checkMerge(m, where) {
  if (!m || typeof m !== "object") refuse(`${where}: the last stage is not $merge`);
  const known = new Set(["into", "on", "whenMatched", "whenNotMatched"]);
  for (const k of Object.keys(m)) if (!known.has(k)) refuse(`${where}: $merge option ${k} is not run here`);
  if (!m.into || typeof m.into.db !== "string" || typeof m.into.coll !== "string")
    refuse(`${where}: $merge.into is not {db, coll}`);
  const on = m.on === undefined ? "_id" : m.on;
  if (!(on === "_id" || (Array.isArray(on) && on.length === 1 && on[0] === "_id")))
    refuse(`${where}: $merge.on ${JSON.stringify(on)} is not _id`);
  if ((m.whenMatched || "merge") !== "replace") refuse(`${where}: $merge.whenMatched is not replace`);
  if ((m.whenNotMatched || "insert") !== "insert") refuse(`${where}: $merge.whenNotMatched is not insert`);
}

const compiled = input.compiled;
for (const step of compiled.steps) {
  if (!step.serverSide) refuse(`step ${step.step} (${step.op}) is not server-side: ${step.reason}`);
  for (const pass of step.passes) {
    const where = `step ${step.step} pass ${pass.pass} (${pass.ns})`;
    const pipeline = pass.pipeline;
    const last = pipeline[pipeline.length - 1];
    checkMerge(last && last.$merge, where);
    const merge = last.$merge;
    const stages = pipeline.slice(0, -1);
    for (const s of stages) if ("$merge" in s || "$out" in s) refuse(`${where}: $merge or $out before the end`);
    const db = pass.aggregate.db;
    const cache = new Map();
    let out;
    try {
      out = mingo.aggregate(load(db, pass.aggregate.coll), stages, {
        collectionResolver: (name) => {
          if (!cache.has(name)) cache.set(name, load(db, name));
          return cache.get(name);
        },
      });
    } catch (e) {
      process.stderr.write(`run_pipelines.js: ${where}: mingo failed: ${e && e.stack ? e.stack : e}\n`);
      process.exit(1);
    }
    const ns = `${merge.into.db}.${merge.into.coll}`;
    if (!store.has(ns)) store.set(ns, []);
    const target = store.get(ns);
    const at = new Map(target.map((text, i) => [idKey(parse(text)._id), i]));
    for (const doc of out) {
      if (!doc || doc._id === undefined) refuse(`${where}: an output document has no _id: ${EJSON.stringify(doc)}`);
      const text = EJSON.stringify(doc, { relaxed: false });
      const k = idKey(doc._id);
      const i = at.get(k);
      if (i === undefined) {
        at.set(k, target.length);
        target.push(text);
      } else {
        target[i] = text;
      }
    }
  }
}

// Written by hand: the documents are already canonical Extended JSON texts.
const parts = [];
for (const [ns, texts] of store) parts.push(`${JSON.stringify(ns)}:[${texts.join(",")}]`);
process.stdout.write(`{"collections":{${parts.join(",")}}}\n`);
