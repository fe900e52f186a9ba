/* The online companion's durations in messages (online_dur): below a
 * second in milliseconds, where one decimal of seconds would say "0.0 s"
 * for --max-window 20ms; from a second on in seconds, as before. */
#include "online.h"
#include "test.h"

static void
test_dur (void)
{
    char b[ONLINE_DUR_LEN];
    T_CHECK_STR (online_dur (b, 20), "20 ms");
    T_CHECK_STR (online_dur (b, 0), "0 ms");
    T_CHECK_STR (online_dur (b, 1), "1 ms");
    T_CHECK_STR (online_dur (b, 999), "999 ms");
    T_CHECK_STR (online_dur (b, 1000), "1.0 s");
    T_CHECK_STR (online_dur (b, 1550), "1.6 s");
    T_CHECK_STR (online_dur (b, 600000), "600.0 s");
    T_CHECK_STR (online_dur (b, -5), "-5 ms");
    /* two in one call: each its own buffer */
    {
        char line[80];
        snprintf (line, sizeof line, "%s of %s", ONLINE_DUR (20), ONLINE_DUR (3000));
        T_CHECK_STR (line, "20 ms of 3.0 s");
    }
}

int
main (void)
{
    T_RUN (test_dur);
    return t_done ();
}
