/*
 * Shared helpers of the datatype engine tests: a naive reference packer
 * (a recursive walk of the description, one basic element at a time), a
 * random nested type generator, typed buffers; checks are test/check.h's
 * EXPECT (a condition is evaluated once: it may move a cursor).
 */
#ifndef TEST_BASE_DT_TESTLIB_H
#define TEST_BASE_DT_TESTLIB_H

#include "base/dt.h"
#include "test/check.h"
#include <stdio.h>
#include <stdlib.h>

/* A check function gives up at its first failure (avoids floods): the
 * failure is counted (EXPECT, test/check.h) and it returns 1. */
#define T_REQUIRE(cond, ...)                                                                       \
    do {                                                                                           \
        if (!EXPECT_TEXT(cond, #cond, __VA_ARGS__))                                                \
            return 1;                                                                              \
    } while (0)

/* xorshift64* */
uint64_t t_rand(void);
void t_seed(uint64_t seed);
int64_t t_range(int64_t lo, int64_t hi); /* inclusive */
/* Seed from argv[1], RAIL_TEST_SEED or the clock, and print it. */
uint64_t t_seed_from_args(int argc, char **argv);

/* Reference walk: emit(addr, leaf) for each basic element in type-map order. */
typedef void (*t_emit_fn)(uintptr_t addr, const struct rail_dt *leaf, void *arg);
void t_ref_walk(const struct rail_dt *dt, int64_t count, uintptr_t buf, t_emit_fn emit, void *arg);
size_t t_ref_pack(const struct rail_dt *dt, int64_t count, const void *buf, void *out);
size_t t_ref_unpack(const struct rail_dt *dt, int64_t count, void *buf, const void *in);
/* Only the first n packed bytes (the last basic element possibly in part). */
size_t t_ref_unpack_n(const struct rail_dt *dt, int64_t count, void *buf, const void *in,
                      size_t n);
/* Data bounds of count elements relative to buf (false: no data). */
bool t_ref_bounds(const struct rail_dt *dt, int64_t count, int64_t *lo, int64_t *hi);
int64_t t_ref_nelem(const struct rail_dt *dt);
/* true when no two basic elements of count elements overlap in memory. */
bool t_ref_disjoint(const struct rail_dt *dt, int64_t count);

/* A memory region holding count elements of dt, filled with random bytes. */
struct t_buf {
    unsigned char *mem;  /* allocation */
    size_t len;
    void *buf;           /* what the datatype calls buf */
};
void t_buf_alloc(struct t_buf *b, const struct rail_dt *dt, int64_t count);
void t_buf_free(struct t_buf *b);
void t_fill_random(void *p, size_t n);

/* Random type: nesting up to depth levels, packed size at most max_size. */
struct rail_dt *t_rand_type(int depth, int64_t max_size);
/* A random predefined type from a varied set (pairs, long double, ...). */
struct rail_dt *t_rand_leaf(void);
/* Limit t_rand_leaf to kinds whose random bytes survive external32. */
extern bool t_leaf_ext32_safe;

#endif
