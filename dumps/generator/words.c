/*
 * words.c: the vocabulary every dataset draws from. Names mix ASCII and
 * non-ASCII UTF-8 on purpose, so tools that pass strings through are tested
 * with multi-byte characters; each name also has an ASCII form for e-mail
 * addresses, as real systems would store them.
 */
#include "gen.h"

#define GEN_LIST(name, array) const gen_list_t name = {array, GEN_COUNT (array)}

static const gen_name_t first_names[] = {
    {"Kate", "kate"},         {"Sammy", "sammy"},       {"José", "jose"},
    {"Zoë", "zoe"},           {"Alice", "alice"},       {"Bob", "bob"},
    {"Carol", "carol"},       {"Dmitri", "dmitri"},     {"Søren", "soren"},
    {"Ngozi", "ngozi"},       {"Łukasz", "lukasz"},     {"Chloé", "chloe"},
    {"Björn", "bjorn"},       {"Ana Sofía", "anasofia"}, {"Óscar", "oscar"},
    {"Priya", "priya"},       {"Wei", "wei"},           {"Aiko", "aiko"},
    {"Mohammed", "mohammed"}, {"Fatima", "fatima"},     {"Liam", "liam"},
    {"Olivia", "olivia"},     {"Noah", "noah"},         {"Emma", "emma"},
    {"Mateo", "mateo"},       {"Isabella", "isabella"}, {"Hiroshi", "hiroshi"},
    {"Ingrid", "ingrid"},     {"Tomás", "tomas"},       {"Renée", "renee"},
    {"Jürgen", "jurgen"},     {"Siobhán", "siobhan"},   {"Amara", "amara"},
    {"Raj", "raj"},           {"Elena", "elena"},       {"Kwame", "kwame"},
    {"Grace", "grace"},       {"Yusuf", "yusuf"},       {"Mei", "mei"},
    {"Lars", "lars"},
};

static const gen_name_t last_names[] = {
    {"Monster", "monster"},   {"Shark", "shark"},       {"García", "garcia"},
    {"Müller", "muller"},     {"Smith", "smith"},       {"Nguyễn", "nguyen"},
    {"Kowalski", "kowalski"}, {"Dvořák", "dvorak"},     {"Ødegaard", "odegaard"},
    {"O'Brien", "obrien"},    {"Okafor", "okafor"},     {"Tanaka", "tanaka"},
    {"Johansson", "johansson"}, {"Patel", "patel"},     {"Rossi", "rossi"},
    {"Dubois", "dubois"},     {"Silva", "silva"},       {"Kim", "kim"},
    {"Chen", "chen"},         {"Ivanova", "ivanova"},   {"Hernández", "hernandez"},
    {"Brown", "brown"},       {"Wilson", "wilson"},     {"Jensen", "jensen"},
    {"Novák", "novak"},       {"Yılmaz", "yilmaz"},     {"Mensah", "mensah"},
    {"Fischer", "fischer"},   {"Lefèvre", "lefevre"},   {"Kapoor", "kapoor"},
    {"Murphy", "murphy"},     {"Schmidt", "schmidt"},   {"Andersen", "andersen"},
    {"Costa", "costa"},       {"Sato", "sato"},         {"Walker", "walker"},
};

static const char *const vocab[] = {
    "the",      "a",        "data",     "schema",    "document", "query",
    "index",    "we",       "it",       "is",        "was",      "will",
    "can",      "should",   "never",    "always",    "often",    "every",
    "some",     "many",     "few",      "each",      "collection", "field",
    "array",    "embed",    "reference", "design",   "team",     "user",
    "report",   "server",   "update",   "read",      "write",    "fast",
    "slow",     "simple",   "complex",  "large",     "small",    "new",
    "old",      "good",     "better",   "worse",     "because",  "when",
    "while",    "after",    "before",   "with",      "without",  "from",
    "into",     "over",     "under",    "and",       "but",      "or",
    "so",       "then",     "this",     "that",      "these",    "those",
    "our",      "their",    "your",     "my",        "one",      "two",
    "three",    "hundred",  "thousand", "times",     "day",      "week",
    "month",    "year",     "morning",  "night",     "coffee",   "meeting",
    "plan",     "budget",   "project",  "release",   "customer", "order",
    "product",  "part",     "price",    "stock",     "sensor",   "reading",
    "log",      "message",  "host",     "disk",      "network",  "latency",
    "cache",    "memory",   "backup",   "restore",   "migration", "test",
    "bug",      "fix",      "feature",  "idea",      "question", "answer",
    "really",   "quite",    "almost",   "probably",  "clearly",  "finally",
    "works",    "breaks",   "grows",    "changes",   "helps",    "matters",
    "think",    "know",     "need",     "want",      "try",      "use",
    "build",    "ship",     "measure",  "learn",     "explain",  "compare",
};

static const char *const streets[] = {
    "Sesame St",      "Avenue Q",      "Main St",        "Tower Ave",
    "Elm St",         "Oak Lane",      "Harbour Rd",     "Königstraße",
    "Rue de Rivoli",  "Calle Mayor",   "Baker St",       "Maple Dr",
    "Station Rd",     "Ringvägen",     "Via Roma",       "Market St",
};

static const char *const cities[] = {
    "Anytown",   "New York", "Seoul",     "Berlin",  "Paris",    "Madrid",
    "London",    "Toronto",  "Stockholm", "Rome",    "Lagos",    "São Paulo",
    "Kraków",    "Zürich",   "Osaka",     "Austin",  "Montréal", "Reykjavík",
};

static const char *const mail_domains[] = {
    "example.com", "example.org", "example.net", "mail.example.com",
};

static const char *const task_verbs[] = {
    "Write",   "Review",  "Call",     "Email",   "Update",  "Prepare",
    "Fix",     "Order",   "Schedule", "Archive", "Draft",   "Approve",
    "Check",   "Plan",    "Clean up", "Migrate", "Test",    "Document",
};

static const char *const task_objects[] = {
    "lesson plan",        "quarterly budget",   "supplier contract",
    "release notes",      "onboarding checklist", "invoice",
    "team offsite",       "backup schedule",    "customer feedback",
    "expense report",     "server inventory",   "meeting minutes",
    "press release",      "security audit",     "style guide",
    "database schema",    "holiday rota",       "grant proposal",
};

static const char *const tags[] = {
    "urgent",  "home",    "work",    "finance", "ops",      "writing",
    "errand",  "review",  "blocked", "someday", "mongodb",  "backend",
    "design",  "travel",  "health",  "school",  "hardware", "meta",
};

static const char *const part_nouns[] = {
    "grommet", "washer",     "hex bolt",  "gasket",   "spring",   "o-ring",
    "cotter pin", "bearing", "bushing",   "rivet",    "flange",   "clip",
    "shim",    "spacer",     "hinge",     "gear",     "sprocket", "valve",
    "nozzle",  "fuse",       "switch",    "cam",      "pulley",   "bracket",
};

static const char *const materials[] = {
    "steel", "brass", "rubber", "nylon", "aluminium", "copper", "ceramic",
};

static const char *const product_adjs[] = {
    "left-handed", "right-handed", "reversible", "self-sealing", "heavy-duty",
    "collapsible", "turbo",        "deluxe",     "compact",      "industrial",
    "portable",    "quantum",      "universal",  "cordless",     "pneumatic",
};

static const char *const product_nouns[] = {
    "smoke shifter",   "sky hook",       "widget",        "gadget",
    "flux capacitor",  "muffler bearing", "blinker fluid pump", "tea maker",
    "lawn mower",      "bicycle pump",   "espresso machine", "drill press",
    "garden hose reel", "ceiling fan",   "snow blower",   "toaster",
};

static const char *const manufacturers[] = {
    "Acme Corp",        "Globex",           "Initech",       "Umbrella Works",
    "Wayne Enterprises", "Stark Industries", "Cyberdyne",    "Soylent GmbH",
    "Müller & Söhne",   "Hooli",
};

static const char *const suppliers[] = {
    "FastParts Ltd", "Bolt Bros", "Nordic Fasteners AB", "Ferretería López",
    "Springfield Supply",
};

static const char *const host_names[] = {
    "goofy",  "pluto",   "donald", "daisy",  "mickey", "minnie", "scrooge",
    "huey",   "dewey",   "louie",  "chip",   "dale",   "gyro",   "launchpad",
    "web",    "db",      "cache",  "queue",  "build",  "mail",
};

static const char *const os[] = {
    "Debian 12", "Ubuntu 22.04", "RHEL 9", "FreeBSD 14", "Alpine 3.19",
};

static const char *const datacenters[] = {
    "fra1", "ams3", "nyc2", "sfo1", "sgp1",
};

static const char *const daemons[] = {
    "sshd", "cron", "nginx", "postgres", "mongod", "systemd", "dockerd",
};

static const char *const title_words[] = {
    "why",  "how",   "notes", "lessons", "thinking", "ten", "understanding",
    "revisiting", "against", "towards", "the", "a", "more", "beyond",
};

GEN_LIST (gen_list_vocab, vocab);
GEN_LIST (gen_list_streets, streets);
GEN_LIST (gen_list_cities, cities);
GEN_LIST (gen_list_mail_domains, mail_domains);
GEN_LIST (gen_list_task_verbs, task_verbs);
GEN_LIST (gen_list_task_objects, task_objects);
GEN_LIST (gen_list_tags, tags);
GEN_LIST (gen_list_part_nouns, part_nouns);
GEN_LIST (gen_list_materials, materials);
GEN_LIST (gen_list_product_adjs, product_adjs);
GEN_LIST (gen_list_product_nouns, product_nouns);
GEN_LIST (gen_list_manufacturers, manufacturers);
GEN_LIST (gen_list_suppliers, suppliers);
GEN_LIST (gen_list_host_names, host_names);
GEN_LIST (gen_list_os, os);
GEN_LIST (gen_list_datacenters, datacenters);
GEN_LIST (gen_list_daemons, daemons);
GEN_LIST (gen_list_title_words, title_words);

const char *
gen_list_pick (const gen_list_t *list, gen_rng_t *rng)
{
    return list->items[gen_rng_below (rng, (uint32_t) list->n)];
}

/* Fills display with "First Last" (UTF-8) and local_part with "first.last",
 * the ASCII form used for e-mail addresses. Either buffer may be NULL. */
void
gen_person_name (gen_rng_t *rng, gen_buf_t *display, gen_buf_t *local_part)
{
    const gen_name_t *first = &first_names[gen_rng_below (rng, GEN_COUNT (first_names))];
    const gen_name_t *last = &last_names[gen_rng_below (rng, GEN_COUNT (last_names))];

    if (display) {
        gen_buf_put (display, first->utf8);
        gen_buf_putc (display, ' ');
        gen_buf_put (display, last->utf8);
    }
    if (local_part) {
        gen_buf_put (local_part, first->ascii);
        gen_buf_putc (local_part, '.');
        gen_buf_put (local_part, last->ascii);
    }
}
