/*
 * Basic elements in partial data (MPI_Get_elements) against the reference
 * walk at every byte count, its cost on huge types, and type signatures
 * (runs, prefix matching).  Usage: dt_elements [seed] [iterations]
 */
#include "dt_testlib.h"
#include <string.h>
#include <time.h>

#define I32 rail_dt_predefined(RAIL_TK_INT32)
#define F64 rail_dt_predefined(RAIL_TK_DOUBLE)

struct t_leaves {
    const struct rail_dt **leaf;
    size_t n;
};

static void t_emit_leaf(uintptr_t addr, const struct rail_dt *leaf, void *arg)
{
    struct t_leaves *l = arg;
    l->leaf[l->n++] = leaf;
}

static struct t_leaves t_leaves_of(const struct rail_dt *dt, int64_t count)
{
    struct t_leaves l = {malloc((size_t)(count * dt->nelem + 1) * sizeof(*l.leaf)), 0};
    t_ref_walk(dt, count, 0, t_emit_leaf, &l);
    return l;
}

/* Every byte count of count elements (and one past). */
static int t_elements_all(const struct rail_dt *dt, int64_t count)
{
    struct t_leaves l = t_leaves_of(dt, count);
    int64_t bytes = 0, n = 0;
    size_t k = 0;
    for (int64_t b = 0; b <= count * dt->size; b++) {
        while (k < l.n && bytes + l.leaf[k]->size <= b)
            bytes += l.leaf[k++]->size, n++;
        bool exact, want_exact = bytes == b;
        int64_t got = rail_dt_get_elements(dt, b, &exact);
        T_REQUIRE(got == n && exact == want_exact, "bytes %lld: %lld (%d), want %lld (%d)",
                  (long long)b, (long long)got, exact, (long long)n, want_exact);
    }
    free(l.leaf);
    return 0;
}

/* The signature runs cover exactly the leaves, in order, merged. */
static int t_sig_runs(const struct rail_dt *dt, int64_t count)
{
    struct t_leaves l = t_leaves_of(dt, count);
    struct rail_dt_sig_iter it;
    const struct rail_dt *leaf, *prev = NULL;
    int64_t n;
    size_t k = 0;
    T_REQUIRE(rail_dt_sig_init(&it, dt, count) == MPI_SUCCESS, "sig init");
    while (rail_dt_sig_next(&it, &leaf, &n)) {
        T_REQUIRE(leaf != prev && n >= 1, "runs not merged");
        for (int64_t j = 0; j < n; j++, k++)
            T_REQUIRE(k < l.n && l.leaf[k] == leaf, "run leaf %zu", k);
        prev = leaf;
    }
    T_REQUIRE(k == l.n, "runs cover %zu of %zu", k, l.n);
    rail_dt_sig_fini(&it);
    free(l.leaf);
    return 0;
}

/* A struct with the same signature as dt x count, laid out differently. */
static struct rail_dt *t_same_signature(const struct rail_dt *dt, int64_t count, int64_t extra)
{
    struct t_leaves l = t_leaves_of(dt, count);
    size_t n = l.n + (size_t)extra;
    int64_t *bl = malloc((n + 1) * sizeof(*bl)), *d = malloc((n + 1) * sizeof(*d));
    struct rail_dt **ts = malloc((n + 1) * sizeof(*ts)), *out;
    for (size_t i = 0; i < n; i++) {
        ts[i] = (struct rail_dt *)(i < l.n ? l.leaf[i] : I32);
        bl[i] = 1;
        d[i] = (int64_t)(n - i) * 40;
    }
    rail_dt_create_struct((int64_t)n, bl, d, ts, &out);
    free(bl);
    free(d);
    free(ts);
    free(l.leaf);
    return out;
}

static int t_sig_match(const struct rail_dt *dt, int64_t count)
{
    bool m;
    struct rail_dt *same = t_same_signature(dt, count, 0), *longer;
    T_REQUIRE(rail_dt_sig_match(dt, count, same, 1, &m) == MPI_SUCCESS && m, "same signature");
    T_REQUIRE(rail_dt_sig_match(same, 1, dt, count, &m) == MPI_SUCCESS && m, "symmetric");
    longer = t_same_signature(dt, count, 2);
    T_REQUIRE(rail_dt_sig_match(dt, count, longer, 1, &m) == MPI_SUCCESS && m, "prefix");
    T_REQUIRE(rail_dt_sig_match(longer, 1, dt, count, &m) == MPI_SUCCESS && !m, "longer");
    rail_dt_release(same);
    rail_dt_release(longer);
    return 0;
}

static void t_random(int iters)
{
    for (int i = 0; i < iters && check_failures < 5; i++) {
        struct rail_dt *dt = t_rand_type(4, 600);
        int64_t count = t_range(0, 3);
        if (t_elements_all(dt, count) || t_sig_runs(dt, count) ||
            (dt->nelem * count < 2000 && t_sig_match(dt, count))) {
            fprintf(stderr, "iteration %d, count %lld:\n", i, (long long)count);
            rail_dt_dump(dt, stderr);
        }
        rail_dt_release(dt);
    }
}

static void t_signatures(void)
{
    struct rail_dt *v, *c, *s, *ts[2] = {I32, F64};
    int64_t bl[2] = {3, 1}, d[2] = {0, 16};
    const struct rail_dt *leaf;
    int64_t n;
    bool m;
    struct rail_dt_sig_iter it;
    rail_dt_create_vector(1 << 20, 1, 3, I32, &v);
    rail_dt_sig_init(&it, v, 7);
    EXPECT(rail_dt_sig_next(&it, &leaf, &n) && leaf == I32 && n == 7 << 20, "one run");
    EXPECT(!rail_dt_sig_next(&it, &leaf, &n), "only one run");
    rail_dt_sig_fini(&it);
    rail_dt_create_contiguous(7 << 20, I32, &c);
    EXPECT(rail_dt_sig_match(v, 7, c, 1, &m) == MPI_SUCCESS && m, "vector vs contiguous");
    EXPECT(rail_dt_sig_match(I32, 1, F64, 1, &m) == MPI_SUCCESS && !m, "int vs double");
    rail_dt_create_struct(2, bl, d, ts, &s);
    EXPECT(rail_dt_sig_match(s, 2, s, 3, &m) == MPI_SUCCESS && m, "struct prefix");
    EXPECT(rail_dt_sig_match(s, 2, c, 1, &m) == MPI_SUCCESS && !m, "struct vs ints");
    EXPECT(rail_dt_sig_match(I32, 3, s, 1, &m) == MPI_SUCCESS && m, "3 ints prefix of struct");
    EXPECT(rail_dt_sig_match(rail_dt_predefined(RAIL_TK_2INT), 2, c, 1, &m) == MPI_SUCCESS && m,
           "2int is two ints");
    rail_dt_release(s);
    rail_dt_release(c);
    rail_dt_release(v);
}

/* get_elements must not walk the data: a million-entry type, many queries. */
static void t_elements_fast(void)
{
    int64_t n = 1 << 20, *bl = malloc((size_t)n * sizeof(*bl)), *d = malloc((size_t)n * sizeof(*d));
    struct rail_dt *ts[2] = {rail_dt_predefined(RAIL_TK_INT8), F64}, *s, *h, *c;
    int64_t sbl[2] = {1, 1}, sd[2] = {0, 8};
    rail_dt_create_struct(2, sbl, sd, ts, &s);     /* 9 bytes, 2 elements */
    for (int64_t i = 0; i < n; i++)
        bl[i] = 1 + i % 3, d[i] = 64 * i;
    rail_dt_create_hindexed(n, bl, d, s, &h);
    rail_dt_create_contiguous(1000, h, &c);
    clock_t t0 = clock();
    bool exact;
    int64_t per = 2 * (h->size / 9);
    EXPECT(rail_dt_get_elements(c, c->size, &exact) == 1000 * per && exact, "whole");
    EXPECT(rail_dt_get_elements(c, h->size * 5 + 9 * 3 + 2, &exact) == 5 * per + 6 + 1 && !exact,
           "inside");
    for (int i = 0; i < 1000000; i++)
        rail_dt_get_elements(c, (int64_t)(t_rand() % (uint64_t)c->size), NULL);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    EXPECT(secs < 2.0, "1e6 get_elements on a 1e9-element type took %.2f s", secs);
    rail_dt_release(c);
    rail_dt_release(h);
    rail_dt_release(s);
    free(bl);
    free(d);
}

int main(int argc, char **argv)
{
    t_seed_from_args(argc, argv);
    t_signatures();
    t_elements_fast();
    t_random(argc > 2 ? atoi(argv[2]) : 3000);
    return check_report("dt_elements");
}
