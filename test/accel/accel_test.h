/*
 * Helpers for the accel unit tests (checks and skips: test/check.h):
 * choosing the components, re-running the test binary with a different
 * environment (dlopen reads LD_LIBRARY_PATH only at start-up), byte
 * patterns.
 */
#ifndef TEST_ACCEL_ACCEL_TEST_H
#define TEST_ACCEL_ACCEL_TEST_H

#include "accel/accel.h"
#include "base/param.h"
#include "test/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

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
