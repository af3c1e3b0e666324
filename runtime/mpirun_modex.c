/* mpirun: fences and direct modex across hosts (see runtime/README.md). */
#include "runtime/mpirun.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ fences */

static bool *root_fence_members(const char *sig)
{
    bool *m = launch_xcalloc((size_t)root.job->nnodes, sizeof(bool));
    if (strcmp(sig, "*") == 0) {
        for (int i = 0; i < root.job->nnodes; i++)
            m[i] = true;
        return m;
    }
    for (const char *p = sig; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= root.job->size) {
            free(m);
            return NULL;
        }
        m[root.job->rank_node[r]] = true;
        p = *end == ',' ? end + 1 : end;
    }
    return m;
}

static void root_fence_complete(root_fence_t *f)
{
    lbuf_t m;
    size_t total = 0;

    for (int i = 0; i < root.job->nnodes; i++)
        total += f->have[i] ? f->parts[i].len : 0;
    lbuf_init(&m);
    lmsg_start(&m, LMSG_FENCE_DOWN);
    lbuf_put_str(&m, f->sig);
    lbuf_put_u32(&m, f->seq);
    lbuf_put_i32(&m, 0);
    lbuf_put_u32(&m, (uint32_t)total);
    for (int i = 0; i < root.job->nnodes; i++) /* blob(node 0), blob(node 1), ... */
        if (f->have[i])
            lbuf_put(&m, f->parts[i].data, f->parts[i].len);
    lmsg_finish(&m);
    for (int i = 0; i < root.job->nnodes; i++)
        if (f->member[i])
            root_send(&root.nodes[i], &m);
    lbuf_free(&m);
    launch_debug("fence %s #%u complete: %zu bytes from %d nodes", f->sig, f->seq, total,
                 f->needed);
}

void root_fence_up(int node, lbuf_t *p)
{
    char *sig = lbuf_get_str(p);
    uint32_t seq = lbuf_get_u32(p);
    size_t n;
    const void *data = lbuf_get_bytes(p, &n);
    root_fence_t *f, **pp;

    if (!sig || p->bad) {
        free(sig);
        root_fail(1, "internal error: malformed fence message from %s", root.nodes[node].name);
        return;
    }
    for (pp = &root.fences; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->sig, sig) == 0 && (*pp)->seq == seq)
            break;
    f = *pp;
    if (!f) {
        f = launch_xcalloc(1, sizeof(*f));
        f->sig = sig;
        f->seq = seq;
        f->member = root_fence_members(sig);
        if (!f->member) {
            free(f->sig);
            free(f);
            root_fail(1, "internal error: fence over unknown ranks '%s'", sig);
            return;
        }
        f->have = launch_xcalloc((size_t)root.job->nnodes, sizeof(bool));
        f->parts = launch_xcalloc((size_t)root.job->nnodes, sizeof(lbuf_t));
        for (int i = 0; i < root.job->nnodes; i++)
            f->needed += f->member[i];
        f->next = root.fences;
        root.fences = f;
    } else {
        free(sig);
    }
    if (!f->member[node] || f->have[node])
        return;
    f->have[node] = true;
    lbuf_put(&f->parts[node], data, n);
    if (++f->got < f->needed)
        return;
    root_fence_complete(f);
    for (pp = &root.fences; *pp != f; pp = &(*pp)->next)
        ;
    *pp = f->next;
    for (int i = 0; i < root.job->nnodes; i++)
        lbuf_free(&f->parts[i]);
    free(f->parts);
    free(f->have);
    free(f->member);
    free(f->sig);
    free(f);
}

void root_dmodex(int node, uint32_t type, lbuf_t *p)
{
    lbuf_t m;
    lbuf_init(&m);
    if (type == LMSG_DMODEX_REQ) {
        uint64_t id = lbuf_get_u64(p);
        int rank = lbuf_get_i32(p);
        if (p->bad || rank < 0 || rank >= root.job->size)
            return;
        lmsg_start(&m, LMSG_DMODEX_SERVE);
        lbuf_put_i32(&m, node);
        lbuf_put_u64(&m, id);
        lbuf_put_i32(&m, rank);
        lmsg_finish(&m);
        root_send(&root.nodes[root.job->rank_node[rank]], &m);
    } else {
        int asking = lbuf_get_i32(p);
        uint64_t id = lbuf_get_u64(p);
        int status = lbuf_get_i32(p);
        size_t n;
        const void *data = lbuf_get_bytes(p, &n);
        if (p->bad || asking < 0 || asking >= root.job->nnodes)
            return;
        lmsg_start(&m, LMSG_DMODEX_RESP);
        lbuf_put_u64(&m, id);
        lbuf_put_i32(&m, status);
        lbuf_put_bytes(&m, data, n);
        lmsg_finish(&m);
        root_send(&root.nodes[asking], &m);
    }
    lbuf_free(&m);
}

