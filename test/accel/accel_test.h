/*
 * Helpers for the accel unit tests: checks that report the line and exit 1,
 * skips (exit 77 with a reason), and re-running the test binary with a
 * different environment (dlopen reads LD_LIBRARY_PATH only at start-up).
 */
#ifndef TEST_ACCEL_ACCEL_TEST_H
#define TEST_ACCEL_ACCEL_TEST_H

#include "accel/accel.h"
#include "base/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define TEST_SKIP 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_RC(expr, want)                                                                       \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != (want)) {                                                                       \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, #expr,     \
                    rc_, (int)(want));                                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, MPI_SUCCESS)

#define SKIP(...)                                                                                  \
    do {                                                                                           \
        printf("SKIP: ");                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        exit(TEST_SKIP);                                                                           \
    } while (0)

/* Select components for this process (before accel_init): through the
 * environment before the parameter is registered, through the registry
 * after (a registered parameter keeps its value). */
static inline void test_select(const char *components)
{
    if (components != NULL)
        setenv("RAIL_ACCEL", components, 1);
    else
        unsetenv("RAIL_ACCEL");
    if (rail_param_find("accel") != NULL)
        rail_param_set("accel", components != NULL ? components : "host,cuda",
                       RAIL_PARAM_SRC_API);
}

/* Run `self mode` with extra environment ("NAME=value", NULL-terminated);
 * returns the exit status (128 + signal when killed); output to `out`
 * (NULL: inherited). */
int test_run_self(const char *self, const char *mode, const char *const *env, const char *out);

/* Fill / compare bytes of a deterministic pattern. */
static inline void test_pattern(void *p, size_t len, unsigned seed)
{
    unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 8));
}

static inline size_t test_pattern_check(const void *p, size_t len, unsigned seed)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i] != (unsigned char)(i * 131u + seed * 7u + (i >> 8)))
            return i;
    return (size_t)-1;
}

#endif
