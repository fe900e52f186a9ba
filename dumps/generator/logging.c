/*
 * logging.c: database "logging", the event-logging system of "6 Rules of
 * Thumb" (hosts and log messages, one-to-squillions with a parent reference).
 *
 *   hosts  {_id, name, ipaddr, os, datacenter, ram_bytes (int64),
 *           decommissioned?}
 *   logmsg {_id, time, message, host, severity, pid?}
 *
 * Message volume per host follows Zipf's law (weight 1/rank): the first host
 * logs about a quarter of all messages at scale 1, most hosts log a little.
 * Messages are in time order, as a collector would insert them.
 */
#include "gen.h"

#define HOSTS_PER_SCALE 20
#define LOGMSG_PER_SCALE 1200

#define HOSTS_FROM INT64_C (1356998400)   /* 2013-01-01 */
#define HOSTS_SPAN INT64_C (31536000)     /* one year */
#define LOGMSG_FROM INT64_C (1395878400)  /* 2014-03-27 */
#define LOGMSG_SPAN_MS INT64_C (172800000) /* two days, at every scale */

static int64_t
host_secs (uint64_t i, uint64_t n)
{
    return HOSTS_FROM + (int64_t) (i * (uint64_t) HOSTS_SPAN / n);
}

static bool
write_hosts (gen_ctx_t *ctx, uint64_t n, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"ipaddr"}, {1}, true}};
    const uint64_t n_names = gen_list_host_names.n;
    char text_s[96];
    gen_buf_t text;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok = gen_coll_open (&coll, ctx, "logging", "hosts", error);

    gen_buf_init (&text, text_s, sizeof text_s);
    for (uint64_t i = 0; i < n && ok; i++) {
        bson_t *doc = gen_coll_doc (&coll, i, host_secs (i, n));

        /* goofy.example.com, then goofy2.example.com when names run out. */
        gen_buf_reset (&text);
        gen_buf_put (&text, gen_list_host_names.items[i % n_names]);
        if (i >= n_names) {
            gen_buf_printf (&text, "%u", (unsigned) (i / n_names + 1));
        }
        gen_buf_put (&text, ".example.com");
        gen_append_buf (doc, "name", &text);

        /* Unique addresses in 10.0.0.0/8, never .0 or .255. */
        gen_buf_reset (&text);
        gen_buf_printf (&text, "10.%u.%u.%u", (unsigned) (i / (254 * 256) % 256),
                        (unsigned) (i / 254 % 256), (unsigned) (i % 254 + 1));
        gen_append_buf (doc, "ipaddr", &text);

        gen_append_utf8 (doc, "os", gen_list_pick (&gen_list_os, rng));
        gen_append_utf8 (doc, "datacenter", gen_list_pick (&gen_list_datacenters, rng));
        /* 4 GiB to 512 GiB: does not fit an int32, as in serverStatus output. */
        BSON_APPEND_INT64 (doc, "ram_bytes", INT64_C (4) << (30 + gen_rng_below (rng, 8)));
        if (gen_rng_percent (rng, 5)) {
            BSON_APPEND_BOOL (doc, "decommissioned", true);
        }
        ok = gen_coll_write (&coll, error);
    }
    return gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
}

/* One log line and its severity. pid is -1 for kernel messages, which carry
 * no process id. Random numbers are drawn into locals first: the order in
 * which C evaluates function arguments is unspecified, and output must not
 * depend on the compiler. */
static const char *
format_message (gen_buf_t *text, gen_rng_t *rng, int32_t *pid)
{
    const char *daemon = gen_list_pick (&gen_list_daemons, rng);
    const uint32_t kind = gen_rng_below (rng, 16);
    const int32_t a = gen_rng_between (rng, 0, 255);
    const int32_t b = gen_rng_between (rng, 1, 254);
    const int32_t c = gen_rng_between (rng, 300, 65000);

    *pid = gen_rng_between (rng, 300, 65000);
    switch (kind) {
    case 0:
        gen_buf_put (text, "cpu is on fire!");
        *pid = -1;
        return "critical";
    case 1:
    case 2:
        gen_buf_printf (text, "disk /dev/sda%d at %d%% capacity", 1 + a % 4, 80 + b % 20);
        *pid = -1;
        return "warning";
    case 3:
        gen_buf_printf (text, "connection from 192.168.%d.%d refused", a, b);
        return "warning";
    case 4:
        gen_buf_printf (text, "oom-killer: killed process %d (%s)", c, daemon);
        *pid = -1;
        return "error";
    case 5:
        gen_buf_printf (text, "%s: segfault at 0x%04x%04x", daemon, (unsigned) c,
                        (unsigned) (a * b));
        return "error";
    case 6:
    case 7:
        gen_buf_printf (text, "ntpd: clock offset %d ms", a - 128);
        return "info";
    case 8:
    case 9:
    case 10:
        gen_buf_printf (text, "sshd: accepted publickey for deploy from 10.%d.%d.%d", a % 4, b,
                        c % 254 + 1);
        return "info";
    case 11:
        gen_buf_put (text, "kernel: eth0 link up, 10000 Mbps, full duplex");
        *pid = -1;
        return "info";
    default:
        gen_buf_printf (text, "%s: request handled in %d ms", daemon, 1 + c % 2500);
        return "debug";
    }
}

/* Zipf's law: weight 1/rank. */
static uint64_t
host_weight (uint32_t i, uint64_t salt)
{
    return (UINT64_C (1) << 20) / (i + 1);
}

static bool
write_logmsg (gen_ctx_t *ctx, uint64_t n_hosts, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"host", "time"}, {1, -1}, false}};
    const uint64_t n = LOGMSG_PER_SCALE * ctx->scale;
    const int64_t step_ms = LOGMSG_SPAN_MS / (int64_t) n;
    char text_s[160];
    gen_buf_t text;
    gen_picker_t hosts;
    gen_idgen_t host_ids;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    int64_t clock_ms = LOGMSG_FROM * 1000;
    bool ok;

    if (!gen_picker_init (&hosts, (uint32_t) n_hosts, host_weight, 0, error)) {
        return false;
    }

    gen_idgen_init (&host_ids, ctx->seed, "logging.hosts");
    gen_buf_init (&text, text_s, sizeof text_s);
    ok = gen_coll_open (&coll, ctx, "logging", "logmsg", error);
    for (uint64_t i = 0; i < n && ok; i++) {
        const uint32_t host = gen_picker_pick (&hosts, rng);
        const char *severity;
        int32_t pid;
        bson_t *doc;
        bson_oid_t oid;

        clock_ms += (int64_t) gen_rng_below64 (rng, (uint64_t) step_ms * 2 + 1);
        gen_buf_reset (&text);
        severity = format_message (&text, rng, &pid);

        doc = gen_coll_doc (&coll, i, clock_ms / 1000);
        BSON_APPEND_DATE_TIME (doc, "time", clock_ms);
        gen_append_buf (doc, "message", &text);
        gen_idgen_oid (&host_ids, host, host_secs (host, n_hosts), &oid);
        BSON_APPEND_OID (doc, "host", &oid);
        gen_append_utf8 (doc, "severity", severity);
        if (pid >= 0) {
            BSON_APPEND_INT32 (doc, "pid", pid);
        }
        ok = gen_coll_write (&coll, error);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    gen_picker_destroy (&hosts);
    return ok;
}

bool
gen_logging (gen_ctx_t *ctx, bson_error_t *error)
{
    const uint64_t n_hosts = HOSTS_PER_SCALE * ctx->scale;

    return write_hosts (ctx, n_hosts, error) && write_logmsg (ctx, n_hosts, error);
}
