/* remodel compile --format mongosh --views: the part of the script that
 * creates the views of the old shape (view_plan.c's `create` commands) as
 * MongoDB views, once remodel online finalize has put the new design in
 * place. Run apart from the migration (var views = true), since the views
 * read the collections finalize puts in place. */
#include <string.h>

#include "compile_impl.h"

static const char intro[] =
    "\n"
    "// ---- the views of the old shape (remodel compile --views) ----\n"
    "// After remodel online finalize, run this script again with views = true:\n"
    "//\n"
    "//   mongosh \"mongodb://HOST:PORT/\" --eval 'var views = true' THIS_FILE\n"
    "//\n"
    "// It runs no step then: it creates, for each namespace the plan changed,\n"
    "// a view (db.createView) that reads the new collections and gives back\n"
    "// the documents as they were, for the application's old code. A namespace\n"
    "// the new design no longer holds under its own name (the children an embed\n"
    "// took into their parents, the readings bucketize grouped) gets its view\n"
    "// under that old name, so the old code reads on unchanged: the collection\n"
    "// still there under it (the orphans the view adds back) is first renamed\n"
    "// aside, to NAME_remodel_PLANID_aside, and the view reads it there. A\n"
    "// namespace that holds the new design gets its view beside it, as\n"
    "// NAME_before. Run again, it replaces the views it made. It refuses while\n"
    "// the plan's run is recorded in the state database (stateDb) and not\n"
    "// finalized: the sources would still hold the old documents.\n";

static const char runner[] =
    "// A stage's references to the collection renamed aside, made to the new name.\n"
    "function asideRefs(v, from, to) {\n"
    "  if (Array.isArray(v)) return v.map((x) => asideRefs(x, from, to));\n"
    "  if (v === null || typeof v !== 'object' || v._bsontype ||\n"
    "      Object.prototype.toString.call(v) !== '[object Object]') return v; // a value, not a document\n"
    "  const out = {};\n"
    "  for (const [k, x] of Object.entries(v)) {\n"
    "    if (k === '$unionWith' && x === from) out[k] = to;\n"
    "    else if (k === '$unionWith' && x && x.coll === from) out[k] = Object.assign(asideRefs(x, from, to), {coll: to});\n"
    "    else if (k === '$lookup' && x && x.from === from) out[k] = Object.assign(asideRefs(x, from, to), {from: to});\n"
    "    else out[k] = asideRefs(x, from, to);\n"
    "  }\n"
    "  return out;\n"
    "}\n"
    "function createViews() {\n"
    "  const stateName = typeof stateDb === 'string' ? stateDb : 'remodel';\n"
    "  const rec = db.getSiblingDB(stateName).plans.findOne({_id: PLAN.id});\n"
    "  if (rec && !rec.finalized) {\n"
    "    print(`remodel: error: plan ${PLAN.name}: not finalized: run remodel online finalize first (the sources still hold the old documents)`);\n"
    "    quit(2);\n"
    "  }\n"
    "  for (const v of VIEWS) {\n"
    "    const d = db.getSiblingDB(v.db);\n"
    "    const old = v.command.create.replace(/_before$/, '');\n"
    "    const takesOld = v.command.viewOn !== old;\n"
    "    const name = takesOld ? old : v.command.create;\n"
    "    const info = d.getCollectionInfos().find((c) => c.name === name);\n"
    "    let pipeline = v.command.pipeline;\n"
    "    if (info && info.type === 'view') {\n"
    "      d.getCollection(name).drop(); // made by an earlier run: replaced\n"
    "    } else if (info && !takesOld) {\n"
    "      print(`remodel: error: ${v.db}.${name} is a collection: rename or drop it to make the view of ${v.db}.${old} there`);\n"
    "      quit(2);\n"
    "    }\n"
    "    if (takesOld) {\n"
    "      const aside = `${old}_remodel_${PLAN.id}_aside`;\n"
    "      if (info && info.type !== 'view') {\n"
    "        d.getCollection(old).renameCollection(aside);\n"
    "        print(`remodel: ${v.db}.${old} renamed aside to ${v.db}.${aside}`);\n"
    "      }\n"
    "      pipeline = asideRefs(pipeline, old, aside);\n"
    "    }\n"
    "    d.createView(name, v.command.viewOn, pipeline);\n"
    "    print(`remodel: view ${v.db}.${name}: ${v.db}.${old} as it was, over ${v.db}.${v.command.viewOn}`);\n"
    "  }\n"
    "  print(`remodel: plan ${PLAN.name}: ${VIEWS.length} view(s) of the old shape`);\n"
    "}\n"
    "if (typeof views === 'boolean' && views) {\n"
    "  createViews();\n"
    "  quit(0);\n"
    "}\n";

char *
rm_compile_mongosh_views (const rm_plan_t *plan, rm_compile_version_t v, char **refusals)
{
    char *lines = rm_compile_print_views (plan, v, true, refusals);
    rm_buf_t b;

    rm_buf_init (&b);
    rm_compile_put (&b, intro);
    rm_compile_put (&b, "const VIEWS = [");
    /* each line a create command in canonical Extended JSON */
    for (const char *l = lines; *l;) {
        const char *nl = strchr (l, '\n');
        size_t len = nl ? (size_t) (nl - l) : strlen (l);
        rm_compile_put (&b, "\n  EJSON.deserialize(");
        rm_buf_append (&b, l, len);
        rm_compile_put (&b, "),");
        l += len + (nl != NULL);
    }
    rm_compile_put (&b, "\n];\n");
    rm_compile_put (&b, runner);
    rm_buf_append (&b, "", 1);
    bson_free (lines);
    return (char *) b.data;
}
