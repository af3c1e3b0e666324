/*
 * Hosts that share one kernel.  Network-namespace "hosts" on one machine
 * (the multi-host tests, containers) share its CPUs and its kernel: the
 * kernel's network work for traffic between them runs on the CPUs their
 * ranks occupy.  So the ranks of all the job's hosts that share this
 * process's kernel count together when deciding whether the node is
 * oversubscribed.  A kernel is known by its boot id
 * (/proc/sys/kernel/random/boot_id), which every namespace and container
 * of one boot reports alike and two machines never do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rail.h"
#include "runtime/rte.h"

#define RTE_BOOT_KEY "rte.boot_id"
#define RTE_BOOT_LEN 36

static char rte_boot_id[RTE_BOOT_LEN + 1];

static bool rte_read_boot_id(void)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return false;
    bool ok = fgets(rte_boot_id, sizeof rte_boot_id, f) != NULL &&
              strlen(rte_boot_id) == RTE_BOOT_LEN;
    fclose(f);
    return ok;
}

int rte_kernel_put(void)
{
    rte_info.kernel_size = rte_info.local_size;
    if (rte_info.singleton || rte_info.num_nodes <= 1 || !rte_read_boot_id())
        return MPI_SUCCESS;
    return rte_modex_put(RTE_BOOT_KEY, rte_boot_id, RTE_BOOT_LEN);
}

/* Whether rank runs on this kernel (0/1), or -1 when it published no boot id. */
static int rte_same_kernel(int rank)
{
    void *data = NULL;
    size_t len = 0;
    if (rte_modex_get(rank, RTE_BOOT_KEY, &data, &len) != MPI_SUCCESS)
        return -1;
    int same = len == RTE_BOOT_LEN && memcmp(data, rte_boot_id, RTE_BOOT_LEN) == 0;
    free(data);
    return same;
}

int rte_kernel_update(void)
{
    if (rte_info.singleton || rte_info.num_nodes <= 1 || rte_boot_id[0] == '\0')
        return MPI_SUCCESS;
    /* One lookup per node: its first rank speaks for it. */
    signed char *node_same = malloc((size_t)rte_info.num_nodes);
    if (!node_same)
        return MPI_ERR_NO_MEM;
    memset(node_same, -2, (size_t)rte_info.num_nodes);
    int n = 0;
    for (int r = 0; r < rte_info.size; r++) {
        int node = rte_node_of(r);
        if (node == (int)rte_info.node_id) {
            n++;
            continue;
        }
        bool known = node >= 0 && node < rte_info.num_nodes;
        int same = known && node_same[node] != -2 ? node_same[node] : rte_same_kernel(r);
        if (known)
            node_same[node] = (signed char)same;
        n += same == 1;
    }
    free(node_same);
    rte_info.kernel_size = RAIL_MAX(n, rte_info.local_size);
    if (rte_info.node_cpus > 0 && rte_info.kernel_size > rte_info.node_cpus)
        rte_info.oversubscribed = true;
    return MPI_SUCCESS;
}
