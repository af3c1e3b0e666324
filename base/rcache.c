/*
 * The registration cache (see base/rcache.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rail.h"
#include "base/log.h"
#include "base/param.h"
#include "base/pvar.h"
#include "base/rcache.h"

typedef struct rcache_entry {
    struct rcache_entry *prev, *next; /* most recently used first */
    int refs;
    bool cached;                      /* in the list (not invalidated, cache enabled) */
    max_align_t reg[];                /* the owner's struct, rail_rcache_reg_t first */
} rcache_entry_t;

typedef struct rcache_stats {
    char name[48];
    uint64_t hits, misses, invalidations, evictions;
} rcache_stats_t;

struct rail_rcache {
    rail_rcache_ops_t ops;
    void *ctx;
    rcache_entry_t *head, *tail;
    int n_unused;                     /* cached entries nobody holds */
    uint64_t seen;                    /* memhook releases drained */
    rcache_stats_t *stats;
};

static bool rcache_enable = true;
static int rcache_max_unused = 64;
static bool rcache_malloc_hold = true;
static rcache_stats_t rcache_owners[RAIL_RCACHE_MAX_OWNERS];

int rail_rcache_register_params(void)
{
    int rc;
    RAIL_CHECK(rail_param_register_bool(
        "rcache_enable", true,
        "Keep network memory registrations for reuse (0: register and deregister every "
        "transfer's memory)",
        RAIL_PARAM_LEVEL_TUNER, &rcache_enable));
    /* Principle: a program sends from a few buffers again and again; a
     * bounded list keeps the linear lookup short and the pinned memory to
     * what the program reuses. */
    RAIL_CHECK(rail_param_register_int(
        "rcache_max_unused", 64,
        "Registrations kept while unused; beyond this many the least recently used is "
        "deregistered (a short list: lookups walk it)",
        RAIL_PARAM_LEVEL_TUNER, &rcache_max_unused));
    RAIL_CHECK(rail_param_register_bool(
        "rcache_malloc_hold", true,
        "While a registration cache exists, tell glibc malloc never to unmap or trim freed "
        "memory, so that a freed and reused buffer keeps a valid registration (glibc unmaps "
        "without the hooks seeing it)",
        RAIL_PARAM_LEVEL_TUNER, &rcache_malloc_hold));
fail:
    return rc;
}

static rcache_stats_t *rcache_stats_of(const char *name)
{
    for (int i = 0; i < RAIL_RCACHE_MAX_OWNERS; i++) {
        rcache_stats_t *s = &rcache_owners[i];
        if (strcmp(s->name, name) == 0)
            return s;
        if (s->name[0] == '\0') {
            snprintf(s->name, sizeof s->name, "%s", name);
            return s;
        }
    }
    return NULL;
}

int rail_rcache_register_pvars(const char *name)
{
    rcache_stats_t *s = rcache_stats_of(name);
    if (!s)
        return MPI_ERR_INTERN;
    char names[4][96], descs[4][160];
    static const char *const what[4][2] = {
        {"hits", "a transfer found its memory registered already"},
        {"misses", "a transfer's memory was registered"},
        {"invalidations", "a registration dropped because its memory was unmapped"},
        {"evictions", "an unused registration dropped to keep the cache short"},
    };
    const uint64_t *ctr[4] = {&s->hits, &s->misses, &s->invalidations, &s->evictions};
    rail_pvar_counter_t table[4];
    for (int i = 0; i < 4; i++) {
        snprintf(names[i], sizeof names[i], "%s_rcache_%s", name, what[i][0]);
        snprintf(descs[i], sizeof descs[i], "Registration cache of %s: times %s", name,
                 what[i][1]);
        table[i] = (rail_pvar_counter_t){names[i], descs[i], ctr[i]};
    }
    return rail_pvar_register_counters(table, 4);
}

rail_rcache_t *rail_rcache_create(const char *name, const rail_rcache_ops_t *ops, void *ctx)
{
    if (ops->reg_size < sizeof(rail_rcache_reg_t) || rail_rcache_register_pvars(name))
        return NULL;
    rail_rcache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ops = *ops;
    c->ctx = ctx;
    c->stats = rcache_stats_of(name);
    c->seen = rail_memhook_count();
    if (rcache_enable && rcache_malloc_hold) {
        mallopt(M_MMAP_MAX, 0);
        mallopt(M_TRIM_THRESHOLD, -1);
    }
    return c;
}

static rail_rcache_reg_t *entry_reg(rcache_entry_t *e) { return (rail_rcache_reg_t *)e->reg; }

static rcache_entry_t *reg_entry(rail_rcache_reg_t *r)
{
    return (rcache_entry_t *)((char *)r - offsetof(rcache_entry_t, reg));
}

static void rcache_unlink(rail_rcache_t *c, rcache_entry_t *e)
{
    *(e->prev ? &e->prev->next : &c->head) = e->next;
    *(e->next ? &e->next->prev : &c->tail) = e->prev;
    e->prev = e->next = NULL;
    e->cached = false;
    if (e->refs == 0)
        c->n_unused--;
}

static void rcache_push_front(rail_rcache_t *c, rcache_entry_t *e)
{
    e->prev = NULL;
    e->next = c->head;
    *(c->head ? &c->head->prev : &c->tail) = e;
    c->head = e;
    e->cached = true;
}

static void rcache_free(rail_rcache_t *c, rcache_entry_t *e)
{
    c->ops.mem_dereg(c->ctx, entry_reg(e));
    free(e);
}

/* Drop cached entries overlapping [lo, hi): memory went back to the kernel. */
static void rcache_invalidate(void *arg, uintptr_t lo, uintptr_t hi)
{
    rail_rcache_t *c = arg;
    for (rcache_entry_t *e = c->head, *next; e; e = next) {
        next = e->next;
        rail_rcache_reg_t *r = entry_reg(e);
        if (r->base >= hi || r->base + r->len <= lo)
            continue;
        rcache_unlink(c, e);
        c->stats->invalidations++;
        if (e->refs == 0)
            rcache_free(c, e);
    }
}

static void rcache_trim(rail_rcache_t *c, int keep)
{
    for (rcache_entry_t *e = c->tail, *prev; e && c->n_unused > keep; e = prev) {
        prev = e->prev;
        if (e->refs)
            continue;
        rcache_unlink(c, e);
        c->stats->evictions++;
        rcache_free(c, e);
    }
}

static rcache_entry_t *rcache_find(rail_rcache_t *c, uintptr_t lo, uintptr_t hi)
{
    for (rcache_entry_t *e = c->head; e; e = e->next) {
        rail_rcache_reg_t *r = entry_reg(e);
        if (r->base <= lo && r->base + r->len >= hi)
            return e;
    }
    return NULL;
}

/* Register a new entry; when the device refuses, drop the unused ones
 * (they hold pinned memory) and try once more. */
static int rcache_new(rail_rcache_t *c, uintptr_t lo, uintptr_t hi, rcache_entry_t **out)
{
    rcache_entry_t *e = calloc(1, sizeof *e + c->ops.reg_size);
    if (!e)
        return MPI_ERR_NO_MEM;
    rail_rcache_reg_t *r = entry_reg(e);
    r->base = lo;
    r->len = hi - lo;
    int rc = c->ops.mem_reg(c->ctx, r);
    if (rc != MPI_SUCCESS && c->n_unused > 0) {
        rcache_trim(c, 0);
        memset(r + 1, 0, c->ops.reg_size - sizeof *r);
        rc = c->ops.mem_reg(c->ctx, r);
    }
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    *out = e;
    return MPI_SUCCESS;
}

int rail_rcache_get(rail_rcache_t *c, const void *base, size_t len, rail_rcache_reg_t **reg)
{
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)base & ~(uintptr_t)(page - 1);
    uintptr_t hi = RAIL_ALIGN_UP((uintptr_t)base + (len ? len : 1), (uintptr_t)page);
    if (rail_memhook_count() != c->seen)
        rail_memhook_drain(&c->seen, rcache_invalidate, c);
    rcache_entry_t *e = rcache_enable ? rcache_find(c, lo, hi) : NULL;
    if (e) {
        c->stats->hits++;
        if (e->refs++ == 0)
            c->n_unused--;
        if (e != c->head) {
            rcache_unlink(c, e);
            rcache_push_front(c, e);
        }
    } else {
        int rc = rcache_new(c, lo, hi, &e);
        if (rc != MPI_SUCCESS)
            return rc;
        c->stats->misses++;
        e->refs = 1;
        if (rcache_enable)
            rcache_push_front(c, e);
    }
    *reg = entry_reg(e);
    return MPI_SUCCESS;
}

void rail_rcache_put(rail_rcache_t *c, rail_rcache_reg_t *reg)
{
    rcache_entry_t *e = reg_entry(reg);
    if (--e->refs > 0)
        return;
    if (!e->cached) {
        rcache_free(c, e);
        return;
    }
    c->n_unused++;
    if (c->n_unused > rcache_max_unused)
        rcache_trim(c, rcache_max_unused);
}

void rail_rcache_destroy(rail_rcache_t *c)
{
    if (!c)
        return;
    while (c->head) {
        rcache_entry_t *e = c->head;
        rcache_unlink(c, e);
        rcache_free(c, e);
    }
    free(c);
}
