/*
 * btl verbs: which device, and which GID of its port, a process uses.
 * Pure functions of what the devices report, so that unit tests can give
 * them the tables of machines we do not have.
 */
#include "btl/verbs/verbs.h"
#include "btl/btl_rail.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

int btl_verbs_choose_device(const btl_verbs_devinfo_t *d, int n, const char *want)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (want && *want) {
            if (strcmp(d[i].name, want) == 0)
                return d[i].active ? i : -1;
            continue;
        }
        if (!d[i].active)
            continue;
        /* close (1) over unknown (-1) over far (0) */
        int rank_i = d[i].local == 1 ? 2 : d[i].local < 0 ? 1 : 0;
        int rank_b = best < 0 ? -1 : d[best].local == 1 ? 2 : d[best].local < 0 ? 1 : 0;
        if (rank_i > rank_b)
            best = i;
    }
    return best;
}

static bool gid_zero(const uint8_t *g)
{
    for (int i = 0; i < 16; i++)
        if (g[i])
            return false;
    return true;
}

static bool gid_ipv4(const uint8_t *g, uint32_t *addr)
{
    static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(g, pfx, 12) != 0)
        return false;
    *addr = (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 | (uint32_t)g[14] << 8 | g[15];
    return true;
}

/* "a.b.c.d/p" -> network and mask (host order). */
static bool parse_subnet(const char *s, uint32_t *net, uint32_t *mask)
{
    char ip[32];
    int p = 32;
    struct in_addr a;
    if (sscanf(s, "%31[0-9.]/%d", ip, &p) < 1 || p < 0 || p > 32 || inet_pton(AF_INET, ip, &a) != 1)
        return false;
    *mask = p ? ~(uint32_t)0 << (32 - p) : 0;
    *net = ntohl(a.s_addr) & *mask;
    return true;
}

int btl_verbs_choose_gid(const struct ibv_gid_entry *g, int n, int link_layer, const char *subnet,
                         bool *bad)
{
    uint32_t net = 0, mask = 0;
    bool filter = subnet && *subnet;
    *bad = filter && !parse_subnet(subnet, &net, &mask);
    if (*bad)
        return -1;
    if (link_layer != IBV_LINK_LAYER_ETHERNET)
        return n > 0 ? 0 : -1;
    int best = -1, best_score = -1;
    for (int i = 0; i < n; i++) {
        uint32_t a;
        bool v4 = gid_ipv4(g[i].gid.raw, &a);
        if (gid_zero(g[i].gid.raw) || g[i].gid_type == IBV_GID_TYPE_IB ||
            (filter && (!v4 || (a & mask) != net)))
            continue;
        int score = (g[i].gid_type == IBV_GID_TYPE_ROCE_V2 ? 4 : 0) + (v4 ? 2 : 0);
        if (score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}

int btl_verbs_device_local(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/local_cpulist", name);
    return btl_rail_sysfs_local(path);
}
