/* --to-uri without a server: which connection each collection is routed
 * to (online_pair_client, conn/online.h). The pair's record
 * (state/online_pair_record.c) is tested against the real servers, in
 * tests/cli/test_online_to_uri.sh: no fake server stands in for one. */
#include "online_state.h"
#include "test.h"

static void
test_routing (void)
{
    online_opts_t o = {.state_db = "remodel"};
    online_pair_t pair;
    online_t on;
    online_run_t on_run;
    mongoc_client_t *dest = (mongoc_client_t *) (uintptr_t) 0x10;
    mongoc_client_t *src = (mongoc_client_t *) (uintptr_t) 0x20;

    online_init (&on, &on_run);
    memset (&pair, 0, sizeof pair);
    on.own_run->o = &o;
    on.client = dest;
    on.own_run->pair = &pair;
    on.source = src;
    /* a plan's namespace under its own name: the source's */
    T_CHECK (online_pair_client (&on, "shop", "parents") == src);
    /* a result, side by side, and the state database: the destination's */
    T_CHECK (online_pair_client (&on, "shop", "parents_remodel_emb_0123456789ab_1") == dest);
    T_CHECK (online_pair_client (&on, "remodel", "plans") == dest);
    /* a worker's (made from zero over the same run): its own two
     * connections, never the command's (a client serves one thread) */
    {
        online_t w = {.run = on.run};
        w.client = (mongoc_client_t *) (uintptr_t) 0x30;
        w.source = (mongoc_client_t *) (uintptr_t) 0x40;
        T_CHECK (online_pair_client (&w, "shop", "parents") == w.source);
        T_CHECK (online_pair_client (&w, "remodel", "partitions") == w.client);
    }
    /* once finalize named the results: every collection */
    pair.all_dest = true;
    T_CHECK (online_pair_client (&on, "shop", "parents") == dest);
}

int
main (void)
{
    T_RUN (test_routing);
    return t_done ();
}
