/*
 * The performance-variable registry (base/pvar.h) on its own: counters and
 * sampled variables, scaled doubles, registering a name again (the same
 * definition: nothing changes; another: refused, the first stays),
 * malformed definitions, lookup by name and index, and threads registering
 * while others read.  Exit 0: pass; 1: fail.
 */
#include "base/rail.h"
#include "base/pvar.h"
#include "test/check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static uint64_t sample_twice(const void *arg)
{
    return 2 * *(const uint64_t *)arg;
}

static uint64_t clock_ns;

static uint64_t sample_clock(const void *arg)
{
    (void)arg;
    return clock_ns;
}

static void check_empty(void)
{
    EXPECT(rail_pvar_count() == 0, "a fresh registry has %d variables", rail_pvar_count());
    EXPECT(rail_pvar_at(0) == NULL && rail_pvar_at(-1) == NULL, "at() outside the table");
    EXPECT(rail_pvar_find("test_none") == NULL && rail_pvar_index("test_none") == -1,
           "an unknown name was found");
    EXPECT(rail_pvar_find(NULL) == NULL && rail_pvar_index(NULL) == -1, "a NULL name was found");
}

static uint64_t events, bytes;

static void check_counters(void)
{
    static const rail_pvar_counter_t table[] = {
        {"test_events", "Events of the test", &events},
        {"test_bytes", "Bytes of the test", &bytes},
    };
    events = 5;
    EXPECT(rail_pvar_register_counters(table, 2) == MPI_SUCCESS, "register_counters");
    EXPECT(rail_pvar_count() == 2, "%d variables after two", rail_pvar_count());
    const rail_pvar_t *v = rail_pvar_find("test_events");
    EXPECT(v && rail_pvar_at(0) == v && rail_pvar_index("test_events") == 0, "test_events at 0");
    EXPECT(rail_pvar_index("test_bytes") == 1, "test_bytes at %d", rail_pvar_index("test_bytes"));
    if (!v)
        return;
    EXPECT(v->var_class == MPI_T_PVAR_CLASS_COUNTER && v->type == RAIL_PVAR_UNSIGNED &&
               v->flags == (RAIL_PVAR_CONTINUOUS | RAIL_PVAR_READONLY) && v->level == 4,
           "a counter's class %d, type %d, flags %#x, level %d", v->var_class, v->type, v->flags,
           v->level);
    EXPECT(strcmp(v->desc, "Events of the test") == 0, "desc \"%s\"", v->desc);
    EXPECT(rail_pvar_sample(v) == 5, "sample %llu", (unsigned long long)rail_pvar_sample(v));
    events += 3;
    unsigned long long out = 0;
    rail_pvar_store(v, rail_pvar_sample(v), &out);
    EXPECT(out == 8, "the counter's value follows it: %llu", out);
    uint64_t raw = 0;
    EXPECT(rail_pvar_raw_of(v, &out, &raw) && raw == 8, "raw of an unsigned");
}

static uint64_t twice_of = 21;

static void check_sample(void)
{
    rail_pvar_t def = {.name = "test_twice", .desc = "Twice a number", .level = 7,
                       .var_class = MPI_T_PVAR_CLASS_GENERIC, .flags = RAIL_PVAR_CONTINUOUS,
                       .type = RAIL_PVAR_UNSIGNED, .sample = sample_twice, .arg = &twice_of};
    EXPECT(rail_pvar_register(&def) == MPI_SUCCESS, "register a sampled variable");
    const rail_pvar_t *v = rail_pvar_find("test_twice");
    EXPECT(v && v != &def && v->arg == &twice_of, "the registry keeps a copy, with the arg");
    if (v)
        EXPECT(rail_pvar_sample(v) == 42, "sample %llu", (unsigned long long)rail_pvar_sample(v));
}

static void check_scale(void)
{
    rail_pvar_t def = {.name = "test_seconds", .desc = "Seconds", .level = 1,
                       .var_class = MPI_T_PVAR_CLASS_TIMER, .flags = RAIL_PVAR_ATOMIC,
                       .type = RAIL_PVAR_DOUBLE, .sample = sample_clock, .scale = 1e-9};
    EXPECT(rail_pvar_register(&def) == MPI_SUCCESS, "register a double");
    const rail_pvar_t *v = rail_pvar_find("test_seconds");
    if (!v)
        return;
    clock_ns = 1500000000;
    double d = 0;
    rail_pvar_store(v, rail_pvar_sample(v), &d);
    EXPECT(fabs(d - 1.5) < 1e-12, "1.5e9 ns is %g s", d);
    uint64_t raw = 0;
    d = 2.5;
    EXPECT(rail_pvar_raw_of(v, &d, &raw) && raw == 2500000000u, "2.5 s is %llu ns",
           (unsigned long long)raw);
    const double bad[] = {-1, NAN, 1e30};
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(bad); i++)
        EXPECT(!rail_pvar_raw_of(v, &bad[i], &raw), "%g has a raw value", bad[i]);
}

static void check_duplicates(void)
{
    int n = rail_pvar_count();
    const rail_pvar_t *first = rail_pvar_find("test_twice");
    rail_pvar_t def = *first;
    def.name = "test_twice";
    EXPECT(rail_pvar_register(&def) == MPI_SUCCESS, "the same definition again");
    static const rail_pvar_counter_t again[] = {{"test_events", "Events of the test", &events}};
    EXPECT(rail_pvar_register_counters(again, 1) == MPI_SUCCESS, "the same counter again");
    EXPECT(rail_pvar_count() == n && rail_pvar_find("test_twice") == first, "re-registered");

    printf("pvar_test: two warnings of another definition follow\n");
    uint64_t other = 0;
    def.arg = &other;
    EXPECT(rail_pvar_register(&def) == MPI_ERR_ARG, "another arg under the same name");
    static const rail_pvar_counter_t clash[] = {{"test_events", "Events of the test", &bytes}};
    EXPECT(rail_pvar_register_counters(clash, 1) == MPI_ERR_ARG, "another counter, same name");
    EXPECT(rail_pvar_count() == n && first->arg == &twice_of &&
               rail_pvar_find("test_events")->counter == &events,
           "the first definition must stay");
}

static void check_malformed(void)
{
    int n = rail_pvar_count();
    const rail_pvar_t good = {.name = "test_bad", .desc = "Bad", .level = 4,
                              .var_class = MPI_T_PVAR_CLASS_COUNTER, .type = RAIL_PVAR_UNSIGNED,
                              .counter = &events};
    rail_pvar_t bad[9];
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(bad); i++)
        bad[i] = good;
    bad[0].name = NULL;
    bad[1].name = "";
    bad[2].desc = NULL;
    bad[3].sample = sample_clock;          /* both a counter and a sample */
    bad[4].counter = NULL;                 /* neither */
    bad[5].var_class = 0;
    bad[6].level = 10;
    bad[7].scale = 1;                      /* an unsigned with a scale */
    bad[8].type = RAIL_PVAR_DOUBLE;        /* a double without */
    printf("pvar_test: %zu warnings of malformed variables follow\n", RAIL_ARRAY_SIZE(bad) + 1);
    EXPECT(rail_pvar_register(NULL) == MPI_ERR_ARG, "NULL registered");
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(bad); i++)
        EXPECT(rail_pvar_register(&bad[i]) == MPI_ERR_ARG, "malformed %zu registered", i);
    EXPECT(rail_pvar_count() == n && !rail_pvar_find("test_bad"), "a malformed one is in");
    EXPECT(rail_pvar_register(&good) == MPI_SUCCESS, "the good one");
}

static void check_copied_strings(void)
{
    char name[32], desc[32];
    snprintf(name, sizeof(name), "test_copied");
    snprintf(desc, sizeof(desc), "Copied");
    rail_pvar_counter_t c = {name, desc, &bytes};
    EXPECT(rail_pvar_register_counters(&c, 1) == MPI_SUCCESS, "register from buffers");
    memset(name, 'x', sizeof(name) - 1);
    memset(desc, 'x', sizeof(desc) - 1);
    const rail_pvar_t *v = rail_pvar_find("test_copied");
    EXPECT(v && strcmp(v->desc, "Copied") == 0, "the registry keeps its own strings");
}

/* ------------------------------------------------------------ threads */

enum { N_THREADS = 4, PER_THREAD = 100 };
static uint64_t thread_counter[N_THREADS][PER_THREAD];
static int stop_reading;

static void *registrar(void *arg)
{
    int t = (int)(intptr_t)arg;
    static const rail_pvar_counter_t shared[] = {{"test_shared", "Shared", &events}};
    for (int i = 0; i < PER_THREAD; i++) {
        char name[64];
        snprintf(name, sizeof(name), "test_thread_%d_%d", t, i);
        rail_pvar_counter_t c = {name, "A thread's", &thread_counter[t][i]};
        EXPECT(rail_pvar_register_counters(&c, 1) == MPI_SUCCESS, "%s", name);
        EXPECT(rail_pvar_register_counters(shared, 1) == MPI_SUCCESS, "test_shared");
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_reading, __ATOMIC_ACQUIRE)) {
        int n = rail_pvar_count();
        for (int i = 0; i < n; i++) {
            const rail_pvar_t *v = rail_pvar_at(i);
            EXPECT(v && rail_pvar_index(v->name) == i, "variable %d while registering", i);
        }
    }
    return NULL;
}

static void check_threads(void)
{
    int n = rail_pvar_count();
    pthread_t reg[N_THREADS], rd;
    pthread_create(&rd, NULL, reader, NULL);
    for (int t = 0; t < N_THREADS; t++)
        pthread_create(&reg[t], NULL, registrar, (void *)(intptr_t)t);
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(reg[t], NULL);
    __atomic_store_n(&stop_reading, 1, __ATOMIC_RELEASE);
    pthread_join(rd, NULL);
    EXPECT(rail_pvar_count() == n + N_THREADS * PER_THREAD + 1, "%d variables after the threads",
           rail_pvar_count());
    const rail_pvar_t *v = rail_pvar_find("test_thread_3_99");
    EXPECT(v && v->counter == &thread_counter[3][99], "a thread's variable");
}

int main(void)
{
    check_empty();
    check_counters();
    check_sample();
    check_scale();
    check_duplicates();
    check_malformed();
    check_copied_strings();
    check_threads();
    EXPECT(strcmp(rail_pvar_class_name(MPI_T_PVAR_CLASS_COUNTER), "counter") == 0 &&
               strcmp(rail_pvar_class_name(MPI_T_PVAR_CLASS_TIMER), "timer") == 0 &&
               strcmp(rail_pvar_class_name(0), "?") == 0,
           "class names");
    return check_report("pvar_test");
}
