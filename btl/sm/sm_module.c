/* btl sm: endpoints, send (fast box or FIFO) and progress. */
#include "btl/sm/sm.h"
#include "btl/sm/sm_fastbox.h"
#include "btl/sm/sm_fifo.h"
#include "base/log.h"
#include "runtime/rte.h"

#include <stdio.h>

/* Local index of a job rank (local_peers is ascending), or -1. */
static int btl_sm_index_of(int rank)
{
    int lo = 0, hi = rte_info.local_size - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, r = rte_info.local_peers[mid];
        if (r == rank)
            return mid;
        if (r < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The first call maps every local segment (the FIFO needs them all); then
 * each proc is reached when it is another process of this node with sm. */
int btl_sm_add_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    btl_sm_module_t *m = &btl_sm_module;
    int rc = MPI_SUCCESS;

    if (!m->mapped) {
        RAIL_CHECK(btl_sm_segment_map_peers(m));
        m->mapped = true;
    }
    for (int i = 0; i < n; i++) {
        int idx = btl_sm_index_of(procs[i].rank);
        eps[i] = idx >= 0 && idx != m->my_index && m->eps[idx].base ? &m->eps[idx] : NULL;
    }
fail:
    return rc;
}

/* Segments stay mapped until finalize: a frag of any peer may still link to
 * them. */
int btl_sm_del_procs(btl_module_t *base, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    for (int i = 0; i < n; i++)
        eps[i] = NULL;
    return MPI_SUCCESS;
}

int btl_sm_send(btl_module_t *base, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                size_t hdr_len, const btl_payload_t *payload)
{
    size_t len = payload ? payload->len : 0;

    if (RAIL_UNLIKELY(hdr_len > BTL_SM_HDR_MAX || tag >= BTL_TAG_MAX ||
                      len > base->max_send_size - hdr_len))
        return MPI_ERR_ARG;
    if (RAIL_LIKELY(ep->fifo_outstanding == 0 &&
                    btl_sm_fbox_entry_size(hdr_len, len) <= ep->out_max)) {
        int rc = btl_sm_fbox_send(ep, tag, hdr, hdr_len, payload, len);
        if (RAIL_LIKELY(rc != RAIL_AGAIN))
            return rc;
    }
    return btl_sm_fifo_send(&btl_sm_module, ep, tag, hdr, hdr_len, payload, len);
}

/* Fast boxes first, then the FIFO.  Not reentrant: a callback that calls
 * progress() again gets 0. */
int btl_sm_progress(btl_module_t *base)
{
    btl_sm_module_t *m = &btl_sm_module;
    int n = 0;

    if (RAIL_UNLIKELY(m->in_progress || !m->mapped))
        return 0;
    m->in_progress = true;
    for (int i = 0; i < m->n_peers; i++)
        n += btl_sm_fbox_poll(m, m->peers[i], false);
    if (btl_sm_fifo_maybe(m))
        n += btl_sm_fifo_drain(m);
    m->in_progress = false;
    return n;
}

void btl_sm_no_callback(uint8_t tag)
{
    static char id[BTL_TAG_MAX + 1][24];
    unsigned t = tag < BTL_TAG_MAX ? tag : BTL_TAG_MAX;
    snprintf(id[t], sizeof(id[t]), "btl_sm_tag_%u", t);
    rail_warn_once(id[t], "btl sm: message with tag %u and no receive callback, dropped", tag);
}
