/* coll han: the component (parameters, which communicators, the node map)
 * and the lazy creation of the sub-communicators. */
#include "coll/han/coll_han.h"
#include "base/log.h"
#include "base/param.h"
#include "obj/err.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

coll_han_params_t coll_han_params;

/* Set while this thread builds han's sub-communicators. */
static __thread bool han_building;

static int han_register_params(void)
{
    coll_han_params_t *p = &coll_han_params;
    rail_param_register_int("coll_han_priority", 55,
                            "Priority of the han collective component (hierarchical collectives "
                            "of communicators spanning several nodes; negative: do not use)",
                            RAIL_PARAM_LEVEL_TUNER, &p->priority);
    rail_param_register_int("coll_han_split_nodes", 0,
                            "Testing: treat the processes of each node as this many nodes (the "
                            "i-th process of a node goes to part i modulo this), so that han "
                            "runs on one machine (0: real nodes)",
                            RAIL_PARAM_LEVEL_DEV, &p->split_nodes);
    int rc = rail_param_register_int("coll_han_verbose", 0,
                                     "Verbosity of coll han (1: the node structure of each "
                                     "communicator when its sub-communicators are made; 3: "
                                     "why it declines a communicator)",
                                     RAIL_PARAM_LEVEL_USER, &p->verbose);
    return rc == MPI_SUCCESS ? rail_param_set_flags("coll_han_verbose", RAIL_PARAM_F_DYNAMIC) : rc;
}

/* ------------------------------------------------------------ node map */

static void han_free_map(coll_han_module_t *m)
{
    free(m->node_of);
    free(m->lrank_of);
    free(m->node_size);
    free(m->leader);
}

/* Node of every rank, numbered by first appearance in rank order (so node
 * i's leader, its lowest rank, is rank i of up); false when out of memory
 * or a node is unknown. */
static bool han_map(coll_han_module_t *m, const obj_comm_t *comm)
{
    int n = comm->size, k = coll_han_params.split_nodes;
    long *id = malloc((size_t)n * sizeof(long));
    long *seen = malloc((size_t)n * sizeof(long));
    int *seen_count = calloc((size_t)n, sizeof(int));
    m->node_of = malloc((size_t)n * sizeof(int));
    m->lrank_of = malloc((size_t)n * sizeof(int));
    m->node_size = calloc((size_t)n, sizeof(int));
    m->leader = malloc((size_t)n * sizeof(int));
    bool ok = id && seen && seen_count && m->node_of && m->lrank_of && m->node_size && m->leader;
    int n_real = 0;
    /* real node of each rank, and with split_nodes its part */
    for (int r = 0; ok && r < n; r++) {
        long real = rte_node_of(obj_group_world_rank(comm->group, r));
        ok = real >= 0;
        int j = 0;
        while (j < n_real && seen[j] != real)
            j++;
        if (j == n_real)
            seen[n_real++] = real;
        id[r] = k > 0 ? real * k + seen_count[j]++ % k : real;
    }
    m->n_nodes = 0;
    for (int r = 0; ok && r < n; r++) {
        int j = 0;
        while (j < m->n_nodes && id[m->leader[j]] != id[r])
            j++;
        if (j == m->n_nodes)
            m->leader[m->n_nodes++] = r;
        m->node_of[r] = j;
        m->lrank_of[r] = m->node_size[j]++;
    }
    free(id);
    free(seen);
    free(seen_count);
    return ok;
}

/* ------------------------------------------------------------ module */

static void han_release(coll_module_t *module, obj_comm_t *comm)
{
    (void)comm;
    coll_han_module_t *m = (coll_han_module_t *)module;
    if (m->low)
        obj_comm_release(m->low);
    if (m->up)
        obj_comm_release(m->up);
    han_free_map(m);
    free(m);
}

static coll_module_t *han_decline(const obj_comm_t *comm, const char *why)
{
    RAIL_VERBOSE(coll_han_verbosity(), 3, "coll han: not for communicator %s (%s)",
                 comm->name[0] ? comm->name : "(unnamed)", why);
    return NULL;
}

static coll_module_t *han_comm_query(obj_comm_t *comm, int *priority)
{
    if (han_building)
        return han_decline(comm, "one of han's own sub-communicators");
    if (comm->is_inter || comm->size < 3)
        return han_decline(comm, comm->is_inter ? "intercommunicator" : "fewer than 3 processes");
    coll_han_module_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    if (!han_map(m, comm) || m->n_nodes < 2 || m->n_nodes == comm->size) {
        const char *why = m->n_nodes < 2 ? "a single node" : "one process per node";
        han_free_map(m);
        free(m);
        return han_decline(comm, why);
    }
    m->super = (coll_module_t){
        .component = &coll_han_component,
        .fns = {
            .barrier = coll_han_barrier,
            .bcast = coll_han_bcast,
            .reduce = coll_han_reduce,
            .allreduce = coll_han_allreduce,
            .allgather = coll_han_allgather,
        },
        .release = han_release,
    };
    m->n = comm->size;
    m->my_node = m->node_of[comm->rank];
    m->is_leader = m->leader[m->my_node] == comm->rank;
    *priority = coll_han_params.priority;
    return &m->super;
}

const coll_component_t coll_han_component = {
    .name = "han",
    .register_params = han_register_params,
    .comm_query = han_comm_query,
};

/* ------------------------------------------------------------ sub-communicators */

static void han_report(coll_han_module_t *m, obj_comm_t *comm)
{
    char sizes[256];
    size_t len = 0;
    sizes[0] = '\0';
    for (int i = 0; i < m->n_nodes && len < sizeof(sizes) - 8; i++)
        len += (size_t)snprintf(sizes + len, sizeof(sizes) - len, "%s%d", i ? "," : "",
                                m->node_size[i]);
    rail_info("coll han: communicator %s (context %u, %d processes): %d nodes of %s "
              "processes; node-local collectives: %s, leaders: %s",
              comm->name[0] ? comm->name : "(unnamed)", comm->context_id, m->n, m->n_nodes, sizes,
              m->low->coll && m->low->coll->mods[COLL_OP_bcast]
                  ? m->low->coll->mods[COLL_OP_bcast]->component->name : "?",
              m->up && m->up->coll && m->up->coll->mods[COLL_OP_bcast]
                  ? m->up->coll->mods[COLL_OP_bcast]->component->name : "?");
}

int coll_han_setup(coll_han_module_t *m, obj_comm_t *comm)
{
    if (m->ready)
        return MPI_SUCCESS;
    if (m->setup_rc != MPI_SUCCESS)
        return m->setup_rc;
    han_building = true;
    int rc = obj_comm_split(comm, m->my_node, comm->rank, &m->low);
    int rc2 = obj_comm_split(comm, m->is_leader ? 0 : MPI_UNDEFINED, comm->rank, &m->up);
    han_building = false;
    rc = rc != MPI_SUCCESS ? rc : rc2;
    if (rc == MPI_SUCCESS &&
        (!m->low || m->low->size != m->node_size[m->my_node] ||
         m->low->rank != m->lrank_of[comm->rank] ||
         (m->is_leader && (!m->up || m->up->size != m->n_nodes || m->up->rank != m->my_node))))
        rc = obj_errf(MPI_ERR_INTERN, "coll han: the sub-communicators do not match the node map");
    if (rc != MPI_SUCCESS) {
        m->setup_rc = rc;
        return rc;
    }
    m->ready = true;
    if (comm->rank == 0 && coll_han_verbosity() >= 1)
        han_report(m, comm);
    return MPI_SUCCESS;
}
