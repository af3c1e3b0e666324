/*
 * Helpers of the tuned-component tests (test/coll/tuned_*.c), on top of
 * coll_test.h.
 *
 * How algorithms are forced: test/tests.conf runs each test once per
 * environment variant; a variant sets RAIL_COLL=tuned,basic (so that tuned
 * serves every blocking operation it offers) and forces one algorithm per
 * operation with RAIL_COLL_TUNED_<OP>_ALGORITHM=<name>.  Parameters are
 * read at MPI_Init, so the algorithm is fixed for the run.  A run checks
 * only the operations its variant forces (t_checks), the variant without
 * any forcing checks every operation with the built-in decisions; so each
 * variant costs only what it tests.  tuned_unit checks that the variants
 * name every algorithm of the component's table.
 */
#ifndef TEST_COLL_TUNED_TEST_H
#define TEST_COLL_TUNED_TEST_H

#include "coll_test.h"

#include <ctype.h>
#include <stdbool.h>

extern char **environ;

/* Whether this run checks operation op ("allreduce"). */
static inline int t_checks(const char *op)
{
    static int forcing = -1;
    if (forcing < 0) {
        forcing = 0;
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "RAIL_COLL_TUNED_", 16) == 0 && strstr(*e, "_ALGORITHM="))
                forcing = 1;
    }
    if (!forcing)
        return 1;
    char name[96];
    size_t n = (size_t)snprintf(name, sizeof(name), "RAIL_COLL_TUNED_");
    for (const char *s = op; *s && n + 1 < sizeof(name); s++)
        name[n++] = (char)toupper((unsigned char)*s);
    snprintf(name + n, sizeof(name) - n, "_ALGORITHM");
    const char *v = getenv(name);
    return v && *v && strcmp(v, "auto") != 0;
}

/* What the run forces, for messages. */
static inline void t_banner(const char *prog)
{
    if (t_rank != 0)
        return;
    printf("%s: np %d%s:", prog, t_size, t_device ? ", device buffers" : "");
    int any = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "RAIL_COLL_TUNED_", 16) == 0) {
            printf(" %s", *e + 16);
            any = 1;
        }
    printf("%s\n", any ? "" : " built-in decisions");
    fflush(stdout);
}

/* Distinct roots worth testing: 0, n-1 and n/2. */
static inline int t_roots(int *roots)
{
    int n = 0, cand[3] = { 0, t_size - 1, t_size / 2 };
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= roots[k] == cand[i];
        if (!dup)
            roots[n++] = cand[i];
    }
    return n;
}

#endif
