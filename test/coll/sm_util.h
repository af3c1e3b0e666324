/*
 * Helpers of the sm and han tests: which shared-memory segments of coll sm
 * this process has mapped (from /proc/self/maps), so a test can tell that
 * sm really serves a communicator, that a segment appears at the first
 * collective and goes with MPI_Comm_free, and that its name is unlinked.
 * coll sm names segments /dev/shm/rail-<jobid>-csm-<creator's world
 * rank>-<n>.
 */
#ifndef TEST_COLL_SM_UTIL_H
#define TEST_COLL_SM_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct sm_maps {
    int segments;        /* distinct csm segments mapped */
    int linked;          /* ... whose name still exists (not "(deleted)") */
    int by_creator;      /* ... created by the world rank asked for (-1: any) */
} sm_maps_t;

static inline sm_maps_t sm_maps(int creator)
{
    sm_maps_t r = { 0, 0, 0 };
    char line[1024], last[512] = "", want[64];
    snprintf(want, sizeof(want), "-csm-%d-", creator);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return r;
    while (fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/dev/shm/rail-");
        if (!p || !strstr(p, "-csm-"))
            continue;
        p[strcspn(p, "\n")] = '\0';
        if (strcmp(p, last) == 0)   /* one segment, several lines */
            continue;
        snprintf(last, sizeof(last), "%s", p);
        r.segments++;
        r.linked += strstr(p, "(deleted)") == NULL;
        r.by_creator += creator < 0 || strstr(p, want) != NULL;
    }
    fclose(f);
    return r;
}

/* A reduction on C (root < 0: MPI_Allreduce) of c elements of t_types[tk],
 * data from gen_fill(seed), checked on every process that gets a result
 * against the reference reduction in rank order (the rank order of C is
 * the order of the reduction).  Needs coll_test.h; label starts the
 * failure messages.  For the sm and han tests. */
static inline void smhan_reduce(MPI_Comm C, int me, int n, const char *label, int tk, MPI_Op op,
                                long c, int root, int inplace, int seed)
{
    const tdt_t *t = &t_types[tk];
    bool all = root < 0, want = all || me == root, ip = inplace && want;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)c * t->ext);
    tb_alloc(&rb, want ? (size_t)c * t->ext : 0);
    snprintf(t_current, sizeof(t_current), "%s %s %s count %ld root %d%s", label,
             all ? "allreduce" : "reduce", t->name, c, root, ip ? " in place" : "");
    gen_fill(t, sb.h, c, me, seed);
    t_poison(rb.h, rb.len);
    if (ip)
        gen_fill(t, rb.h, c, me, seed);
    tb_push(&sb);
    tb_push(&rb);
    if (all)
        MPI_OK(MPI_Allreduce(ip ? MPI_IN_PLACE : sb.d, rb.d, (int)c, t->dt, op, C));
    else
        MPI_OK(MPI_Reduce(ip ? MPI_IN_PLACE : sb.d, rb.d, (int)c, t->dt, op, root, C));
    tb_pull(&rb);
    char w[64];
    for (long i = 0; want && i < c; i++) {
        ref_reduce(t, op, w, i, 0, n - 1, seed);
        CHECK_ELEM(t, rb.h + i * t->ext, w, !ip, i);
    }
    tb_free(&sb);
    tb_free(&rb);
}

#endif
