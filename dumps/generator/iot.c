/*
 * iot.c: database "iot", the naive one-document-per-reading layout that the
 * bucket pattern of "Embed vs Reference" starts from.
 *
 *   readings {_id, sensor_id, ts, temperature (int32 | double | null),
 *             humidity? (double | null), battery?}
 *
 * Sensors report about once a minute with jitter and the odd dropout, and
 * all sensors write into one stream in time order, so readings of different
 * sensors interleave as they would on a real server. One sensor model in four
 * reports whole degrees as int32 and has no humidity probe; the others report
 * doubles. A bucketizing transform therefore meets mixed numeric types,
 * missing fields and nulls.
 */
#include "gen.h"

#include <errno.h>
#include <stdio.h>

#define SENSORS_PER_SCALE 8
#define READINGS_PER_SCALE 1600

#define READINGS_FROM INT64_C (1713139200) /* 2024-04-15 */
#define PERIOD_MS 60000

typedef struct {
    int64_t next_ms; /* time of the sensor's next reading */
    uint32_t id;
    int32_t temp;     /* tenths of a degree Celsius */
    int32_t base;     /* the temperature the walk stays near */
    int32_t humidity; /* tenths of a percent */
    int32_t battery;  /* percent */
} sensor_t;

/* Min-heap on (next_ms, id): the id breaks ties so the order never depends
 * on how the heap happens to be arranged. */
static bool
sensor_before (const sensor_t *a, const sensor_t *b)
{
    return a->next_ms < b->next_ms || (a->next_ms == b->next_ms && a->id < b->id);
}

static void
heap_sift_down (sensor_t *heap, size_t n, size_t i)
{
    for (;;) {
        const size_t left = 2 * i + 1;
        const size_t right = left + 1;
        size_t least = i;
        sensor_t tmp;

        if (left < n && sensor_before (&heap[left], &heap[least])) {
            least = left;
        }
        if (right < n && sensor_before (&heap[right], &heap[least])) {
            least = right;
        }
        if (least == i) {
            return;
        }
        tmp = heap[i];
        heap[i] = heap[least];
        heap[least] = tmp;
        i = least;
    }
}

static void
append_reading (bson_t *doc, sensor_t *s, gen_rng_t *rng)
{
    const uint32_t model = s->id % 4;
    char id_s[24];

    /* Random walk around the sensor's base temperature and humidity. */
    s->temp += gen_rng_between (rng, -3, 3);
    if (s->temp > s->base + 50 || s->temp < s->base - 50) {
        s->temp = s->base;
    }
    s->humidity += gen_rng_between (rng, -8, 8);
    if (s->humidity < 200 || s->humidity > 900) {
        s->humidity = 550;
    }

    snprintf (id_s, sizeof id_s, "s%u", (unsigned) (s->id + 1));
    gen_append_utf8 (doc, "sensor_id", id_s);
    BSON_APPEND_DATE_TIME (doc, "ts", s->next_ms);

    if (gen_rng_below (rng, 200) == 0) {
        BSON_APPEND_NULL (doc, "temperature"); /* a failed read */
    } else if (model == 0) {
        BSON_APPEND_INT32 (doc, "temperature", (s->temp + 5) / 10);
    } else {
        BSON_APPEND_DOUBLE (doc, "temperature", (double) s->temp / 10.0);
    }

    if (model == 3 && gen_rng_percent (rng, 5)) {
        BSON_APPEND_NULL (doc, "humidity");
    } else if (model != 0) {
        BSON_APPEND_DOUBLE (doc, "humidity", (double) s->humidity / 10.0);
    }

    /* The battery level rides along on about one reading in ten. */
    if (gen_rng_percent (rng, 10)) {
        if (s->battery > 5 && gen_rng_percent (rng, 30)) {
            s->battery--;
        }
        BSON_APPEND_INT32 (doc, "battery", s->battery);
    }
}

bool
gen_iot (gen_ctx_t *ctx, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"sensor_id", "ts"}, {1, 1}, false}};
    const size_t n_sensors = (size_t) (SENSORS_PER_SCALE * ctx->scale);
    const uint64_t n = READINGS_PER_SCALE * ctx->scale;
    sensor_t *heap;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok;

    heap = calloc (n_sensors, sizeof *heap);
    if (!heap) {
        bson_set_error (error, GEN_ERROR_DOMAIN, ENOMEM, "out of memory for %zu sensors",
                        n_sensors);
        return false;
    }
    ok = gen_coll_open (&coll, ctx, "iot", "readings", error);

    /* Start times are staggered over the first minute, then the array is
     * turned into a heap. */
    for (size_t i = 0; i < n_sensors; i++) {
        heap[i].id = (uint32_t) i;
        heap[i].next_ms = READINGS_FROM * 1000 + gen_rng_below (rng, PERIOD_MS);
        heap[i].base = gen_rng_between (rng, 150, 280);
        heap[i].temp = heap[i].base;
        heap[i].humidity = gen_rng_between (rng, 300, 700);
        heap[i].battery = gen_rng_between (rng, 60, 100);
    }
    for (size_t i = n_sensors / 2; i-- > 0;) {
        heap_sift_down (heap, n_sensors, i);
    }

    for (uint64_t i = 0; i < n && ok; i++) {
        sensor_t *s = &heap[0];
        bson_t *doc = gen_coll_doc (&coll, i, s->next_ms / 1000);

        append_reading (doc, s, rng);
        ok = gen_coll_write (&coll, error);

        /* Next report: a minute give or take 15 s; one time in fifty the
         * sensor drops out for 5 to 20 minutes. */
        s->next_ms += PERIOD_MS + gen_rng_between (rng, -15000, 15000);
        if (gen_rng_percent (rng, 2)) {
            s->next_ms += (int64_t) gen_rng_between (rng, 5, 20) * PERIOD_MS;
        }
        heap_sift_down (heap, n_sensors, 0);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    free (heap);
    return ok;
}
