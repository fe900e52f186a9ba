/* remodel compile --format mongosh: a script that runs the compiled
 * pipelines in mongosh, range by range over _id, with the same state
 * documents as remodel online run (plans, leases, checkpoints in the state
 * database; online_state.c), so that it resumes after an interruption, and
 * either can go on from the other's checkpoint. The plan's part is data
 * (the pipelines in canonical Extended JSON); the runner below is the same
 * for every plan. */
#include <stdio.h>
#include <string.h>

#include "compile.h"

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
    "// The lease: one run of a plan at a time; a crashed run's expires after 30 s.\n"
    "function takeLease() {\n"
    "  const now = new Date();\n"
    "  try {\n"
    "    state.leases.updateOne(\n"
    "      {_id: PLAN.name, $or: [{expires: {$lt: now}}, {owner: opt.owner}]},\n"
    "      {$set: {owner: opt.owner, expires: new Date(now.getTime() + LEASE_MS), digest: PLAN.digest}},\n"
    "      {upsert: true});\n"
    "  } catch (e) {\n"
    "    if (e.code !== 11000) throw e;\n"
    "    const l = state.leases.findOne({_id: PLAN.name}) || {};\n"
    "    fail(`being run by ${l.owner} (its lease expires in ${Math.round((l.expires - now) / 1000)} s unless renewed)`);\n"
    "  }\n"
    "}\n"
    "function renewLease() {\n"
    "  const r = state.leases.updateOne({_id: PLAN.name, owner: opt.owner},\n"
    "    {$set: {expires: new Date(Date.now() + LEASE_MS)}});\n"
    "  if (r.matchedCount !== 1) fail('this run lost its lease to another; stopping (its checkpoint stands)');\n"
    "}\n"
    "\n"
    "// The plan's record: a changed plan, or one run in place, is refused.\n"
    "function recordPlan() {\n"
    "  const r = state.plans.findOne({_id: PLAN.name});\n"
    "  if (r && r.digest !== PLAN.digest && !opt.restart)\n"
    "    fail(`changed since its run began (digest ${r.digest}, now ${PLAN.digest}): var restart = true starts it over`);\n"
    "  if (r && r.inPlace && !opt.restart) fail('was started in place (--in-place), not side by side');\n"
    "  if (r && r.finalized) fail('is finalized: remodel online rollback first to run it again');\n"
    "  if (!r || r.digest !== PLAN.digest || opt.restart) {\n"
    "    state.checkpoints.deleteMany({_id: {$regex: '^' + PLAN.name.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&') + ':'}});\n"
    "    state.plans.updateOne({_id: PLAN.name}, {$set: {digest: PLAN.digest, inPlace: false}}, {upsert: true});\n"
    "  }\n"
    "}\n"
    "\n"
    "function waitWhilePaused() {\n"
    "  let said = false;\n"
    "  for (;;) {\n"
    "    const r = state.plans.findOne({_id: PLAN.name});\n"
    "    if (!r || !r.paused) break;\n"
    "    if (!said) print(`remodel: plan ${PLAN.name} paused (remodel online resume goes on)`);\n"
    "    said = true;\n"
    "    renewLease();\n"
    "    sleep(1000);\n"
    "  }\n"
    "}\n"
    "\n"
    "function checkpointId(step, pass) {\n"
    "  return pass === 1 ? `${PLAN.name}:${step.step}` : `${PLAN.name}:${step.step}/${pass}`;\n"
    "}\n"
    "function writeCheckpoint(step, p, cp) {\n"
    "  renewLease();\n"
    "  const set = {digest: PLAN.digest, step: Long.fromNumber(step.step), pass: Long.fromNumber(p.pass),\n"
    "               op: step.op, ns: p.ns, db: p.aggregate.db, coll: p.aggregate.coll,\n"
    "               seen: Long.fromNumber(cp.seen), changed: Long.fromNumber(cp.written), done: cp.done,\n"
    "               updated: new Date(), tool: 'remodel 0.1.0 (mongosh script)'};\n"
    "  if (cp.hasLast) set.last = cp.last;\n"
    "  state.checkpoints.updateOne({_id: checkpointId(step, p.pass)},\n"
    "    {$set: set, $setOnInsert: {started: new Date()}}, {upsert: true});\n"
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
    "  // The _ids in order through one cursor; a range names its own ({$in}),\n"
    "  // since {$gt: A, $lte: B} would keep to the type of A and B.\n"
    "  const cur = src.getCollection(p.aggregate.coll)\n"
    "    .find(cp.hasLast ? {_id: {$gt: cp.last}} : {}, {_id: 1}).sort({_id: 1}).batchSize(opt.batchSize);\n"
    "  for (;;) {\n"
    "    waitWhilePaused();\n"
    "    const ids = [];\n"
    "    while (ids.length < opt.batchSize && cur.hasNext()) ids.push(cur.next()._id);\n"
    "    if (!ids.length) break;\n"
    "    const hi = ids[ids.length - 1];\n"
    "    const range = {_id: {$in: ids}};\n"
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
    "state.leases.deleteOne({_id: PLAN.name, owner: opt.owner});\n"
    "print(`remodel: plan ${PLAN.name}: every step ran server-side`);\n";

char *
compile_print_mongosh (online_t *on, const compile_plan_t *c, bson_error_t *err)
{
    rm_buf_t b;
    char line[256];
    (void) err;

    rm_buf_init (&b);
    compile_put (&b, "// remodel: plan ");
    compile_put_str (&b, on->name); /* quoted: a name cannot end the comment */
    snprintf (line, sizeof line, ", compiled for MongoDB %d.%d (remodel compile --format mongosh)\n",
              c->version.major, c->version.minor);
    compile_put (&b, line);
    compile_put (&b, "//\n"
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
    compile_put (&b, "const PLAN = {name: ");
    compile_put_str (&b, on->name);
    compile_put (&b, ", digest: ");
    compile_put_str (&b, on->digest);
    compile_put (&b, ", steps: [");
    for (size_t i = 0; i < c->n; i++) {
        const compile_step_t *st = &c->steps[i];
        snprintf (line, sizeof line, "%s\n  {step: %zu, op: ", i ? "," : "", st->s->index);
        compile_put (&b, line);
        compile_put_str (&b, st->s->op);
        if (!st->n_passes) {
            compile_put (&b, ", serverSide: false, reason: ");
            compile_put_str (&b, st->reason);
            compile_put (&b, ", passes: []}");
            continue;
        }
        compile_put (&b, ", serverSide: true,");
        /* Notes quote the plan's names: JSON strings, never comment text a
         * newline in a name could end. */
        if (st->n_notes) {
            compile_put (&b, "\n   notes: [");
            for (size_t k = 0; k < st->n_notes; k++) {
                compile_put (&b, k ? ",\n           " : "");
                compile_put_str (&b, st->notes[k]);
            }
            compile_put (&b, "],");
        }
        if (st->guard_ns) {
            compile_put (&b, "\n   guard: {ns: ");
            compile_put_str (&b, st->guard_ns->text);
            compile_put (&b, ", db: ");
            compile_put_str (&b, st->guard_ns->db);
            compile_put (&b, ", coll: ");
            compile_put_str (&b, st->guard_coll);
            compile_put (&b, ", field: ");
            compile_put_str (&b, st->guard_field);
            compile_put (&b, "},");
        }
        compile_put (&b, "\n   passes: [");
        for (size_t p = 0; p < st->n_passes; p++) {
            const compile_pass_t *cp = &st->passes[p];
            snprintf (line, sizeof line, "%s\n    {pass: %zu, ns: ", p ? "," : "", cp->pass + 1);
            compile_put (&b, line);
            compile_put_str (&b, cp->drive->text);
            compile_put (&b, ", aggregate: {db: ");
            compile_put_str (&b, cp->drive->db);
            compile_put (&b, ", coll: ");
            compile_put_str (&b, cp->coll);
            compile_put (&b, "},\n     pipeline: EJSON.deserialize(");
            compile_put_pipeline (&b, &cp->pipeline, "      ");
            compile_put (&b, ")}");
        }
        compile_put (&b, "]}");
    }
    compile_put (&b, "]};\n");
    compile_put (&b, runner);
    rm_buf_append (&b, "", 1);
    return (char *) b.data;
}
