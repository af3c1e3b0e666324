/* osc am: the component (accepts every window), its parameters, and the
 * per-window state. */
#include <stdlib.h>
#include "base/param.h"
#include "obj/err.h"
#include "osc/am/osc_am.h"

size_t osc_am_chunk;
static int osc_am_priority;

int osc_am_register_params(void)
{
    int rc = MPI_SUCCESS;
    RAIL_CHECK(rail_param_register_size(
        "osc_am_chunk", 65536,
        "Largest data payload of one one-sided active message (bytes; the btl's send limit "
        "caps it too).  Default 64 KiB (principle: the btls' eager fragments are of that order, "
        "so a piece never needs a rendezvous)",
        RAIL_PARAM_LEVEL_TUNER, &osc_am_chunk));
    RAIL_CHECK(rail_param_register_int(
        "osc_am_priority", 10,
        "Priority of the active-message one-sided component (the highest that accepts a window "
        "serves it).  Default 10 (principle: the fallback for every window, below direct "
        "components)",
        RAIL_PARAM_LEVEL_TUNER, &osc_am_priority));
fail:
    return rc;
}

int osc_am_init(void)
{
    if (osc_am_chunk < 64)
        osc_am_chunk = 64;
    return osc_am_proto_init();
}

int osc_am_finalize(void)
{
    osc_am_proto_fini();
    return MPI_SUCCESS;
}

static int osc_am_query(osc_win_t *w)
{
    for (int i = 0; i < w->size; i++)
        if (!btl_for_peer || !btl_for_peer[w->world[i]].btl)
            return -1;
    return osc_am_priority;
}

#define OSC_AM_ARRAY(field, n) ((am->field = calloc((size_t)(n), sizeof *am->field)) != NULL)

static int osc_am_attach(osc_win_t *w)
{
    osc_am_t *am = calloc(1, sizeof *am);
    int n = w->size;
    if (!am)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a window");
    w->mod = am;
    w->ops = &osc_am_ops;
    am->w = w;
    am->lock_excl = -1;
    pthread_mutex_init(&am->acc_lock, NULL);
    if (!(OSC_AM_ARRAY(sent, n) && OSC_AM_ARRAY(acked, n) && OSC_AM_ARRAY(recv, n) &&
          OSC_AM_ARRAY(want_flush, n) && OSC_AM_ARRAY(want_unlock, n) &&
          OSC_AM_ARRAY(flush_cookie, n) && OSC_AM_ARRAY(unlock_cookie, n) &&
          OSC_AM_ARRAY(post_recv, n) && OSC_AM_ARRAY(post_used, n) &&
          OSC_AM_ARRAY(compl_recv, n) && OSC_AM_ARRAY(compl_used, n) &&
          OSC_AM_ARRAY(compl_need, n) && OSC_AM_ARRAY(bad, n))) {
        w->ops->free(w);
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a window of %d ranks", n);
    }
    for (int i = 0; i < n; i++)
        am->want_flush[i] = am->want_unlock[i] = -1;
    return MPI_SUCCESS;
}

const osc_component_t osc_am_component = {
    .name = "am",
    .query = osc_am_query,
    .attach = osc_am_attach,
};
