# md2man.awk: the restricted Markdown of docs/*.md to a roff man page.
#   awk -f scripts/md2man.awk docs/remodel.1.md > remodel.1
# POSIX awk only (mawk, gawk, busybox): the build needs neither pandoc nor
# Python. What it reads (a subset of pandoc's Markdown, so pandoc could
# still read the same files):
#   % NAME(SECTION) SOURCE | MANUAL     first line: the page's .TH
#   # HEADING, ## HEADING               .SH, .SS
#   paragraphs (blank-line separated)   .PP
#   TERM  then  :   DEFINITION          .TP (an option list); further lines
#                                       of the definition indented; a blank
#                                       line then an indented line: .IP
#   - ITEM                              .IP \(bu (continuation indented)
#   ``` fences, or 4-space-indented     .nf/.fi, kept as written
#     blocks outside a definition
#   **bold**, `code`: \fB..\fR; *italic*: \fI..\fR; \X: the character X
#     (within one line: a span left open at a line's end is an error)
# Anything else is text. Errors (a line this subset cannot place) stop
# the conversion with a message naming the line, so a page never loses
# text silently.

BEGIN {
    mode = "top"      # top, para, def (inside a .TP item), item (a list item), code
    npara = 0         # lines of the paragraph being gathered
    after_heading = 1 # no .PP right after .SH/.SS (it would add nothing)
    fence = 0         # the code block is fenced (else: indented)
}

# roff's escapes for text that is to print as it is: a backslash is \e,
# and every hyphen \- (a hyphen-minus, so that an option copied from the
# page is typed as written; "-" may render as a Unicode hyphen).
function lit(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}

# Plain text: backslashes escaped; a hyphen that starts a word (an option,
# "-q", "-") made \-, others (one-to-many) left as hyphens, which may break.
function plain(s,    out, c, prev, i) {
    out = ""; prev = " "
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") c = "\\e"
        else if (c == "-" && (prev == "-" || index(" ([|/=\"'", prev) > 0)) c = "\\-"
        out = out c
        prev = substr(s, i, 1)
    }
    return out
}

# The inline markup of one line. Code spans first, so that nothing inside
# them is markup; \% keeps groff from hyphenating a name or an option.
function inline(s,    out, i, c, j, bold, ital, text) {
    out = ""; bold = 0; ital = 0; text = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\" && i < length(s)) {            # \*, \`, \\: the character itself
            text = text substr(s, ++i, 1)
        } else if (c == "`") {
            j = index(substr(s, i + 1), "`")
            if (!j) fail("unclosed ` span")
            out = out (bold ? lit(text) : plain(text)) "\\fB\\%" lit(substr(s, i + 1, j - 1)) (bold ? "" : ital ? "\\fI" : "\\fR")
            text = ""; i += j
        } else if (substr(s, i, 2) == "**") {
            out = out (bold ? lit(text) : plain(text)); text = ""
            bold = !bold; i++
            out = out (bold ? "\\fB\\%" : ital ? "\\fI" : "\\fR")
        } else if (c == "*") {
            out = out plain(text); text = ""
            ital = !ital
            out = out (ital ? "\\fI" : bold ? "\\fB" : "\\fR")
        } else {
            text = text c
        }
    }
    if (bold || ital) fail("unclosed ** or * (a literal star is \\*)")
    out = out plain(text)
    # A line starting with . or ' would be a request: \& makes it text.
    if (out ~ /^[.']/) out = "\\&" out
    return out
}

# A macro's argument: quoted, its quotes as \(dq.
function arg(s) {
    gsub(/\\/, "\\e", s); gsub(/"/, "\\(dq", s); gsub(/-/, "\\-", s)
    return "\"" s "\""
}

function fail(msg) {
    printf "md2man.awk: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    failed = 1
    exit 1
}

# The gathered paragraph, printed (the last line kept back when it is a
# definition's term: see the ":" rule).
function flush(keep_last,    i, n) {
    n = npara - (keep_last ? 1 : 0)
    if (n > 0) {
        if (!after_heading) print ".PP"
        for (i = 1; i <= n; i++) {
            # Two trailing spaces: a line break (a synopsis's lines).
            br = para[i] ~ /  $/
            line = para[i]; sub(/ +$/, "", line)
            print inline(line)
            if (br && i < n) print ".br"
        }
        after_heading = 0
    }
    if (keep_last) { para[1] = para[npara]; npara = 1 } else npara = 0
}

function code_start(is_fence) {
    fence = is_fence
    # Inside a definition or an item, a bare .RS first takes the margin to
    # its text, so that the block is indented under it, not under the term.
    nested = mode == "def" || mode == "item"
    if (nested) print ".RS"
    if (nested || !after_heading) print ".PP"
    print ".RS 4"
    print ".nf"
    prev_mode = mode; mode = "code"; after_heading = 0
}

# A line of a code block: as written, but escaped.
function code_line(s) {
    s = lit(s)
    return s ~ /^[.']/ ? "\\&" s : s
}

function code_end() {
    print ".fi"
    print ".RE"
    if (nested) print ".RE"
    mode = prev_mode == "def" || prev_mode == "item" ? prev_mode : "top"
}

FNR == 1 {
    # % NAME(SECTION) SOURCE | MANUAL: no date, so the page is the same
    # whenever it is built.
    if ($0 !~ /^% [^ (]+\([0-9a-z]+\)/) fail("the first line must be: % NAME(SECTION) SOURCE | MANUAL")
    h = substr($0, 3)
    manual = ""
    if (index(h, "|")) { manual = substr(h, index(h, "|") + 1); h = substr(h, 1, index(h, "|") - 1) }
    name = substr(h, 1, index(h, "(") - 1)
    sect = substr(h, index(h, "(") + 1); sect = substr(sect, 1, index(sect, ")") - 1)
    src = substr(h, index(h, ")") + 1)
    gsub(/^ +| +$/, "", src); gsub(/^ +| +$/, "", manual)
    print ".\\\" Generated from " FILENAME " by scripts/md2man.awk: edit that file."
    print ".TH " arg(name) " " arg(sect) " \"\" " arg(src) " " arg(manual)
    next
}

mode == "code" {
    if (fence ? $0 ~ /^ *```/ : $0 !~ /^    / && $0 !~ /^[ \t]*$/) {
        code_end()
        if (fence) next
        # An indented block ends at its first unindented line: that line
        # is handled below.
    } else {
        line = fence ? $0 : substr($0, 5)
        if (mode_indent && substr(line, 1, mode_indent) ~ /^ +$/) line = substr(line, mode_indent + 1)
        print code_line(line)
        next
    }
}

/^[ \t]*$/ {
    flush(0)
    if (mode == "def" || mode == "item") mode = mode "-gap"
    next
}

/^#+ / {
    flush(0)
    level = index($0, " ") - 1
    if (level > 2) fail("only # and ## headings")
    text = substr($0, level + 2)
    print (level == 1 ? ".SH " : ".SS ") arg(text)
    mode = "top"; after_heading = 1
    next
}

/^ *```/ {
    flush(0)
    mode_indent = match($0, /[^ ]/) - 1
    if (mode ~ /-gap$/) mode = substr(mode, 1, length(mode) - 4)
    if (mode_indent == 0 && mode != "top") mode = "top"
    code_start(1)
    next
}

# A definition: the paragraph's last line is its term.
/^:   / {
    if (npara == 0 && mode != "def-gap") fail("a definition (:) with no term above it")
    if (npara == 0) {              # a second definition of the same term
        print ".IP"
    } else {
        flush(1)
        print ".TP"
        print inline(para[1])
        npara = 0
    }
    print inline(substr($0, 5))
    mode = "def"; after_heading = 0
    next
}

/^- / {
    flush(0)
    print ".IP \\(bu 2"
    print inline(substr($0, 3))
    mode = "item"; after_heading = 0
    next
}

# Indented: a definition's or list item's next line, or after a blank
# line its next paragraph; outside them, a code block.
/^ / {
    if (mode == "def" || mode == "item") { sub(/^ +/, ""); print inline($0); next }
    if (mode == "def-gap" || mode == "item-gap") {
        mode = substr(mode, 1, length(mode) - 4)
        print ".IP"
        sub(/^ +/, ""); print inline($0)
        next
    }
    if ($0 ~ /^    / && npara == 0) { mode_indent = 0; code_start(0); print code_line(substr($0, 5)); next }
}

{
    # Unindented text ends a list: .PP takes the margin back.
    if (mode != "top" && mode != "para") { mode = "top"; after_heading = 0 }
    para[++npara] = $0
}

END {
    if (failed) exit 1
    if (mode == "code") fail("unclosed ``` block")
    flush(0)
}
