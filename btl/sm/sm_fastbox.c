/* Fast boxes: where each pair's ring lives (the protocol is in sm_fastbox.h). */
#include "btl/sm/sm_fastbox.h"

/* Index of sender's ring among receiver's rings (a process has no ring for itself). */
size_t btl_sm_fbox_slot(int sender, int receiver)
{
    return (size_t)(sender < receiver ? sender : sender - 1);
}

/* Point ep at our ring in the peer's segment and at the peer's ring in ours.
 * Each side uses the ring size its receiver chose. */
void btl_sm_fbox_setup(btl_sm_module_t *m, btl_endpoint_t *ep)
{
    const btl_sm_seg_hdr_t *ph = ep->hdr, *mh = m->hdr;
    size_t out_slot = btl_sm_fbox_slot(m->my_index, ep->index);
    size_t in_slot = btl_sm_fbox_slot(ep->index, m->my_index);

    if (ph->fbox_size && m->fbox_entry_max) {
        ep->fbox_out = (uint8_t *)ep->base + ph->fbox_ring_off + out_slot * ph->fbox_size;
        ep->out_consumed = (const uint64_t *)(ep->base + ph->fbox_ctrl_off +
                                              out_slot * RAIL_CACHELINE);
        ep->out_mask = ph->fbox_size - 1;
        ep->out_limit = ph->fbox_size;
        ep->out_max = RAIL_MIN(m->fbox_entry_max, ph->fbox_size / 2);
        btl_sm_populate(ep->fbox_out, ph->fbox_size);
    }
    if (mh->fbox_size) {
        ep->fbox_in = (uint8_t *)m->seg + mh->fbox_ring_off + in_slot * mh->fbox_size;
        ep->in_consumed = (uint64_t *)(m->seg + mh->fbox_ctrl_off + in_slot * RAIL_CACHELINE);
        ep->in_mask = mh->fbox_size - 1;
    }
}
