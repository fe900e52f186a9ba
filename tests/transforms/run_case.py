#!/usr/bin/env python3
"""Runs JSON transform cases against remodel and prints PASS/FAIL lines.

    REMODEL=build/remodel python3 tests/transforms/run_case.py WORKDIR CASES.json...

A case (see rmlib.py for the document notation):
  name           its name
  plan           the plan (JSON object; written to a file as is), or
  plan_text      the plan file's exact text
  input          {"db.coll": [documents]}: written as WORK/in/db/coll.bson
  input_metadata {"db.coll": text or object}: WORK/in/db/coll.metadata.json
  expect         {"db.coll": [documents]}: the output must hold exactly these
                 namespaces (unless "partial": true), with exactly these
                 documents, in this order, byte for byte
  unordered      [namespaces compared as multisets]
  expect_stats   {"db.coll": {"in": N, ...}} checked in --stats-json
  expect_indexes {"db.coll": [{"key": 1}]}: index keys in the output metadata
  expect_metadata_verbatim [namespaces whose metadata file is copied as is]
  expect_error   "substring" or [substrings]: the run fails (status 1..125),
                 stderr holds each, nothing is written
  expect_status  the exact exit status of a failing run
  check_error    [substrings]: `remodel check PLAN --against IN` fails with
                 status 2 and says all of them; `remodel run` refuses the plan
                 without writing anything
  check_no_against  true: run `remodel check PLAN` without --against
  check_ok       true: `remodel check PLAN --against IN` succeeds

Each successful case runs three times: to a directory, to a directory with
--memory 1K (the external-sort path), and to a .archive; the three outputs
must be byte-identical. After every run the --tmp directory must be empty.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402
from rmlib import ObjectId, Placeholder  # noqa: E402


def write_plan(path, case):
    with open(path, "w", encoding="utf-8") as f:
        if "plan_text" in case:
            f.write(case["plan_text"])
        else:
            json.dump(case["plan"], f, ensure_ascii=False)


def check_tmp(tmp, what):
    left = rmlib.leftovers(tmp)
    return ["%s: temporary files left in --tmp: %s" % (what, left)] if left else []


def failed_cleanly(r, what, substrings, status=None):
    p = []
    if status is not None:
        if r.rc != status:
            p.append("%s: exit status %d, want %d; stderr: %s" % (what, r.rc, status, r.err[:500]))
    elif not 1 <= r.rc <= 125:
        p.append("%s: exit status %d, want 1..125; stderr: %s" % (what, r.rc, r.err[:500]))
    for s in substrings:
        if s not in r.err:
            p.append("%s: stderr lacks %r: %s" % (what, s, r.err[:600]))
    # README: an error is printed once, as one line (and no sanitizer report)
    lines = r.err.splitlines()
    if len(lines) != 1 or not lines[0].startswith("remodel: error: "):
        p.append("%s: stderr is not one 'remodel: error: ' line: %s" % (what, r.err[:600]))
    return p


def run_check_case(case, work, rep):
    name = case["name"]
    plan = os.path.join(work, "plan.json")
    src = os.path.join(work, "in")
    tmp = os.path.join(work, "tmp")
    out = os.path.join(work, "out")
    rmlib.fresh(src)
    rmlib.fresh(out)
    os.makedirs(tmp, exist_ok=True)
    write_plan(plan, case)
    inp = {ns: [rmlib.ext(d) for d in docs] for ns, docs in case.get("input", {}).items()}
    rmlib.write_dump(src, inp, case.get("input_metadata"))
    args = ["check", plan] + ([] if case.get("check_no_against") else ["--against", src])
    r = rmlib.run_remodel(args)
    if case.get("check_ok"):
        p = [] if r.rc == 0 else ["check: status %d: %s" % (r.rc, r.err[:500])]
        rep.result(name + ": check accepts", p)
        return
    subs = case["check_error"]
    p = failed_cleanly(r, "check", subs, status=2)
    rep.result(name + ": check", p)
    # remodel run refuses it before writing anything
    r = rmlib.run_remodel(["run", plan, "--from", src, "--to", out, "--quiet", "--tmp", tmp])
    p = failed_cleanly(r, "run", subs[:1], status=case.get("run_status"))
    if os.path.lexists(out):
        p.append("run: the destination exists after a refused plan")
    stray = [f for f in os.listdir(work) if ".remodel-" in f]
    if stray:
        p.append("run: temporary outputs left: %s" % stray)
    p += check_tmp(tmp, "run")
    rep.result(name + ": run refuses", p)


def run_case(case, work, rep):
    if "check_error" in case or case.get("check_ok"):
        return run_check_case(case, work, rep)
    name = case["name"]
    plan = os.path.join(work, "plan.json")
    src = os.path.join(work, "in")
    tmp = os.path.join(work, "tmp")
    rmlib.fresh(src)
    os.makedirs(tmp, exist_ok=True)
    write_plan(plan, case)
    inp = {ns: [rmlib.ext(d) for d in docs] for ns, docs in case.get("input", {}).items()}
    rmlib.write_dump(src, inp, case.get("input_metadata"))

    variants = [("dir", os.path.join(work, "out"), []),
                ("memory 1K", os.path.join(work, "out-mem"), ["--memory", "1K"]),
                ("archive", os.path.join(work, "out.archive"), [])]
    if case.get("variants") == "dir":
        variants = variants[:1]

    if "expect_error" in case:
        subs = case["expect_error"]
        subs = [subs] if isinstance(subs, str) else subs
        p = []
        for vname, out, extra in variants:
            rmlib.fresh(out)
            r = rmlib.run_remodel(["run", plan, "--from", src, "--to", out, "--quiet",
                                   "--tmp", tmp] + extra)
            p += failed_cleanly(r, vname, subs, case.get("expect_status"))
            if os.path.lexists(out):
                p.append("%s: the destination exists after a failed run" % vname)
            stray = [f for f in os.listdir(work) if ".remodel-" in f]
            if stray:
                p.append("%s: temporary outputs left: %s" % (vname, stray))
            p += check_tmp(tmp, vname)
        rep.result(name, p)
        return

    outputs = {}
    stats = {}
    problems = []
    for vname, out, extra in variants:
        rmlib.fresh(out)
        sj = os.path.join(work, "stats-%s.json" % vname.replace(" ", ""))
        rmlib.fresh(sj)
        r = rmlib.run_remodel(["run", plan, "--from", src, "--to", out, "--quiet",
                               "--tmp", tmp, "--stats-json", sj] + extra)
        problems += check_tmp(tmp, vname)
        if r.rc != 0:
            problems.append("%s: remodel run failed, status %d: %s" % (vname, r.rc, r.err[:800]))
            continue
        # --quiet leaves only the warnings, which the case lists (substrings).
        lines = [l for l in r.err.splitlines() if l.strip()]
        want = case.get("warnings", [])
        for w in want:
            if sum(w in l for l in lines) != 1:
                problems.append("%s: want one warning with %r, stderr: %s" % (vname, w, r.err[:600]))
        extra = [l for l in lines if not any(w in l for w in want)]
        if extra:
            problems.append("%s: --quiet run wrote to stderr: %s" % (vname, "\n".join(extra)[:600]))
        try:
            if vname == "archive":
                outputs[vname] = rmlib.read_archive(out)
            else:
                outputs[vname] = rmlib.read_dir(out)
        except Exception as e:
            problems.append("%s: cannot read the output: %s" % (vname, e))
        try:
            with open(sj) as f:
                stats[vname] = json.load(f)
        except Exception as e:
            problems.append("%s: --stats-json: %s" % (vname, e))
    if "dir" not in outputs:
        rep.bad(name, "\n".join(problems))
        return

    nss, metas = outputs["dir"]
    # the documents, as docs/plans.md says
    exp = {ns: [rmlib.ext(d) for d in docs] for ns, docs in case["expect"].items()}
    b = rmlib.Bindings()
    if not case.get("partial"):
        extra_ns = sorted(set(nss) - set(exp))
        missing = sorted(set(exp) - set(nss))
        if extra_ns:
            problems.append("unexpected namespaces in the output: %s" % extra_ns)
        if missing:
            problems.append("namespaces missing from the output: %s" % missing)
    unordered = set(case.get("unordered", []))
    for ns in exp:
        if ns in nss:
            problems += rmlib.compare_ns(ns, exp[ns], nss[ns], b, ns in unordered)
        elif case.get("partial"):
            problems.append("namespace %s missing from the output" % ns)
    problems += b.problems
    # distinct labels stand for distinct ObjectIds
    seen = {}
    for label, v in b.values.items():
        if isinstance(v, ObjectId):
            if v in seen:
                problems.append("placeholders %s and %s are the same ObjectId %s"
                                % (seen[v], label, v))
            seen[v] = label

    # the three outputs are byte-identical
    for vname in ("memory 1K", "archive"):
        if vname in outputs:
            for d in rmlib.bson_bytes_equal(nss, outputs[vname][0]):
                problems.append("dir vs %s: %s" % (vname, d))

    # stats
    for ns, want in case.get("expect_stats", {}).items():
        got = None
        for n in stats.get("dir", {}).get("namespaces", []):
            if n.get("ns") == ns:
                got = n
        if got is None:
            problems.append("stats: no entry for %s" % ns)
            continue
        for k, v in want.items():
            if got.get(k) != v:
                problems.append("stats %s.%s = %r, want %r" % (ns, k, got.get(k), v))
    # index on parentField
    for ns, keys in case.get("expect_indexes", {}).items():
        text = metas.get(ns)
        if text is None:
            problems.append("no metadata for %s" % ns)
            continue
        try:
            meta = rmlib.json_util.loads(text)
            have = [dict(ix.get("key", {})) for ix in meta.get("indexes", [])]
        except Exception as e:
            problems.append("metadata of %s does not parse: %s" % (ns, e))
            continue
        for k in keys:
            if dict(k) not in have:
                problems.append("metadata of %s: no index %s (indexes: %s)" % (ns, k, have))
    for ns in case.get("expect_metadata_verbatim", []):
        want = case["input_metadata"][ns]
        if metas.get(ns) != want:
            problems.append("metadata of %s not verbatim: %r" % (ns, metas.get(ns)))
        if "archive" in outputs and outputs["archive"][1].get(ns) != want:
            problems.append("archive metadata of %s not verbatim: %r"
                            % (ns, outputs["archive"][1].get(ns)))
    rep.result(name, problems)


def main():
    work = sys.argv[1]
    rep = rmlib.Reporter()
    for path in sys.argv[2:]:
        for case in rmlib.load_cases(path):
            try:
                run_case(case, work, rep)
            except Exception as e:  # a broken harness is a failure, not a crash
                import traceback
                rep.bad(case.get("name", path), traceback.format_exc())
    sys.exit(0)


if __name__ == "__main__":
    main()
