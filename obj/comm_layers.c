/*
 * The layers above that keep state per communicator (the pml, the
 * collective framework) and the point-to-point messages of the object
 * layer's own exchanges (see obj/comm.h).  Registered by those layers when
 * they come up; the object layer reaches them only through these.
 */
#include "obj/comm_int.h"

#define MAX_LAYERS 4

static const obj_comm_layer_t *layers[MAX_LAYERS];
static int n_layers;
static const obj_comm_p2p_t *p2p;

int obj_comm_layer_add(const obj_comm_layer_t *layer)
{
    for (int i = 0; i < n_layers; i++)
        if (layers[i] == layer)
            return MPI_SUCCESS;
    if (n_layers == MAX_LAYERS)
        return obj_errf(MPI_ERR_INTERN, "too many communicator layers (%s)", layer->name);
    layers[n_layers++] = layer;
    return MPI_SUCCESS;
}

void obj_comm_layers_clear(void)
{
    n_layers = 0;
    p2p = NULL;
}

static bool takes(const obj_comm_layer_t *l, const obj_comm_t *c)
{
    return !(c->flags & l->skip_flags);
}

/* Detach layers[0 .. n-1] from c, last first. */
static void detach_first(obj_comm_t *c, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (takes(layers[i], c))
            layers[i]->detach(c);
}

int comm_layers_attach(obj_comm_t *c)
{
    for (int i = 0; i < n_layers; i++) {
        if (!takes(layers[i], c))
            continue;
        int rc = layers[i]->attach(c);
        if (rc != MPI_SUCCESS) {
            detach_first(c, i);
            return rc;
        }
    }
    c->active = true;
    return MPI_SUCCESS;
}

void comm_layers_detach(obj_comm_t *c)
{
    if (!c->active)
        return;
    detach_first(c, n_layers);
    c->active = false;
}

void obj_comm_set_p2p(const obj_comm_p2p_t *ops)
{
    p2p = ops;
}

const obj_comm_p2p_t *comm_p2p(void)
{
    return p2p;
}
