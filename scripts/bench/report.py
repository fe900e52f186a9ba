#!/usr/bin/env python3
"""Renders scripts/bench.sh's results (TSV) as compact sections (--outdir),
which scripts/bench/section.py puts into BUILD/bench and BENCHMARKS.md."""
import argparse, datetime, os, sys

STREAMING = {"extract", "field", "denormalize", "unbucketize"}
JOINS = {"embed", "summarize", "bucketize"}
LABEL = {"convert-plain": "convert plain→plain archive", "convert-zstd": "convert zstd→zstd archive",
         "convert-gzip": "convert plain→gzip archive", "extract": "extract crm.people.addresses",
         "field": "set + rename in logging.logmsg", "denormalize": "denormalize hosts.ipaddr → logmsg",
         "unbucketize": "unbucketize iot.buckets", "embed": "embed crm.tasks → crm.people",
         "summarize": "summarize logmsg → hosts ($count/$max/$topN)",
         "bucketize": "bucketize iot.readings hourly"}

def load(path):
    rows = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        kind, name, b, docs, mem, secs, rss, spilled, cmd = f[:9]
        ok = secs != "FAIL"
        rows.append(dict(kind=kind, name=name, bytes=int(b), docs=int(docs), mem=mem,
                         secs=float(secs) if ok else None, rss=int(rss) if ok else None,
                         spilled=spilled, cmd=cmd, ok=ok))
    return rows

def mbs(r):
    return r["bytes"] / 1e6 / max(r["secs"], 0.005) if r["ok"] else None

def analyse(rows):
    floors = {}
    for r in rows:  # a floor measured several times counts its fastest run
        if r["kind"] == "floor" and r["ok"] and (r["name"] not in floors or r["secs"] < floors[r["name"]]["secs"]):
            floors[r["name"]] = r
    py = {r["name"]: r for r in rows if r["kind"] == "python" and r["ok"]}
    # A step measured several times: its fastest run, with the largest peak
    # RSS of all its runs (memory is a bound, not a best case).
    runs = {}
    for r in rows:
        if r["kind"] != "remodel":
            continue
        k = (r["name"], r["mem"])
        if k not in runs:
            runs[k] = dict(r, runs=1)
            continue
        b = runs[k]
        b["runs"] += 1
        if not r["ok"]:
            b.update(ok=False, secs=None)
        elif b["ok"]:
            peak = max(b["rss"], r["rss"])
            if r["secs"] < b["secs"]:
                b.update(secs=r["secs"], spilled=r["spilled"])
            b["rss"] = peak
    out = []
    for r in runs.values():
        n = r["name"]
        if n.endswith("-only"):
            continue
        floor = {"convert-zstd": "zstd", "convert-gzip": "gzip", "unbucketize": "cat-bucketized"}.get(n, "cat")
        fl = floors.get(floor)
        ratio = mbs(r) / mbs(fl) if r["ok"] and fl else None
        target = None
        if n == "convert-plain": target = 0.50
        elif n == "convert-zstd": target = 0.80
        elif n in STREAMING: target = 0.35
        elif n in JOINS and r["mem"] == "64M": target = 0.15
        rss_target = 128 * 1024 if n in JOINS and r["mem"] == "64M" else None
        p = py.get(n)
        pyx = p["secs"] / r["secs"] if p and r["ok"] and r["mem"] == "512M" else None
        out.append(dict(r, floor=floor, ratio=ratio, target=target, rss_target=rss_target, py=p, pyx=pyx))
    return out, floors

def fmt_pct(x): return "—" if x is None else f"{100 * x:.0f}%"

def verdict(a):
    parts = []
    if a["target"] is not None and a["ratio"] is not None:
        if a["ratio"] >= a["target"]:
            parts.append(f"≥ {fmt_pct(a['target'])} of {a['floor']}: met")
        else:
            parts.append(f"≥ {fmt_pct(a['target'])} of {a['floor']}: **missed by {100 * (a['target'] - a['ratio']):.0f} points** "
                         f"(needs {a['target'] / a['ratio']:.1f}× faster)")
    if a["rss_target"] is not None and a["rss"] is not None:
        parts.append(f"RSS ≤ 128 MB: {'met' if a['rss'] <= a['rss_target'] else '**missed by %.0f MB**' % ((a['rss'] - a['rss_target']) / 1024)}"
                     + ("" if a["spilled"] == "true" else f" (spilled: {a['spilled']})"))
    if a["pyx"] is not None:
        parts.append(f"≥ 50× the script: {'met' if a['pyx'] >= 50 else '**missed: %.1f×, needs %.0f× faster**' % (a['pyx'], 50 / a['pyx'])}")
    return "; ".join(parts) or "no target"

def table(an, floors):
    L = ["| step | --memory | wall s | MB/s in | docs/s in | peak RSS MB | spilled | vs floor | vs script | target (issue) |",
         "|---|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for a in an:
        if not a["ok"]:
            L.append(f"| {LABEL.get(a['name'], a['name'])} | {a['mem']} | FAILED | | | | | | | |")
            continue
        L.append(f"| {LABEL.get(a['name'], a['name'])} | {a['mem']} | {a['secs']:.2f} | {mbs(a):.0f} | {a['docs'] / max(a['secs'], .005):,.0f} | "
                 f"{a['rss'] / 1024:.0f} | {a['spilled']} | {fmt_pct(a['ratio'])} of {a['floor']} | "
                 f"{'%.1f×' % a['pyx'] if a['pyx'] is not None else '—'} | {verdict(a)} |")
    return "\n".join(L)

def refs(rows):
    L = ["| reference | wall s | MB/s in | peak RSS MB | command |", "|---|---:|---:|---:|---|"]
    for r in rows:
        if r["kind"] in ("floor", "python", "bsondump") and r["ok"] and not r["name"].endswith("-only"):
            name = {"python": "by hand (Python, pymongo bson): "}.get(r["kind"], "") + r["name"]
            L.append(f"| {name} | {r['secs']:.2f} | {mbs(r):.0f} | {r['rss'] / 1024:.0f} | `{r['cmd']}` |")
    return "\n".join(L)

def only_table(rows):
    """remodel against the by-hand script on a dump of the touched namespaces."""
    best = {}
    for r in rows:
        if r["name"].endswith("-only") and r["ok"]:
            k = (r["kind"], r["name"])
            if k not in best or r["secs"] < best[k]["secs"]:
                best[k] = dict(r, rss=max(r["rss"], best.get(k, r)["rss"]))
    L = ["| step | input MB | remodel s | script s | remodel vs script | remodel RSS MB | script RSS MB | target |",
         "|---|---:|---:|---:|---:|---:|---:|---|"]
    for k in sorted(best):
        if k[0] != "remodel":
            continue
        r, p = best[k], best.get(("python", k[1]))
        if not p:
            continue
        x = p["secs"] / max(r["secs"], 0.005)
        name = LABEL.get(k[1][:-5], k[1][:-5])
        L.append(f"| {name} | {r['bytes'] / 1e6:.0f} | {r['secs']:.2f} | {p['secs']:.2f} | {x:.1f}× | "
                 f"{r['rss'] / 1024:.0f} | {p['rss'] / 1024:.0f} | ≥ 50×: {'met' if x >= 50 else '**missed, needs %.0f× faster**' % (50 / x)} |")
    return "\n".join(L) if len(L) > 2 else ""

def worst(an):
    best = None
    for a in an:
        scores = []
        if a["target"] and a["ratio"]: scores.append(a["ratio"] / a["target"])
        if a["pyx"]: scores.append(a["pyx"] / 50)
        for s in scores:
            if s < 1 and (best is None or s < best[0]):
                best = (s, a)
    return best[1] if best else None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results"); ap.add_argument("--outdir", default="."); ap.add_argument("--scale", default="?")
    ap.add_argument("--machine", default=""); ap.add_argument("--command", default="make bench")
    ap.add_argument("--cache", default=""); ap.add_argument("--profile"); ap.add_argument("--notes")
    ap.add_argument("--repeat", default="1")
    ap.add_argument("--worst", action="store_true"); ap.add_argument("--table-only", action="store_true")
    o = ap.parse_args()
    rows = load(o.results)
    an, floors = analyse(rows)
    if o.worst:
        w = worst(an)
        if w: print(f"{w['name']} --memory {w['mem']}\t{w['cmd']}")
        return
    if o.table_only:
        print(table(an, floors)); print(); print(refs(rows)); return
    # Compact sections, each a file in --outdir that scripts/bench.sh hands
    # to scripts/bench/section.py: "remodel" (the table), "references"
    # (the floors and the scripts), "profile" (the notes and the profile of
    # the main miss: BUILD only, too long for BENCHMARKS.md).
    cat = floors.get("cat")
    size = f"{cat['bytes'] / 1e9:.2f} GB plain archive, {cat['docs']:,} documents" if cat else "?"
    os.makedirs(o.outdir, exist_ok=True)
    head = (f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; `{o.command}`: "
            f"`remodel-gen --scale {o.scale} --seed 1`, {size}; the fastest of {o.repeat}; "
            f"{o.machine})")
    with open(os.path.join(o.outdir, "remodel.md"), "w") as f:
        f.write(head + "\n\n" + table(an, floors) + "\n")
    ref = refs(rows)
    ot = only_table(rows)
    if ot:
        ref += "\n\nOn a dump of only the namespaces the step touches, directory to directory:\n\n" + ot
    with open(os.path.join(o.outdir, "references.md"), "w") as f:
        f.write(ref + "\n")
    prof = []
    if o.notes and os.path.exists(o.notes):
        prof += [open(o.notes).read().rstrip(), ""]
    if o.profile and os.path.exists(o.profile) and os.path.getsize(o.profile):
        w = worst(an)
        prof += ["## Profile of the main miss (raw)", "",
                 f"Main miss (lowest achieved/target): {LABEL.get(w['name'], w['name'])}, --memory {w['mem']}." if w else "",
                 "", "```", open(o.profile).read().rstrip(), "```", ""]
    with open(os.path.join(o.outdir, "profile.md"), "w") as f:
        f.write("\n".join(prof) + "\n")

if __name__ == "__main__":
    main()
