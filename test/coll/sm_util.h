/*
 * Helpers of the sm and han tests: which shared-memory segments of coll sm
 * this process has mapped (from /proc/self/maps), so a test can tell that
 * sm really serves a communicator, that a segment appears at the first
 * collective and goes with MPI_Comm_free, and that its name is unlinked.
 * coll sm names segments /dev/shm/rail-<jobid>-csm-<creator's world
 * rank>-<n>.  Also: an MPI_T counter's value.
 */
#ifndef TEST_COLL_SM_UTIL_H
#define TEST_COLL_SM_UTIL_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Whether n processes are more than this node has CPUs, as the library
 * counts them (the larger of this process's and its parent's CPU sets;
 * every process of these tests runs on one node). */
static inline bool node_oversubscribed(int n)
{
    int most = 0;
    pid_t who[2] = { 0, getppid() };
    for (int i = 0; i < 2; i++) {
        cpu_set_t set;
        if (sched_getaffinity(who[i], sizeof(set), &set) == 0 && CPU_COUNT(&set) > most)
            most = CPU_COUNT(&set);
    }
    if (most == 0)
        most = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return n > most;
}

/* Reduction buffers: sb holds `in` elements of gen_fill(me, seed), rb
 * `out` elements of poison, or the input too when in place; both pushed
 * to the device where the test runs on device buffers. */
static inline void smhan_red_bufs(const tdt_t *t, tbuf_t *sb, tbuf_t *rb, long in, long out,
                                  bool ip, int me, int seed)
{
    tb_alloc(sb, (size_t)in * t->ext);
    tb_alloc(rb, (size_t)out * t->ext);
    gen_fill(t, sb->h, in, me, seed);
    t_poison(rb->h, rb->len);
    if (ip)
        gen_fill(t, rb->h, in, me, seed);
    tb_push(sb);
    tb_push(rb);
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
    snprintf(t_current, sizeof(t_current), "%s %s %s count %ld root %d%s", label,
             all ? "allreduce" : "reduce", t->name, c, root, ip ? " in place" : "");
    smhan_red_bufs(t, &sb, &rb, c, want ? c : 0, ip, me, seed);
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

/* MPI_Reduce_scatter_block (block) or MPI_Reduce_scatter of c elements
 * per block (MPI_Reduce_scatter: block i gets c + i % 3 elements, and
 * rank 1's is empty), checked like smhan_reduce: each process's block of
 * the rank-ordered reduction, nothing written beyond it. */
static inline void smhan_reduce_scatter(MPI_Comm C, int me, int n, const char *label, int tk,
                                        MPI_Op op, long c, int block, int inplace, int seed)
{
    const tdt_t *t = &t_types[tk];
    int *counts = malloc(sizeof(int) * (size_t)n);
    long total = 0, lo = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = block ? (int)c : i == 1 ? 0 : (int)(c + i % 3);
        if (i == me)
            lo = total;
        total += counts[i];
    }
    long mine = counts[me];
    tbuf_t sb, rb;
    snprintf(t_current, sizeof(t_current), "%s %s %s count %ld%s", label,
             block ? "reduce_scatter_block" : "reduce_scatter", t->name, c,
             inplace ? " in place" : "");
    smhan_red_bufs(t, &sb, &rb, total, inplace ? total : mine + 1, inplace, me, seed);
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    if (block)
        MPI_OK(MPI_Reduce_scatter_block(sp, rb.d, (int)c, t->dt, op, C));
    else
        MPI_OK(MPI_Reduce_scatter(sp, rb.d, counts, t->dt, op, C));
    tb_pull(&rb);
    char w[64];
    for (long i = 0; i < mine; i++) {
        ref_reduce(t, op, w, lo + i, 0, n - 1, seed);
        CHECK_ELEM(t, rb.h + i * t->ext, w, !inplace, i);
    }
    for (size_t i = (size_t)mine * t->ext; !inplace && i < rb.len; i++)
        CHECK(((unsigned char *)rb.h)[i] == (T_HOLE & 0xff),   /* t_poison's byte */
              "%s: byte %zu beyond the block changed", t_current, i);
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
}

#include "test/pvar.h"

/* MPI_T: the value of control variable `name` into *v (an int for int and
 * bool parameters, an unsigned long long for sizes). */
static inline void cvar_read(const char *name, void *v)
{
    int idx, count;
    MPI_T_cvar_handle h;
    MPI_OK(MPI_T_cvar_get_index(name, &idx));
    MPI_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    MPI_OK(MPI_T_cvar_read(h, v));
    MPI_OK(MPI_T_cvar_handle_free(&h));
}

#endif
