#!/usr/bin/env python3
"""A differential test of remodel's aggregation expressions against a peer
that nobody here wrote: mongo-java-server (through mongosh 1.10.6) or mingo
(through Node). Used by tests/cli/test_expr_java.sh and test_expr_mingo.sh.

  expr_diff.py --peer java  --mongosh MONGOSH --uri URI   COMMON
  expr_diff.py --peer mingo --mingo MINGO_DIR             COMMON
  COMMON: --remodel BIN --docs DOCS.json --cases CASES.json --work DIR
          [--jobs N] [--filters] [--no-filters WHY]

DOCS.json: the documents of one collection (xd.c), Extended JSON.
CASES.json: a list of cases, each one of
  {"name": N, "expr": E}                  $addFields {r: E} on the peer; a
                                          plan {"set": {"in": "xd.c",
                                          "fields": {"r": E}}} run by remodel
  {"name": N, "expr": E, "stage": "project"}
                                          $project {r: E} on the peer,
                                          compared with {_id, r} of remodel's
  {"name": N, "query": Q}                 $match Q on the peer; a set step
                                          with "filter": Q (marking what it
                                          changes) in remodel: the same _ids
                                          match, the others stay byte for byte
and optionally:
  "ids": [...]      only these documents (both sides)
  "error": true     both must fail (an expression error on some document)
  "departs": {"who": "java"|"mingo"|"remodel", "why": TEXT, "doc": URL,
              "want": {ID: VALUE}, "got": {ID: VALUE}}
      where the peer and remodel differ and MongoDB's documentation decides:
      "want" is the documented r of the documents named (by _id as JSON text,
      e.g. "1" or "\"str-id\""; "$$MISSING" for no r; "$$ERROR" for a failed
      run); the others must equal the peer's. For a query: "want_ids" and
      "got_ids" (_id texts as above; "got_ids": "$$ERROR" when remodel
      refuses the plan). who "java"/"mingo": the peer
      departs, remodel must give "want" (PASS, the line names the departure
      and the page). who "remodel": remodel departs, a known bug: remodel's
      "got" prints KNOWN (not counted as passed), "want" PASSes (fixed: drop
      the entry), anything else FAILs.
  "numbers": "value"  (mingo) numbers compared by value, not by type

Each case prints one PASS, FAIL or KNOWN line; SKIP lines for what is not
run. Documents are compared _id by _id, as canonical Extended JSON (types
and field order included; for mingo every int32, int64 and double is
compared as a double: JavaScript has one number type). Exits 0 when every
case could be run (its FAIL lines say what differs), 2 when the harness
itself fails."""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
from bson import json_util, encode, decode  # noqa: E402
from bson.codec_options import CodecOptions  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.son import SON  # noqa: E402

CANON = json_util.CANONICAL_JSON_OPTIONS
SONOPTS = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL, document_class=SON)
NS = "xd.c"
MISSING, ERROR = "$$MISSING", "$$ERROR"


def die(msg):
    print("expr_diff.py: %s" % msg, file=sys.stderr)
    sys.exit(2)


def loads(text):
    return json_util.loads(text, json_options=SONOPTS)


def canon(v):
    return json_util.dumps(v, json_options=CANON)


def by_value(v):
    """Every int32, int64 and double as a double (mingo's numbers)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, Int64, float)):
        return float(v)
    if isinstance(v, dict):
        return SON((k, by_value(x)) for k, x in v.items())
    if isinstance(v, list):
        return [by_value(x) for x in v]
    return v


def idkey(doc_id):
    """An _id as the text that names it in a case's "want": 1, "str-id" (quoted)."""
    if isinstance(doc_id, (int, str)) and not isinstance(doc_id, bool):
        return json.dumps(doc_id, ensure_ascii=False)
    return json.dumps(json.loads(canon({"i": doc_id}))["i"], sort_keys=True)


# --- the peers ----------------------------------------------------------------

JAVA_JS = r"""
const T = require("fs").readFileSync(process.env.EXPR_DIFF_IN, "utf8");
const input = EJSON.parse(T, {relaxed: false});
const d = db.getSiblingDB("xd");
try { d.c.drop(); } catch (e) { }
d.c.insertMany(input.docs);
for (const k of input.runs) {
  let out;
  try {
    out = {name: k.name, ok: 1, docs: d.c.aggregate(k.pipeline).toArray()};
  } catch (e) {
    out = {name: k.name, ok: 0, err: String(e && e.message || e)};
  }
  print(EJSON.stringify(out, {relaxed: false}));
}
"""

MINGO_JS = r"""
const mingo = require("mingo");
const { EJSON } = require("bson");
const T = require("fs").readFileSync(process.env.EXPR_DIFF_IN, "utf8");
const parse = (t) => EJSON.parse(t, {relaxed: true});
const input = EJSON.parse(T, {relaxed: false});
const docsText = EJSON.stringify(input.docs, {relaxed: false});
for (const k of input.runs) {
  let out;
  try {
    // A BSON regular expression becomes a JavaScript one (mingo's).
    const js = (v) => {
      if (v && v._bsontype === "BSONRegExp") return new RegExp(v.pattern, v.options.replace(/[^ims]/g, ""));
      if (Array.isArray(v)) return v.map(js);
      if (v && typeof v === "object" && !v._bsontype && !(v instanceof Date))
        return Object.fromEntries(Object.entries(v).map(([key, x]) => [key, js(x)]));
      return v;
    };
    const pipeline = js(parse(EJSON.stringify(k.pipeline, {relaxed: false})));
    out = {name: k.name, ok: 1, docs: mingo.aggregate(parse(docsText), pipeline)};
  } catch (e) {
    out = {name: k.name, ok: 0, err: String(e && e.message || e)};
  }
  console.log(EJSON.stringify(out, {relaxed: false}));
}
"""


def peer_runs(cases):
    runs = []
    for c in cases:
        pipe = []
        if "ids" in c:
            pipe.append({"$match": {"_id": {"$in": c["ids"]}}})
        if "query" in c:
            pipe.append({"$match": c["query"]})
        elif c.get("stage") == "project":
            pipe.append({"$project": {"r": c["expr"]}})
        else:
            pipe.append({"$addFields": {"r": c["expr"]}})
        runs.append({"name": c["name"], "pipeline": pipe})
    return runs


def run_peer(args, docs, cases, work):
    path = os.path.join(work, "peer-in.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(canon({"docs": docs, "runs": peer_runs(cases)}))
    env = dict(os.environ, EXPR_DIFF_IN=path)
    if args.peer == "java":
        js = os.path.join(work, "peer.js")
        with open(js, "w") as f:
            f.write(JAVA_JS)
        cmd = [args.mongosh, args.uri, "--quiet", "--norc", js]
    else:
        js = os.path.join(work, "peer.js")
        with open(js, "w") as f:
            f.write(MINGO_JS)
        env["NODE_PATH"] = os.path.join(args.mingo, "node_modules")
        cmd = ["node", js]
    # A guard against a hung peer, not a bound on its speed: on a loaded
    # machine mongosh and the java server took 170 s for what takes 5.
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, cwd=work)
    got = {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = loads(line)
        got[o["name"]] = o
    if r.returncode != 0 or len(got) != len(cases):
        die("the peer (%s) ran %d of %d cases, exit %d: %s" % (
            args.peer, len(got), len(cases), r.returncode, (r.stderr or r.stdout)[-1500:]))
    return got


# --- remodel ------------------------------------------------------------------

def write_dump(root, docs):
    os.makedirs(os.path.join(root, "xd"), exist_ok=True)
    with open(os.path.join(root, "xd", "c.bson"), "wb") as f:
        for d in docs:
            f.write(encode(d))


def run_remodel(args, case, src, work, i):
    plan = os.path.join(work, "plan-%d.json" % i)
    out = os.path.join(work, "out-%d.archive" % i)
    step = {"in": NS}
    if "query" in case:
        step["filter"] = case["query"]
        step["fields"] = {"__matched": {"$literal": True}}
    else:
        step["fields"] = {"r": case["expr"]}
    with open(plan, "w", encoding="utf-8") as f:
        f.write(canon({"remodel": 1, "steps": [{"set": step}]}))
    r = subprocess.run([args.remodel, "run", plan, "--from", src, "--to", out, "-q", "-f"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return {"ok": 0, "err": r.stderr.strip()[-600:], "rc": r.returncode}
    s = subprocess.run([args.remodel, "show", out, "--ns", NS, "--canonical"],
                       capture_output=True, text=True, timeout=300)
    if s.returncode != 0:
        return {"ok": 0, "err": "show: " + s.stderr.strip()[-600:], "rc": -1}
    return {"ok": 1, "docs": [loads(line) for line in s.stdout.splitlines() if line.strip()]}


# --- comparing ----------------------------------------------------------------

def r_of(doc):
    # r, or the mark of its absence
    return doc["r"] if "r" in doc else MISSING


def case_docs(case, docs):
    if "ids" not in case:
        return docs
    want = {idkey(i) for i in case["ids"]}
    return [d for d in docs if idkey(d["_id"]) in want]


def label(case):
    if "query" in case:
        return "$match %s" % json.dumps(json.loads(canon(case["query"])), ensure_ascii=False)
    st = "$project" if case.get("stage") == "project" else "$addFields"
    return "%s r: %s" % (st, json.dumps(json.loads(canon(case["expr"])), ensure_ascii=False))


def short(text, n=300):
    return text if len(text) <= n else text[:n] + "..."


def fmt(v):
    return v if v in (MISSING, ERROR) else canon(v)


def outcome(case, docs, mine):
    """remodel's result as {"$$ERROR"} or {_id key: r}, checking that it
    changed nothing but r -> (result, problems)."""
    if not mine["ok"]:
        return ERROR, []
    src = {idkey(d["_id"]): d for d in case_docs(case, docs)}
    out, problems = {}, []
    if len(mine["docs"]) != len(src):
        problems.append("remodel wrote %d documents of %d" % (len(mine["docs"]), len(src)))
    for d in mine["docs"]:
        k = idkey(d["_id"])
        out[k] = r_of(d)
        if case.get("stage") == "project" or k not in src:
            continue
        rest = SON((f, v) for f, v in d.items() if f != "r")
        base = SON((f, v) for f, v in src[k].items() if f != "r")
        if canon(rest) != canon(base):
            problems.append("%s: the other fields changed: %s" % (k, short(canon(d))))
        elif "r" in src[k] and "r" in d and list(d).index("r") != list(src[k]).index("r"):
            problems.append("%s: r moved" % k)
    return out, problems


def same_value(case, args, a, b):
    if MISSING in (a, b) or ERROR in (a, b):
        return a == b if isinstance(a, str) or isinstance(b, str) else False
    if case.get("numbers") == "value" or args.peer == "mingo":
        a, b = by_value(a), by_value(b)
    if case.get("unordered") and isinstance(a, list) and isinstance(b, list):
        a, b = sorted(a, key=canon_v), sorted(b, key=canon_v)
    return canon_v(a) == canon_v(b)


def canon_v(v):
    return canon({"v": v})


def diff(case, args, got, want, whose):
    """The documents where got and want differ, as text ([] when equal)."""
    if got == ERROR or want == ERROR:
        if got == want:
            return []
        return ["remodel %s, %s %s" % ("failed" if got == ERROR else "succeeded",
                                       whose, "a failure" if want == ERROR else "values")]
    out = []
    for k in sorted(set(got) | set(want)):
        if k not in got or k not in want:
            out.append("%s: only in %s" % (k, "remodel's" if k in got else whose))
        elif not same_value(case, args, got[k], want[k]):
            out.append("%s: remodel %s, %s %s" % (k, fmt(got[k]), whose, fmt(want[k])))
    return out


def compare(args, case, docs, peer, mine):
    """-> (verdict, note): verdict PASS, FAIL or KNOWN."""
    dep = case.get("departs")
    if "query" in case:
        return compare_match(args, case, docs, peer, mine)
    if case.get("error"):
        if peer["ok"]:
            return "FAIL", "the %s did not fail (the case says both must)" % args.peer
        if mine["ok"]:
            return "FAIL", "remodel succeeded where it must fail: %s" % short(
                " ".join(canon(d) for d in mine["docs"]))
        return "PASS", ""
    got, problems = outcome(case, docs, mine)
    if problems:
        return "FAIL", "; ".join(problems)
    # What the peer gives, and what MongoDB's documentation gives where the
    # case says the peer departs from it.
    peer_r = {idkey(d["_id"]): r_of(d) for d in peer["docs"]} if peer["ok"] else ERROR

    def overlay(base, over):
        if ERROR in over.values():
            return ERROR
        if base == ERROR:
            base = {}
        base = dict(base)
        base.update(over)
        return base

    if dep and dep["who"] != "remodel":
        want, whose = overlay(peer_r, dep["want"]), "documented"
    elif dep:
        want, whose = overlay(peer_r, dep["want"]), "documented"
        known = overlay(peer_r, dep["got"])
    else:
        want, whose = peer_r, args.peer
    if want == ERROR and not dep and got != ERROR:
        return "FAIL", "the %s failed: %s; remodel did not" % (args.peer, short(peer["err"]))
    d = diff(case, args, got, want, whose)
    if not d:
        return "PASS", ""
    if dep and dep["who"] == "remodel" and not diff(case, args, got, known, "known"):
        return "KNOWN", "; ".join(d)
    if got == ERROR:
        d.append("remodel: " + short(mine["err"]))
    if want == ERROR and not peer["ok"]:
        d.append("%s: %s" % (args.peer, short(peer["err"])))
    return "FAIL", "; ".join(d)


def compare_match(args, case, docs, peer, mine):
    """The _ids the peer's $match keeps; remodel's filter marks the same,
    and leaves every document as it was (but for the mark)."""
    dep = case.get("departs")
    if not peer["ok"]:
        return "FAIL", "the %s failed: %s" % (args.peer, short(peer["err"]))
    if not mine["ok"]:
        if dep and dep["who"] == "remodel" and dep.get("got_ids") == ERROR:
            return "KNOWN", "remodel failed: %s" % short(mine["err"])
        return "FAIL", "remodel failed: %s" % short(mine["err"])
    peer_ids = sorted(idkey(d["_id"]) for d in peer["docs"])
    my_ids = sorted(idkey(d["_id"]) for d in mine["docs"] if "__matched" in d)
    by_id = {idkey(d["_id"]): d for d in case_docs(case, docs)}
    for d in mine["docs"]:
        k = idkey(d["_id"])
        plain = SON((f, v) for f, v in d.items() if f != "__matched")
        if canon(plain) != canon(by_id.get(k)):
            return "FAIL", "remodel changed document %s: %s" % (k, short(canon(d)))
    want = sorted(dep["want_ids"]) if dep else peer_ids
    if my_ids == want:
        return "PASS", ""
    if dep and dep["who"] == "remodel" and my_ids == sorted(dep["got_ids"]):
        return "KNOWN", "matched: remodel %s, documented %s" % (my_ids, want)
    return "FAIL", "matched: remodel %s, %s %s" % (my_ids, "documented" if dep else args.peer, want)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", choices=["java", "mingo"], required=True)
    ap.add_argument("--mongosh")
    ap.add_argument("--uri")
    ap.add_argument("--mingo")
    ap.add_argument("--remodel", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-filters", metavar="WHY")
    ap.add_argument("--only", help="only the cases whose name holds this")
    ap.add_argument("--record", metavar="FILE",
                    help="write remodel's r of each case there ({name: {_id: r}}), to write a case's want")
    args = ap.parse_args()

    with open(args.docs, encoding="utf-8") as f:
        docs = loads(f.read())
    with open(args.cases, encoding="utf-8") as f:
        cases = loads(f.read())
    if args.only:
        cases = [c for c in cases if args.only in c["name"]]
    names = set()
    for c in cases:
        if c["name"] in names:
            die("two cases named %s" % c["name"])
        names.add(c["name"])
    if args.no_filters:
        skipped = [c for c in cases if "query" in c]
        cases = [c for c in cases if "query" not in c]
        if skipped:
            print("SKIP %s: the %d filter cases ($match vs a set step's filter): %s" % (
                args.peer, len(skipped), args.no_filters))
    os.makedirs(args.work, exist_ok=True)

    peer = run_peer(args, docs, cases, args.work)

    # One dump per subset of documents.
    srcs = {}
    for c in cases:
        key = canon(c.get("ids")) if "ids" in c else "all"
        if key not in srcs:
            root = os.path.join(args.work, "src-%d" % len(srcs))
            write_dump(root, case_docs(c, docs))
            srcs[key] = root
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [ex.submit(run_remodel, args, c, srcs[canon(c.get("ids")) if "ids" in c else "all"],
                          args.work, i) for i, c in enumerate(cases)]
        mine = [f.result() for f in futs]

    if args.record:
        rec = {}
        for c, m in zip(cases, mine):
            if "query" not in c:
                pr = peer[c["name"]]
                rec[c["name"]] = {"remodel": outcome(c, docs, m)[0], args.peer: {
                    idkey(d["_id"]): r_of(d) for d in pr["docs"]} if pr["ok"] else ERROR}
        with open(args.record, "w", encoding="utf-8") as f:
            f.write(canon(rec))
    who = {"java": "mongo-java-server", "mingo": "mingo"}[args.peer]
    for c, m in zip(cases, mine):
        verdict, note = compare(args, c, docs, peer[c["name"]], m)
        dep = c.get("departs")
        line = "%s %s: %s: %s" % (verdict, args.peer, c["name"], short(label(c), 160))
        if dep and dep["who"] != "remodel":
            line += " (%s departs: %s; MongoDB: %s)" % (who, dep["why"], dep["doc"])
        elif dep:
            line += " (remodel departs, known: %s; MongoDB: %s; %s)" % (
                dep["why"], dep["doc"], dep.get("issue", "issue 48"))
            if verdict == "PASS":
                line += " -- fixed now: drop the departure from the case"
        print(line, flush=True)
        if verdict != "PASS" and note:
            print("  %s: %s" % (c["name"], note), file=sys.stderr)


if __name__ == "__main__":
    main()
