#!/usr/bin/env bash
# remodel analyze --report, check --report, --format dot|mermaid: the pages
# opened in a real browser (headless Chromium, from the file, every
# request refused), their DOM read back (--dump-dom) and checked: the boxes
# with their counts and fields, the arrows and their labels, the before and
# after of a plan against a run of it analyzed by hand, nothing referenced
# outside the file, no script, a dump's names escaped; Graphviz's dot
# takes --format dot; errors. Screenshots are kept in $OUT (default
# BUILD/test-output/test_report) for a person to look at. Clean under the
# sanitizers too (REMODEL=build/sanitize/remodel), Graphviz's own leaks
# set aside (graphviz.lsan.supp).
#   REMODEL=build/remodel bash tests/cli/test_report.sh
. "$(dirname "$0")/lib.sh"
export LSAN_OPTIONS=suppressions=$ROOT/tests/cli/graphviz.lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
S=$ROOT/dumps/sample
ATLAS=$(atlas_sample)
OUT=${REMODEL_TEST_OUT:-$(dirname "$REMODEL")/test-output}/test_report
mkdir -p "$OUT"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

# browse PAGE NAME: the page's DOM as Chromium built it (in $T/NAME.dom), and
# a screenshot of its first laptop screen (in $OUT/NAME.png). No request can
# leave: every host name resolves to nothing and every request goes to a
# proxy on a port nothing listens on.
browse() {
    local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
                 --proxy-server=127.0.0.1:9 "--host-resolver-rules=MAP * ~NOTFOUND"
                 --disable-background-networking --disable-component-update --disable-sync
                 --user-data-dir="$T/chromium")
    "$CHROMIUM" "${flags[@]}" --dump-dom "file://$1" >"$T/$2.dom" 2>/dev/null
    "$CHROMIUM" "${flags[@]}" --window-size=1366,900 --virtual-time-budget=3000 --screenshot="$OUT/$2.png" "file://$1" >/dev/null 2>&1
}

# dom NAME QUERY: what the Python below prints about the DOM in $T/NAME.dom.
dom() { python3 "$T/dom.py" "$T/$1.dom" "$2"; }
cat >"$T/dom.py" <<'EOF'
import sys
from html.parser import HTMLParser

class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids, self.text = tag, dict(attrs), parent, [], ""
    def all(self):
        yield self
        for k in self.kids:
            yield from k.all()
    def texts(self):
        return [n.text.strip() for n in self.all() if n.tag == "text" and n.text.strip()]
    def title(self):
        return next((k.text for k in self.kids if k.tag == "title"), "")
    def cls(self):
        return self.attrs.get("class", "").split()

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", [], None)
    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n
    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))
    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent
    def handle_data(self, d):
        self.cur.text += d

p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
root, q = p.root, sys.argv[2]

def figure(fid):
    return next(n for n in root.all() if n.tag == "figure" and n.attrs.get("id") == fid)

def graph(fig):
    """Boxes: the name in their header -> their texts; labels: their node's
    name -> texts; arrows: their titles (tail->head)."""
    boxes, rels, arrows = {}, {}, []
    for n in fig.all():
        if n.tag == "g" and "coll" in n.cls():
            boxes[n.texts()[0]] = n.texts()   # by the name shown in its header
        elif n.tag == "g" and "rel" in n.cls():
            rels[n.title()] = n.texts()
        elif n.tag == "g" and "ref" in n.cls():
            arrows.append(n.title())
    return boxes, rels, arrows

if q.startswith("figure:"):
    # The boxes, labels and arrows of a figure, sorted, one a line.
    boxes, rels, arrows = graph(figure(q[7:]))
    for b in sorted(boxes):
        print("box", b, "|", boxes[b][1])
    for r in sorted(rels):
        print("label", r, "|", " / ".join(rels[r][1:]))
    for a in sorted(arrows):
        print("arrow", a)
elif q.startswith("box:"):
    # A box's texts: fig:name.
    fid, name = q[4:].split(":", 1)
    print("\n".join(graph(figure(fid))[0][name]))
elif q == "outside":
    # Everything that would make the browser fetch or run something.
    for n in root.all():
        if n.tag in ("script", "link", "iframe", "object", "embed", "img", "image", "use", "audio", "video", "source", "base"):
            print("element", n.tag)
        for k, v in n.attrs.items():
            if k in ("src", "href", "xlink:href", "srcset", "action", "data", "poster") or k.startswith("on"):
                print("attribute", n.tag, k, v)
            if v and ("url(" in v or "//" in v):
                print("attribute", n.tag, k, v)
        if n.tag == "style" and ("url(" in n.text or "@import" in n.text or "//" in n.text):
            print("style", n.text[:80])
elif q.startswith("row:"):
    # The cells of the per-namespace table's row whose first cell starts with the text.
    table = next(n for n in root.all() if n.tag == "table" and n.attrs.get("id") == "per-namespace")
    for n in table.all():
        if n.tag == "tr" and n.kids and n.kids[0].tag == "td" and \
           "".join(x.text for x in n.kids[0].all()).strip().split(" ")[0] == q[4:]:
            print(" | ".join("".join(x.text for x in c.all()).strip() for c in n.kids))
elif q == "rejected":
    # The items of the list under the heading of rejected candidates.
    h = next((n for n in root.all() if n.tag == "h3" and n.attrs.get("id") == "rejected"), None)
    if h:
        ul = h.parent.kids[h.parent.kids.index(h) + 1]
        for li in ul.kids:
            print("".join(x.text for x in li.all()).split(":")[0])
elif q == "namespaces":
    # The first cells of the per-namespace table's rows.
    table = next(n for n in root.all() if n.tag == "table" and n.attrs.get("id") == "per-namespace")
    for n in table.all():
        if n.tag == "tr" and n.kids and n.kids[0].tag == "td":
            print("".join(x.text for x in n.kids[0].all()).strip())
elif q.startswith("section:"):
    # What the list or table under the h3 of that id shows, an item or a
    # row a line, its parts (what and why; cells) apart by " | ".
    h = next((n for n in root.all() if n.tag == "h3" and n.attrs.get("id") == q[8:]), None)
    if h:
        txt = lambda n: "".join(x.text for x in n.all()).strip()
        body = h.parent.kids[h.parent.kids.index(h) + 1]
        for n in body.all():
            if n.tag == "li" or (n.tag == "tr" and n.kids and n.kids[0].tag == "td"):
                print(" | ".join(txt(k) for k in n.kids))
elif q == "h3":
    print("\n".join(n.text for n in root.all() if n.tag == "h3"))
elif q == "h2":
    print("\n".join(n.text for n in root.all() if n.tag == "h2"))
elif q == "figures":
    print(sum(1 for n in root.all() if n.tag == "figure"), sum(1 for n in root.all() if n.tag == "svg"))
EOF

# drawn JSON: the boxes and labels the page should draw for analyze --json's
# report, as "figure:" prints them (sizes as the page writes them).
drawn() {
    python3 - "$1" <<'EOF'
import json, sys
def size(n):
    u = 0
    while n >= 1024 and u < 4:
        n, u = n / 1024, u + 1
    return ("%.0f %s" if u == 0 or n >= 10 else "%.1f %s") % (n, ["B", "KB", "MB", "GB", "TB"][u])
r = json.load(open(sys.argv[1]))
for c in sorted(r["collections"], key=lambda c: c["ns"]):
    print(("box %s | {:,} doc" + ("" if c["documents"] == 1 else "s") + " · %s · avg %s · max %s").format(c["documents"]) %
          (c["ns"], size(c["bytes"]), size(c["avgSize"]), size(c["maxSize"])))
for x in sorted(r["relationships"], key=lambda x: (x["from"], x["field"])):
    print("label rel: %s.%s | %s%s / %s%s" % (x["from"], x["field"], x["class"],
          " (many-to-many)" if x["manyToMany"] else "", x["level"],
          "" if x["indexed"] else " / no index on %s.%s" % (x["indexNs"], x["indexField"])))
for x in sorted(r["relationships"], key=lambda x: (x["from"], x["field"])):
    print("arrow rel: %s.%s->%s" % (x["from"], x["field"], x["to"]))
for x in sorted(r["relationships"], key=lambda x: (x["from"], x["field"])):
    print("arrow %s:e->rel: %s.%s" % (x["from"], x["from"], x["field"]))
EOF
}

if ! "$REMODEL" analyze "$S" -q --report "$T/probe.html" >/dev/null 2>"$T/err"; then
    fail "this build draws (Graphviz's libgvc)" "$(cat "$T/err") (make deps; make)"
    exit 0
fi
if [ -z "$CHROMIUM" ]; then
    fail "chromium installed" "no chromium on PATH (make deps installs it)"
    exit 0
fi

# ---- analyze --report on the sample ----
run_rm analyze "$S" -q --report "$T/sample.html"
expect_eq "sample: analyze --report exits 0, nothing on stderr" "$rc $(cat "$T/err")" "0 "
expect_message_out() { if grep -qF -- "$2" "$T/out"; then pass "$1"; else fail "$1" "missing [$2] in $(head -c 400 "$T/out")"; fi; }
expect_message_out "sample: the text report is still printed" \
    "crm.tasks.owner -> crm.people._id: parent reference from the many side, one-to-many"
browse "$T/sample.html" sample
"$REMODEL" analyze "$S" -q --json >"$T/sample.json"
expect_eq "sample: the design, drawn: a box per collection with its numbers, a labelled arrow per relationship" \
    "$(dom sample figure:diagram | sort)" "$(drawn "$T/sample.json" | sort)"
expect_eq "sample: the five relationships of the generator, drawn" \
    "$(dom sample figure:diagram | grep -c '^label rel: ') $(dom sample figure:diagram | grep -c '^arrow ')" "5 10"
# A box's fields, nested ones under their parent, arrays marked, types and presence.
expect_eq "sample: crm.people's box: its fields, types, arrays and presence" \
    "$(dom sample box:diagram:crm.people | tr '\n' '|')" \
"crm.people|98 docs · 28 KB · avg 293 B · max 399 B|_id|objectId|name|string|ssn|string|birthdate|date|email|string|(in 87%)|phone|string 89% · null 11%|addresses[ ]|array, p50 2, max 3|.|street|string|(in 87%)|.|city|string|(in 87%)|.|cc|string|(in 87%)|.|zip|string|(in 47%)|active|bool|"
expect_eq "sample: nothing outside the file, no script" "$(dom sample outside)" ""
expect_eq "sample: the sections" "$(dom sample h2)" \
"The design
The recommended plan
Collections
Checks
Every recommendation"
# The after: iot.readings bucketed into a new collection of 40 buckets.
expect_eq "sample: the plan's after, per namespace (the new buckets)" "$(dom sample row:iot.readings_buckets)" \
    "iot.readings_buckets new | – | 40 | – | 121 KB | 4.8 KB | 0.03% | metaPositions 1 / 1, measurements 43 / 62"
expect_eq "sample: the plan's after, per namespace (comments embedded whole: one-to-many within 200)" "$(dom sample row:blog.posts)" \
    "blog.posts | 50 | 50 | 45 KB | 149 KB | 16 KB | 0.10% | tags 3 / 4, comments 3 / 73"
# Two figures a step (before, after), besides the design and the design after.
expect_eq "sample: the design, the design after, each of the 6 steps before and after" "$(dom sample figures)" "14 14"
if head -c 8 "$OUT/sample.png" | od -An -c | grep -q 'P   N   G'; then pass "sample: a screenshot ($OUT/sample.png)"
else fail "sample: a screenshot" "$OUT/sample.png is no PNG"; fi

# --ns: the plan runs over the selection only; the after holds nothing else.
run_rm analyze "$S" --ns 'crm.*' -q --report "$T/crm.html"
expect_eq "analyze --ns 'crm.*' --report: exit 0" "$rc" 0
browse "$T/crm.html" crm
expect_eq "analyze --ns 'crm.*' --report: before and after, the two crm collections only" \
    "$(dom crm namespaces)" "crm.people
crm.tasks"

# ---- analyze --report on the Atlas sample ----
run_rm analyze "$ATLAS" -q --report "$T/atlas.html"
expect_eq "atlas: analyze --report exits 0, nothing on stderr" "$rc $(cat "$T/err")" "0 "
browse "$T/atlas.html" atlas
"$REMODEL" analyze "$ATLAS" -q --json >"$T/atlas.json"
expect_eq "atlas: seven boxes, customers.accounts drawn with its missing index in words" \
    "$(dom atlas figure:diagram | sort)" "$(drawn "$T/atlas.json" | sort)"
expect_eq "atlas: the label of customers.accounts" "$(dom atlas figure:diagram | grep '^label')" \
    "label rel: sample_analytics.customers.accounts | one-to-few (many-to-many) / confident / no index on sample_analytics.accounts.account_id"
expect_eq "atlas: nothing outside the file, no script" "$(dom atlas outside)" ""

# ---- a candidate rejected on the evidence: listed, not drawn ----
python3 - >"$T/rej.json" <<'EOF'
import json, random
random.seed(3)
cust = [{"_id": i, "name": "c%d" % i} for i in range(1, 41)]
orders = [{"_id": {"$oid": "%024x" % (1000 + i)}, "customerId": random.randint(1, 40),
           "qty": random.randint(1, 9)} for i in range(300)]
print(json.dumps({"shop.customers": cust, "shop.orders": orders}))
EOF
python3 "$ROOT/tests/transforms/mkdump.py" "$T/rej" "@$T/rej.json"
"$REMODEL" analyze "$T/rej" -q --json >"$T/rej.analysis.json"
expect_eq "rejected: the analysis rejects orders.qty (small integers among the ids)" \
    "$(python3 -c 'import json,sys; print(" ".join(x["field"] for x in json.load(open(sys.argv[1]))["rejected"]))' "$T/rej.analysis.json")" "qty"
run_rm analyze "$T/rej" -q --report "$T/rej.html"
browse "$T/rej.html" rejected
expect_eq "rejected: drawn, only the confident relationship" "$(dom rejected figure:diagram | grep -v '^box')" \
"label rel: shop.orders.customerId | one-to-many / confident / no index on shop.orders.customerId
arrow rel: shop.orders.customerId->shop.customers
arrow shop.orders:e->rel: shop.orders.customerId"
expect_eq "rejected: listed under the rejected candidates" "$(dom rejected rejected)" \
    "shop.orders.qty → shop.customers._id"

# ---- a relational import's own kinds (issue 51), as --json carries them ----
# The shop of tests/cli/test_analyze_relational.sh: each kind its own
# section, in the text report's order, every entry's what and why as the
# JSON has them, the fields typed wrong a row each with their counts.
python3 "$ROOT/tests/transforms/relational_shop.py" "$T/shop" >/dev/null
"$REMODEL" analyze "$T/shop" -q --json >"$T/shop.json"
run_rm analyze "$T/shop" -q --report "$T/shop.html"
expect_eq "shop: analyze --report exits 0, nothing on stderr" "$rc $(cat "$T/err")" "0 "
browse "$T/shop.html" shop
# kind KEY: the entries of --json's KEY as its section should show them.
kind() {
    python3 - "$T/shop.json" "$1" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1]))[sys.argv[2]]:
    if sys.argv[2] == "types":
        print("%s.%s | %s | {:,} | {:,}".format(e["matching"], e["of"]) % (e["ns"], e["field"], e["what"]))
    else:
        print("%s | %s" % (e["what"], e["why"]))
EOF
}
expect_eq "shop: the kinds' sections, after the relationships, in the text report's order" \
    "$(dom shop h3 | sed -n '/^Relationships$/,/^Types held wrong$/p')" \
"Relationships
Rejected candidates (not drawn)
Ownership and lookups
Join collections
Hierarchies
Ties between targets (not acted on)
Same values, not references (not acted on)
Types held wrong"
expect_eq "shop: ownership: every entry of ownership[], its what and why" \
    "$(dom shop section:ownership)" "$(kind ownership)"
expect_eq "shop: ownership: the lines owned by the orders, the items only referenced" \
    "$(dom shop section:ownership | sed -n 1p | grep -o "^.*(its name is the owner's: p99 14 children per parent")" \
    "shop.orderLines owned by shop.orders (orderId) | shop.orderLines is owned by shop.orders (its name is the owner's: p99 14 children per parent"
expect_eq "shop: ownership: the three lookups" "$(dom shop section:ownership | grep -c 'is a lookup |')" 3
expect_eq "shop: join collections: every entry of joins[]" "$(dom shop section:joins)" "$(kind joins)"
expect_eq "shop: join collections: the playlists' items, a many-to-many, the counts each side" \
    "$(dom shop section:joins)" \
    "shop.playlistItems joins shop.playlists and shop.items: many-to-many | its documents hold 2 references and at most 3 other fields; per shop.playlists: p50 17, p99 23, max 23; per shop.items: p50 1, p99 3, max 4"
expect_eq "shop: hierarchies: every entry of hierarchies[]" "$(dom shop section:hierarchies)" "$(kind hierarchies)"
expect_eq "shop: hierarchies: the managers' tree, its depth and fan-out" "$(dom shop section:hierarchies)" \
    "shop.employees.reportsTo -> shop.employees._id: a hierarchy | depth 2, 1 root(s), 0 in circles; fan-out (children per parent) p50 0, p99 3, max 3, 5 leaves"
expect_eq "shop: ties: every entry of ties[]" "$(dom shop section:ties)" "$(kind ties)"
expect_eq "shop: ties: supportRepId, and the --hints line that settles it, its quotes as text" \
    "$(dom shop section:ties | cut -d'|' -f1; dom shop section:ties | grep -o -- '--hints {"references": {"shop.customers.supportRepId": "[^"]*"}}')" \
    'shop.customers.supportRepId -> shop.categories._id or shop.employees._id, shop.mediaTypes._id, shop.playlists._id 
--hints {"references": {"shop.customers.supportRepId": "shop.categories._id"}}'
expect_eq "shop: same values: every entry of sameValues[]" "$(dom shop section:same-values)" "$(kind sameValues)"
expect_eq "shop: same values: the billing address, not a reference" \
    "$(dom shop section:same-values | cut -d'|' -f1)" "shop.orders.billingAddress = shop.customers.address "
expect_eq "shop: types held wrong: every entry of types[], with its counts" "$(dom shop section:types)" "$(kind types)"
expect_eq "shop: types held wrong: the six fields" "$(dom shop section:types)" \
"shop.customers.since | dates held as strings | 60 | 60
shop.customers.vip | yes/no flags held as strings | 60 | 60
shop.employees.hired | dates held as strings | 8 | 8
shop.employees.active | booleans held as 0/1 | 8 | 8
shop.orders.orderedAt | dates held as strings | 400 | 400
shop.orders.total | decimal numbers held as strings | 400 | 400"
expect_eq "shop: nothing outside the file, no script" "$(dom shop outside)" ""
# The sample has none of these kinds: no heading without its list.
expect_eq "sample: no kind's heading where analyze found none" \
    "$(dom sample h3 | grep -c -E '^(Ownership|Join|Hierarchies|Ties|Same values|Types held)')" 0
# A dump's names in a kind's section are text, never markup. Fields no
# path spells ("$when", "", "a.b", "$bit") are never typed wrong, whatever
# their values: no "$f" could convert them.
python3 - "$T/oddtypes.json" <<'EOF'
import json, sys
json.dump({"db.t<i>&": [{"_id": i, "<when>": "2007-01-%02dT00:00:00Z" % (i % 28 + 1),
                         "$when": "2008-02-%02d" % (i % 28 + 1), "": "Y" if i % 2 else "N",
                         "a.b": "2009-03-%02d" % (i % 28 + 1), "$bit": i % 2} for i in range(20)]},
          open(sys.argv[1], "w"))
EOF
python3 "$ROOT/tests/transforms/mkdump.py" "$T/oddtypes" "@$T/oddtypes.json"
"$REMODEL" analyze "$T/oddtypes" -q --json >"$T/oddtypes.analysis.json"
expect_eq "pathless fields: not in types[], the field a path spells is" \
    "$(python3 -c 'import json, sys; print([t["field"] for t in json.load(open(sys.argv[1]))["types"]])' "$T/oddtypes.analysis.json")" \
    "['<when>']"
run_rm analyze "$T/oddtypes" -q --report "$T/oddtypes.html"
browse "$T/oddtypes.html" oddtypes
expect_eq "odd names: a field typed wrong, its names shown as text" "$(dom oddtypes section:types)" \
    "db.t<i>&.<when> | dates held as strings | 20 | 20"
expect_eq "odd names: no tag made of them in the page" "$(grep -c '<i>&\|<when>' "$T/oddtypes.html")" 0

# ---- check PLAN --against DUMP --report: the after against a run analyzed by hand ----
P=$ROOT/dumps/plans/embed-tasks.json
run_rm check "$P" --against "$S" -q --report "$T/check.html"
expect_eq "check --report: exit 0, and the plan said valid" "$rc $(cat "$T/out")" \
    "0 $P: 1 step(s), valid against $S"
browse "$T/check.html" check
"$REMODEL" run "$P" --from "$S" --to "$T/after.archive" -q
"$REMODEL" analyze "$T/after.archive" -q --json >"$T/after.json"
# The row as the page should show it, from the JSON of the run's output.
want=$(python3 - "$T/after.json" <<'EOF'
import json, sys
def size(n):
    u = 0
    while n >= 1024 and u < 4:
        n, u = n / 1024, u + 1
    return ("%.0f %s" if u == 0 or n >= 10 else "%.1f %s") % (n, ["B", "KB", "MB", "GB", "TB"][u])
for c in json.load(open(sys.argv[1]))["collections"]:
    if c["ns"] == "crm.people":
        arrays = ", ".join("%s %d / %d" % (f["path"], f["arrayLengths"]["p50"], f["arrayLengths"]["max"])
                           for f in c["fields"] if f.get("arrays"))
        print("%s | %s | %s" % ("{:,}".format(c["documents"]), size(c["maxSize"]), arrays))
EOF
)
expect_eq "check --report: crm.people after (documents, largest, arrays' lengths) as run and analyzed" \
    "$(dom check row:crm.people | awk -F' [|] ' '{print $3 " | " $6 " | " $8}')" "$want"
expect_eq "check --report: crm.tasks embedded, its 16 orphans left" "$(dom check row:crm.tasks | cut -d'|' -f1-3)" \
    "crm.tasks | 1,000 | 16 "
expect_eq "check --report: a box's fields past 14 are counted, not drawn" \
    "$(dom check box:after:crm.people | tail -1)" \
    "… $(python3 -c 'import json,sys; print(len(next(c for c in json.load(open(sys.argv[1]))["collections"] if c["ns"] == "crm.people")["fields"]) - 14)' "$T/after.json") more fields"
expect_eq "check --report: the before, the after, the step's pair" "$(dom check figures)" "4 4"
expect_eq "check --report: the after drawn has crm.people with its tasks" \
    "$(dom check box:after:crm.people | grep -A1 -x 'tasks\[ \]' | tr '\n' ' ')" "tasks[ ] array, p50 8, max 28 "
expect_eq "check --report: nothing outside the file" "$(dom check outside)" ""

# ---- --format dot and mermaid ----
"$REMODEL" analyze "$S" -q --format dot >"$T/sample.dot"
if dot -Tplain "$T/sample.dot" >"$T/plain" 2>"$T/err" && [ ! -s "$T/err" ]; then
    pass "analyze --format dot: Graphviz's dot takes it, silently"
else fail "analyze --format dot: dot takes it" "$(head -5 "$T/err")"; fi
expect_eq "analyze --format dot: 11 boxes, 5 labels, 10 half-arrows" \
    "$(grep -c '^node' "$T/plain") $(grep -c '^edge' "$T/plain")" "16 10"
"$REMODEL" check "$P" --against "$S" -q --format dot >"$T/after.dot"
if dot -Tplain "$T/after.dot" >"$T/plain" 2>"$T/err" && [ ! -s "$T/err" ]; then
    pass "check --format dot: Graphviz's dot takes the design after"
else fail "check --format dot: dot takes it" "$(head -5 "$T/err")"; fi
expect_eq "check --format dot: the design after only (no valid line on stdout)" "$(head -1 "$T/after.dot")" "digraph design {"
"$REMODEL" analyze "$S" -q --format mermaid >"$T/sample.mmd"
expect_eq "analyze --format mermaid: an erDiagram, 11 entities, the 5 relationships" \
    "$(head -1 "$T/sample.mmd"; grep -c '^    c[0-9]*\[".*"\] {$' "$T/sample.mmd"; grep '||--' "$T/sample.mmd")" \
"erDiagram
11
    c2 ||--o{ c1 : \"post_id: one-to-many, confident\"
    c4 ||--o{ c3 : \"parts: one-to-many, confident\"
    c5 ||--o{ c6 : \"owner: one-to-many, confident\"
    c8 ||--o{ c9 : \"host: one-to-squillions, confident\"
    c11 ||--o{ c10 : \"courses: one-to-few, confident\""

# ---- a dump's names are text, never markup ----
mkdir -p "$T/odd/db"
python3 - "$T/odd/db" <<'EOF'
import struct, sys
def doc(i, s):
    e = b"\x10_id\x00" + struct.pack("<i", i)
    v = s.encode() + b"\x00"
    e += b"\x02<b>\"f&\x00" + struct.pack("<i", len(v)) + v
    return struct.pack("<i", len(e) + 5) + e + b"\x00"
open(sys.argv[1] + '/x<img src=y onerror=alert(1)>"&.bson', "wb").write(b"".join(doc(i, "v") for i in range(3)))
# A byte that is not UTF-8 in a name: shown as \xFF, as the text report shows it.
open(sys.argv[1].encode() + b'/bad\xff\\.bson', "wb").write(doc(1, "v"))
EOF
run_rm analyze "$T/odd" -q --report "$T/odd.html"
expect_eq "odd names: analyze --report exits 0, nothing on stderr (Graphviz took the names)" "$rc $(cat "$T/err")" "0 "
browse "$T/odd.html" odd
expect_eq "odd names: the box is named by the text, the field too" \
    "$(dom odd figure:diagram; dom odd 'box:diagram:db.x<img src=y onerror=alert(1)>"&' | sed -n 5p)" \
    "box db.bad\\xFF\\ | 1 doc · 28 B · avg 28 B · max 28 B
box db.x<img src=y onerror=alert(1)>\"& | 3 docs · 84 B · avg 28 B · max 28 B
<b>\"f&"
expect_eq "odd names: no script, nothing outside" "$(dom odd outside)" ""

# ---- names no path spells, names Graphviz and Mermaid would misread ----
# (issue 50, items 4 and 6) A top-level "owner.id" is not owner's id: no
# relationship, no step on it, a pathlessField check; the plan and the
# page are written. Graphviz expands \N and \G in labels and refuses
# U+FFFE: every field in the drawn box, as it is named. Mermaid's grammar
# wants attribute names that start with a letter or _ and entity names
# without %.
python3 - "$T/dotted.json" <<'PY'
import json, sys
oid = lambda i: {"$oid": "65%022x" % i}
json.dump({"crm.people": [{"_id": oid(i), "name": "p%d" % i} for i in range(1, 101)],
           "crm.tasks": [{"_id": i, "owner.id": oid(i * 7 % 100 + 1), "": "x", "$weird": 1,
                          "title": "t%d" % i} for i in range(1, 1001)],
           "db.w%25x\\N": [{"_id": i, "a\\Gb": i, "n\\N": 1, "u\ufffe": 2, "v\uffff": 3,
                            "2fa": True, "-x": 5, "ok": 6} for i in range(3)]},
          open(sys.argv[1], "w"))
PY
python3 "$ROOT/tests/transforms/mkdump.py" "$T/dotted" "@$T/dotted.json"
run_rm analyze "$T/dotted" -q --json --plan-out "$T/dotted-plan.json"
expect_eq "a field named owner.id: no relationship on it, no plan (nothing to do: exit 4), three pathlessField checks" \
    "$rc $(python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
print(len(r["relationships"]), "none" if not os.path.exists(sys.argv[2]) else "written",
      sorted(c["field"] for c in r["checks"] if c["check"] == "pathlessField"),
      [f["path"] for c in r["collections"] for f in c["fields"] if f.get("pathless")][:3])' "$T/out" "$T/dotted-plan.json")" \
    "4 0 none ['[\"\"]', '[\"\$weird\"]', '[\"owner.id\"]'] ['[\"owner.id\"]', '[\"\"]', '[\"\$weird\"]']"
run_rm analyze "$T/dotted" -q --report "$T/dotted.html"
expect_eq "a field named owner.id: --report writes the page" "$rc $([ -s "$T/dotted.html" ] && echo written)" "0 written"
"$REMODEL" analyze "$T/dotted" -q --format dot >"$T/dotted.dot"
if command -v dot >/dev/null; then
    dot -Tsvg "$T/dotted.dot" >"$T/dotted.svg" 2>"$T/err"
    expect_eq "odd field names: dot draws them, silently" "$?:$(cat "$T/err")" "0:"
    expect_eq "odd field names: every field in its box, named as it is (no \\N or \\G expanded)" \
        "$(python3 -c '
import html, re, sys
t = [html.unescape(x) for x in re.findall(r"<text[^>]*>([^<]*)</text>", open(sys.argv[1]).read())]
want = ["a\\Gb", "n\\N", "u\\uFFFE", "v\\uFFFF", "2fa", "-x", "ok", "[\"owner.id\"]", "[\"\"]", "db.w%x\\N"]
print([w for w in want if w not in t], "design" in " ".join(t))' "$T/dotted.svg")" "[] False"
fi
"$REMODEL" analyze "$T/dotted" -q --format mermaid >"$T/dotted.mmd"
# The erDiagram grammar's tokens (mermaid's erDiagram.jison): an entity's
# shown name ENTITY_NAME "[^"%\r\n\v\b\\]+", an attribute's type and name
# ATTRIBUTE_WORD, a comment "[^"]*".
expect_eq "odd field names: the Mermaid text keeps the erDiagram grammar's tokens" "$(python3 -c '
import re, sys
word = r"[*A-Za-z_\u00C0-\uFFFF][A-Za-z0-9\-_\[\]().,\u00C0-\uFFFF*]*"
bad = []
for line in open(sys.argv[1], encoding="utf-8").read().splitlines()[1:]:
    s = line.strip()
    if s == "}" or re.fullmatch(r"c\d+ (\|\||\}o|o\{|o\|)--(o\{|o\||\|\||\}o) c\d+ : \"[^\"]*\"", s):
        continue
    if re.fullmatch(r"c\d+\[\"[^\"%\r\n\v\b\\\\]+\"\] \{", s):
        continue
    if re.fullmatch("(%s) (%s) \"[^\"]*\"" % (word, word), s):
        continue
    bad.append(s)
print(bad)' "$T/dotted.mmd")" "[]"

# ---- errors ----
run_rm check "$P" --report "$T/x.html"
expect_eq "check --report without --against: refused, exit 2" "$rc" 2
expect_message "check --report without --against: says why" "--report needs --against SRC"
run_rm analyze "$S" --json --format dot
expect_eq "analyze --json --format dot: refused, exit 2" "$rc" 2
expect_message "analyze --json --format dot: says why" "--json and --format dot: one or the other"
run_rm analyze "$S" --format svg
expect_eq "analyze --format svg: refused, exit 2" "$rc" 2
expect_message "analyze --format svg: the words it takes" "--format: expected dot or mermaid, got \"svg\""
run_rm analyze "$S" -q --report "$T/no/such/dir/x.html"
expect_eq "analyze --report into a missing directory: exit 1" "$rc" 1
expect_message "analyze --report into a missing directory: says so" "$T/no/such/dir/x.html: cannot write the report"
expect_eq "analyze --report into a missing directory: nothing left" "$(ls "$T" | grep -c '\.tmp-')" 0
run_rm check "$P" --against - --format dot <"$ROOT/dumps/sample.archive.gz"
expect_eq "check --against - --format dot: refused, exit 2 (the plan's run reads the source again)" "$rc" 2
expect_message "check --against - --format dot: says why" "--format reads the source again, to run the plan: not from standard input"
# Not a file (a pipe, /dev/stdout): written to, not renamed over.
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
run_rm analyze "$S" -q --report "$T/fifo"
wait
expect_eq "analyze --report into a pipe: exit 0, the page through it, the pipe still one" \
    "$rc $(tail -1 "$T/from-fifo") $(stat -c %F "$T/fifo")" "0 </html> fifo"
exit 0
