/* remodel compile --format mongosh: a script that runs the compiled
 * pipelines in mongosh, range by range over _id, with the same state
 * documents as remodel online run (plans, leases, checkpoints in the state
 * database; shell-ext/state/online_state.c), so that it resumes after an
 * interruption, and either can go on from the other's checkpoint. The
 * plan's part is data (the pipelines in canonical Extended JSON); the
 * runner below is the same for every plan. */
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

static const char runner[] =
    "\n"
    "// ---- the runner (the same for every plan) ----\n"
    "// Options, set before the script runs: mongosh URI --eval 'var batchSize = 500' FILE\n"
    "//   batchSize  documents a range (default 1000)\n"
    "//   pauseMs    a pause between ranges (default 0)\n"
    "//   stateDb    where plans, leases and checkpoints live (default \"remodel\")\n"
    "//   owner      this run's name in the lease (default host:pid:time; give the\n"
    "//              same one again to take over your own interrupted run at once)\n"
    "//   restart    true: start over a plan that changed since its run began\n"
    "const opt = {\n"
    "  batchSize: typeof batchSize === 'number' ? batchSize : 1000,\n"
    "  pauseMs: typeof pauseMs === 'number' ? pauseMs : 0,\n"
    "  stateDb: typeof stateDb === 'string' ? stateDb : 'remodel',\n"
    "  owner: typeof owner === 'string' ? owner\n"
    "         : `${os.hostname()}:mongosh-${process.pid}:${Date.now()}`,\n"
    "  restart: typeof restart === 'boolean' ? restart : false,\n"
    "};\n"
    "const LEASE_MS = 30000;\n"
    "const state = db.getSiblingDB(opt.stateDb);\n"
    "\n"
    "function fail(message) {\n"
    "  print(`remodel: error: plan ${PLAN.name}: ${message}`);\n"
    "  quit(2);\n"
    "}\n"
    "\n"
    "// Steps no pipeline expresses run client-side: refused before anything is written.\n"
    "const clientSide = PLAN.steps.filter((s) => !s.serverSide);\n"
    "if (clientSide.length) {\n"
    "  for (const s of clientSide) print(`remodel: step ${s.step} (${s.op}) runs client-side: ${s.reason}`);\n"
    "  fail('run it with remodel online run --server-side, which runs those steps client-side');\n"
    "}\n"
    "\n"
    "// The lease, as remodel online takes it (online_lease.c): the next epoch's\n"
    "// fence inserted (a duplicate key: another run won), expiry judged by the\n"
    "// server's clock, renewed before each range, and a newer fence means lost.\n"
    "let lease = {epoch: 0, server0: 0, local0: 0, renewed: 0};\n"
    "function serverNow() {\n"
    "  let h = null;\n"
    "  try { h = db.adminCommand({hello: 1}); } catch (e) { h = null; }\n"
    "  if (!h || !h.localTime) h = db.adminCommand({isMaster: 1});\n"
    "  return h.localTime;\n"
    "}\n"
    "function newestFence() {\n"
    "  const f = state.fences.find({plan: PLAN.id}).sort({epoch: -1}).limit(1).toArray();\n"
    "  return f.length ? f[0] : null;\n"
    "}\n"
    "// A holder \"host:pid:...\" on this host whose process is gone holds nothing.\n"
    "function holderDead(owner) {\n"
    "  const m = /^([^:]*):([0-9]+):/.exec(owner || '');\n"
    "  if (!m || m[1] !== os.hostname()) return false;\n"
    "  try { process.kill(Number(m[2]), 0); return false; } catch (e) { return e.code === 'ESRCH'; }\n"
    "}\n"
    "function takeLease() {\n"
    "  const now = serverNow();\n"
    "  const heldBy = (l) => l && l.owner && l.owner !== opt.owner && l.expires > now && !holderDead(l.owner) ? l : null;\n"
    "  const refuse = (who, until) =>\n"
    "    fail(`being run by ${who} (its lease expires in ${Math.max(0, Math.round((until - now) / 1000))} s unless renewed)`);\n"
    "  let l = state.leases.findOne({_id: PLAN.id});\n"
    "  if (heldBy(l)) refuse(l.owner, l.expires);\n"
    "  const f = newestFence(), had = l && l.epoch ? Number(l.epoch) : 0;\n"
    "  if (f && Number(f.epoch) > had && f.at.getTime() + LEASE_MS > now.getTime() &&\n"
    "      f.owner !== opt.owner && !holderDead(f.owner))\n"
    "    refuse('a run taking the lease right now', f.at.getTime() + LEASE_MS);\n"
    "  const next = Math.max(had, f ? Number(f.epoch) : 0) + 1;\n"
    "  try {\n"
    "    state.fences.insertOne({_id: `${PLAN.id}#${next}`, plan: PLAN.id, epoch: Long.fromNumber(next),\n"
    "                            owner: opt.owner, at: now});\n"
    "  } catch (e) {\n"
    "    if (e.code !== 11000) throw e;\n"
    "    refuse('a run that took the lease at the same moment', now.getTime() + LEASE_MS);\n"
    "  }\n"
    "  l = state.leases.findOne({_id: PLAN.id});\n"
    "  if (heldBy(l)) refuse(l.owner, l.expires);\n"
    "  try {\n"
    "    state.leases.updateOne({_id: PLAN.id, $or: [{epoch: {$lt: Long.fromNumber(next)}}, {epoch: {$exists: false}}]},\n"
    "      {$set: {owner: opt.owner, epoch: Long.fromNumber(next), expires: new Date(now.getTime() + LEASE_MS),\n"
    "              digest: PLAN.digest, plan: PLAN.name}}, {upsert: true});\n"
    "  } catch (e) {\n"
    "    if (e.code !== 11000) throw e;\n"
    "    refuse('a newer run', now.getTime() + LEASE_MS);\n"
    "  }\n"
    "  lease = {epoch: next, server0: now.getTime(), local0: Date.now(), renewed: Date.now()};\n"
    "}\n"
    "function renewLease() {\n"
    "  const sent = Date.now();\n"
    "  const r = state.leases.updateOne({_id: PLAN.id, owner: opt.owner, epoch: Long.fromNumber(lease.epoch)},\n"
    "    {$set: {expires: new Date(lease.server0 + (sent - lease.local0) + LEASE_MS)}});\n"
    "  const f = newestFence();\n"
    "  if (r.matchedCount !== 1 || (f && Number(f.epoch) > lease.epoch))\n"
    "    fail('this run lost its lease to another; stopping before writing anything more (its checkpoint stands)');\n"
    "  lease.renewed = sent;\n"
    "}\n"
    "function dropLease() {\n"
    "  state.leases.updateOne({_id: PLAN.id, owner: opt.owner, epoch: Long.fromNumber(lease.epoch)},\n"
    "    {$set: {owner: '', expires: new Date(0)}});\n"
    "}\n"
    "\n"
    "// The plan's record: a changed plan, one run in place, or one being\n"
    "// switched or finalized, is refused.\n"
    "function recordPlan() {\n"
    "  const r = state.plans.findOne({_id: PLAN.id});\n"
    "  if (r && r.digest !== PLAN.digest && !opt.restart)\n"
    "    fail(`changed since its run began (digest ${r.digest}, now ${PLAN.digest}): var restart = true starts it over`);\n"
    "  if (r && r.inPlace && !opt.restart) fail('was started in place (--in-place), not side by side');\n"
    "  if (r && r.switch) fail('has a switch of its collections interrupted: remodel online finalize completes it, rollback undoes it');\n"
    "  if (r && r.finalized) fail('is finalized: remodel online rollback first to run it again');\n"
    "  if (!r || r.digest !== PLAN.digest || opt.restart) {\n"
    "    state.checkpoints.deleteMany({plan: PLAN.id});\n"
    "    state.plans.updateOne({_id: PLAN.id},\n"
    "      {$set: {digest: PLAN.digest, inPlace: false, name: PLAN.name, path: PLAN.path}}, {upsert: true});\n"
    "  }\n"
    "}\n"
    "\n"
    "function waitWhilePaused() {\n"
    "  let said = false;\n"
    "  for (;;) {\n"
    "    const r = state.plans.findOne({_id: PLAN.id});\n"
    "    if (!r || !r.paused) break;\n"
    "    if (!said) print(`remodel: plan ${PLAN.name} paused (remodel online resume goes on)`);\n"
    "    said = true;\n"
    "    renewLease();\n"
    "    sleep(1000);\n"
    "  }\n"
    "}\n"
    "\n"
    "function checkpointId(step, pass) {\n"
    "  return pass === 1 ? `${PLAN.id}:${step.step}` : `${PLAN.id}:${step.step}/${pass}`;\n"
    "}\n"
    "function writeCheckpoint(step, p, cp) {\n"
    "  renewLease();\n"
    "  const set = {plan: PLAN.id, epoch: Long.fromNumber(lease.epoch),\n"
    "               digest: PLAN.digest, step: Long.fromNumber(step.step), pass: Long.fromNumber(p.pass),\n"
    "               op: step.op, ns: p.ns, db: p.aggregate.db, coll: p.aggregate.coll,\n"
    "               seen: Long.fromNumber(cp.seen), changed: Long.fromNumber(cp.written), done: cp.done,\n"
    "               updated: new Date(), tool: 'remodel 0.1.0 (mongosh script)'};\n"
    "  if (cp.hasLast) set.last = cp.last;\n"
    "  // Never over a newer run's checkpoint (the upsert then meets a duplicate key).\n"
    "  try {\n"
    "    state.checkpoints.updateOne({_id: checkpointId(step, p.pass),\n"
    "                                 $or: [{epoch: {$lte: set.epoch}}, {epoch: {$exists: false}}]},\n"
    "      {$set: set, $setOnInsert: {started: new Date()}}, {upsert: true});\n"
    "  } catch (e) {\n"
    "    if (e.code !== 11000) throw e;\n"
    "    fail('a newer run wrote this checkpoint; this run lost its lease and stops');\n"
    "  }\n"
    "}\n"
    "\n"
    "// The _ids after `last` in MongoDB's order, across types. {$gt: last} would\n"
    "// keep to last's type bracket (MinKey < null < numbers < strings < objects <\n"
    "// arrays < binData < objectId < bool < date < timestamp < regex < code <\n"
    "// MaxKey); {$not: {$lte: last}} takes the later brackets too, and the\n"
    "// earlier ones, which {$not: {$type: [...]}} leaves out. (An index serves\n"
    "// the first, not the second; FerretDB 1.x knows no minKey or maxKey\n"
    "// alias, and these are the aliases both it and mongo-java-server take.)\n"
    "// A MinKey or a symbol, which no alias names, still comes through, first\n"
    "// in _id order: runPass skips what idBracket puts before last's bracket.\n"
    "const ID_BRACKETS = ['null', 'number', 'string', 'object', 'array', 'binData', 'objectId',\n"
    "                     'bool', 'date', 'timestamp', 'regex'];\n"
    "function idBracket(v) { // 0 MinKey, 1 + index in ID_BRACKETS, 12 code, 13 MaxKey\n"
    "  if (v === null || v === undefined) return 1;\n"
    "  switch (typeof v) {\n"
    "    case 'number': case 'bigint': return 2;\n"
    "    case 'string': return 3;\n"
    "    case 'boolean': return 8;\n"
    "  }\n"
    "  switch (v._bsontype) {\n"
    "    case 'MinKey': return 0;\n"
    "    case 'MaxKey': return 13;\n"
    "    case 'Int32': case 'Long': case 'Double': case 'Decimal128': return 2;\n"
    "    case 'BSONSymbol': case 'Symbol': return 3;\n"
    "    case 'Binary': return 6;\n"
    "    case 'ObjectId': case 'ObjectID': return 7;\n"
    "    case 'Timestamp': return 10;\n"
    "    case 'BSONRegExp': return 11;\n"
    "    case 'DBRef': return 4; // a document {$ref, $id}\n"
    "    case 'Code': case 'DBPointer': return 12;\n"
    "  }\n"
    "  if (Array.isArray(v)) return 5;\n"
    "  const tag = Object.prototype.toString.call(v);\n"
    "  if (tag === '[object Date]') return 9;\n"
    "  if (tag === '[object RegExp]') return 11;\n"
    "  return 4;\n"
    "}\n"
    "function idsAfter(last) {\n"
    "  // {$ne: null} is {$not: {$lte: null}} on MongoDB; mongo-java-server's {$lte: null} matches nothing\n"
    "  if (last === null) return {_id: {$ne: null}};\n"
    "  const after = {_id: {$not: {$lte: last}}}; // last's operand is a value, never an operator\n"
    "  const before = ID_BRACKETS.slice(0, Math.max(0, Math.min(idBracket(last), 12) - 1));\n"
    "  return before.length ? {$and: [after, {_id: {$not: {$type: before}}}]} : after;\n"
    "}\n"
    "\n"
    "// A pass: ranges of batchSize _ids after the checkpoint, each through the\n"
    "// pipeline, its $merge acknowledged before the checkpoint moves.\n"
    "function runPass(step, p) {\n"
    "  const src = db.getSiblingDB(p.aggregate.db);\n"
    "  const into = p.pipeline[p.pipeline.length - 1].$merge.into;\n"
    "  const target = db.getSiblingDB(into.db).getCollection(into.coll);\n"
    "  const saved = state.checkpoints.findOne({_id: checkpointId(step, p.pass)});\n"
    "  const cp = {hasLast: !!saved && 'last' in saved, last: saved ? saved.last : null,\n"
    "              seen: saved ? Number(saved.seen) : 0, written: saved ? Number(saved.changed) : 0,\n"
    "              done: false};\n"
    "  if (saved && saved.done) {\n"
    "    print(`remodel: step ${step.step} (${step.op}) ${p.ns}: done before`);\n"
    "    return;\n"
    "  }\n"
    "  const t0 = Date.now();\n"
    "  // The _ids in order through one cursor, after the checkpoint's of any\n"
    "  // type (idsAfter); a range names its own ({$in}), since\n"
    "  // {$gt: A, $lte: B} would keep to the type of A and B.\n"
    "  const cur = src.getCollection(p.aggregate.coll)\n"
    "    .find(cp.hasLast ? idsAfter(cp.last) : {}, {_id: 1}).sort({_id: 1}).batchSize(opt.batchSize);\n"
    "  let below = cp.hasLast ? idBracket(cp.last) : 0; // what idsAfter lets through before last\n"
    "  for (;;) {\n"
    "    waitWhilePaused();\n"
    "    const ids = [];\n"
    "    while (ids.length < opt.batchSize && cur.hasNext()) {\n"
    "      const id = cur.next()._id;\n"
    "      if (below && idBracket(id) < below) continue;\n"
    "      below = 0; // the rest sorts after last\n"
    "      ids.push(id);\n"
    "    }\n"
    "    if (!ids.length) break;\n"
    "    const hi = ids[ids.length - 1];\n"
    "    const range = {_id: {$in: ids}};\n"
    "    renewLease(); // the range's $merge is a write: only while the lease is ours\n"
    "    const r = src.runCommand({aggregate: p.aggregate.coll, pipeline: [{$match: range}, ...p.pipeline],\n"
    "                              cursor: {}, allowDiskUse: true});\n"
    "    if (!r.ok) fail(`step ${step.step} (${step.op}) ${p.ns}: the range after ${EJSON.stringify(cp.last)}: ${r.errmsg}`);\n"
    "    cp.written += target.countDocuments(range);\n"
    "    cp.seen += ids.length;\n"
    "    cp.hasLast = true;\n"
    "    cp.last = hi;\n"
    "    writeCheckpoint(step, p, cp);\n"
    "    const rate = Math.round(cp.seen * 1000 / Math.max(1, Date.now() - t0));\n"
    "    print(`remodel: step ${step.step} (${step.op}) ${p.ns}: ${cp.seen} read, ${cp.written} written, ${rate}/s`);\n"
    "    if (opt.pauseMs) sleep(opt.pauseMs);\n"
    "  }\n"
    "  cp.done = true;\n"
    "  writeCheckpoint(step, p, cp);\n"
    "  print(`remodel: step ${step.step} (${step.op}) ${p.ns}: ${cp.seen} read, ${cp.written} written (done)`);\n"
    "}\n"
    "\n"
    "// Data a step's pipeline is not exact for stops the script there.\n"
    "function checkGuard(step) {\n"
    "  if (!step.guard) return;\n"
    "  const g = step.guard;\n"
    "  const d = db.getSiblingDB(g.db).getCollection(g.coll).findOne({[g.field]: {$type: 'array'}}, {_id: 1});\n"
    "  if (d) fail(`step ${step.step} (${step.op}): ${g.ns} has a document whose \"${g.field}\" holds an array ` +\n"
    "              `(${EJSON.stringify(d)}), for which the pipeline is not exact: run remodel online run --server-side, ` +\n"
    "              'which runs this step client-side');\n"
    "}\n"
    "\n"
    "takeLease();\n"
    "recordPlan();\n"
    "for (const step of PLAN.steps) {\n"
    "  checkGuard(step);\n"
    "  for (const p of step.passes) {\n"
    "    const into = p.pipeline[p.pipeline.length - 1].$merge.into;\n"
    "    try { db.getSiblingDB(into.db).createCollection(into.coll); }\n"
    "    catch (e) { if (e.code !== 48) throw e; } // made by an earlier attempt\n"
    "  }\n"
    "  for (const p of step.passes) runPass(step, p);\n"
    "}\n"
    "dropLease();\n"
    "print(`remodel: plan ${PLAN.name}: every step ran server-side`);\n";

/* views: the part creating the views (compile_mongosh_views.c), or NULL. */
static char *
print_script (const rm_names_t *nm, const rm_compile_plan_t *c, const char *views)
{
    rm_buf_t b;
    char line[256];

    rm_buf_init (&b);
    rm_compile_put (&b, "// remodel: plan ");
    rm_compile_put_str (&b, nm->name); /* quoted: a name cannot end the comment */
    snprintf (line, sizeof line, ", compiled for MongoDB %d.%d (remodel compile --format mongosh)\n",
              c->version.major, c->version.minor);
    rm_compile_put (&b, line);
    rm_compile_put (&b, "//\n"
             "// Runs each step's aggregation pipelines on the server, range by range\n"
             "// over _id, each ending in a $merge into the step's own new collection\n"
             "// (COLL_remodel_PLAN_STEP, beside its source): the sources stay as they\n"
             "// are until remodel online finalize. It writes the same plan record,\n"
             "// lease and checkpoints as remodel online run, so run it again after an\n"
             "// interruption and it goes on from its checkpoint; remodel online status,\n"
             "// verify, finalize and rollback work on what it did. Every range is safe\n"
             "// to run again: $merge replaces by _id.\n"
             "//\n"
             "//   mongosh \"mongodb://HOST:PORT/\" THIS_FILE\n"
             "//\n"
             "// On a replica set give the set's URI (the pipelines run on the primary);\n"
             "// on a sharded cluster, the mongos's: each range's pipeline runs on the\n"
             "// shards, and $merge into a sharded target needs \"on\" fields that\n"
             "// include its shard key, with a unique index (the targets here merge on\n"
             "// _id: shard them by _id, or leave them unsharded).\n\n");
    rm_compile_put (&b, "const PLAN = {name: ");
    rm_compile_put_str (&b, nm->name);
    rm_compile_put (&b, ", id: ");
    rm_compile_put_str (&b, nm->id);
    rm_compile_put (&b, ", path: ");
    rm_compile_put_str (&b, nm->path);
    rm_compile_put (&b, ", digest: ");
    rm_compile_put_str (&b, nm->digest);
    rm_compile_put (&b, ", steps: [");
    for (size_t i = 0; i < c->n; i++) {
        const rm_compile_step_t *st = &c->steps[i];
        snprintf (line, sizeof line, "%s\n  {step: %zu, op: ", i ? "," : "", st->s->index);
        rm_compile_put (&b, line);
        rm_compile_put_str (&b, st->s->op);
        if (!st->n_passes) {
            rm_compile_put (&b, ", serverSide: false, reason: ");
            rm_compile_put_str (&b, st->reason);
            rm_compile_put (&b, ", passes: []}");
            continue;
        }
        rm_compile_put (&b, ", serverSide: true,");
        /* Notes quote the plan's names: JSON strings, never comment text a
         * newline in a name could end. */
        if (st->n_notes) {
            rm_compile_put (&b, "\n   notes: [");
            for (size_t k = 0; k < st->n_notes; k++) {
                rm_compile_put (&b, k ? ",\n           " : "");
                rm_compile_put_str (&b, st->notes[k]);
            }
            rm_compile_put (&b, "],");
        }
        if (st->guard_ns) {
            rm_compile_put (&b, "\n   guard: {ns: ");
            rm_compile_put_str (&b, st->guard_ns->text);
            rm_compile_put (&b, ", db: ");
            rm_compile_put_str (&b, st->guard_ns->db);
            rm_compile_put (&b, ", coll: ");
            rm_compile_put_str (&b, st->guard_coll);
            rm_compile_put (&b, ", field: ");
            rm_compile_put_str (&b, st->guard_field);
            rm_compile_put (&b, "},");
        }
        rm_compile_put (&b, "\n   passes: [");
        for (size_t p = 0; p < st->n_passes; p++) {
            const rm_compile_pass_t *cp = &st->passes[p];
            snprintf (line, sizeof line, "%s\n    {pass: %zu, ns: ", p ? "," : "", cp->pass + 1);
            rm_compile_put (&b, line);
            rm_compile_put_str (&b, cp->drive->text);
            rm_compile_put (&b, ", aggregate: {db: ");
            rm_compile_put_str (&b, cp->drive->db);
            rm_compile_put (&b, ", coll: ");
            rm_compile_put_str (&b, cp->coll);
            rm_compile_put (&b, "},\n     pipeline: EJSON.deserialize(");
            rm_compile_put_pipeline (&b, &cp->pipeline, "      ");
            rm_compile_put (&b, ")}");
        }
        rm_compile_put (&b, "]}");
    }
    rm_compile_put (&b, "]};\n");
    if (views)
        rm_compile_put (&b, views);
    rm_compile_put (&b, runner);
    if (views)
        rm_compile_put (&b, "print(\"remodel: after remodel online finalize, run this script again with \"\n"
                            "      + \"--eval 'var views = true' to create the views of the old shape\");\n");
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}

char *
rm_compile_print_mongosh (const rm_names_t *nm, const rm_compile_plan_t *c)
{
    return print_script (nm, c, NULL);
}

char *
rm_compile_print_mongosh_views (const rm_names_t *nm, const rm_compile_plan_t *c,
                                const rm_plan_t *plan, char **refusals)
{
    char *views = rm_compile_mongosh_views (plan, c->version, refusals);
    char *text = print_script (nm, c, views);
    bson_free (views);
    return text;
}
