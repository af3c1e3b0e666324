/* Rails: backend interfaces, their rails and this process's rail (btl_rail.h). */
#include "btl/btl_rail.h"
#include "base/log.h"
#include "base/param.h"
#include "base/pvar.h"
#include "base/rail.h"
#include "btl/btl.h"

#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *btl_rail_if_include;
const char *btl_rail_if_exclude;
const char *btl_rail_names;
uint64_t btl_rail_cross;

int btl_rail_register_params(void)
{
    const int U = RAIL_PARAM_LEVEL_USER;
    int rc = MPI_SUCCESS;
    static const rail_pvar_counter_t pvars[] = {
        {"btl_rail_cross_rail", "Connections this process made from its rail to another rail "
         "of a peer host, because the peer has no interface on this process's rail",
         &btl_rail_cross},
    };
    RAIL_CHECK(rail_param_register_string("btl_if_include", "", NULL,
        "Backend interfaces every network btl uses for MPI data: comma-separated names "
        "(eth1) and IPv4 subnets (10.1.0.0/24); empty: every interface that is up but the "
        "frontend's (rte_if_include). A btl's own list (btl_tcp_if_include) wins", U,
        &btl_rail_if_include));
    RAIL_CHECK(rail_param_register_string("btl_if_exclude", "", NULL,
        "Backend interfaces no network btl uses (names and subnets, as btl_if_include)", U,
        &btl_rail_if_exclude));
    RAIL_CHECK(rail_param_register_string("btl_rails", "", NULL,
        "The rails, in order: entry i (an interface name or a per-rail subnet, e.g. "
        "\"eth1,eth2\" or \"10.1.0.0/24,10.2.0.0/24\") names rail i, and backend interfaces "
        "it does not name are not used; empty: rail i is the i-th backend interface by name "
        "(principle: rail-optimised clusters cable NIC i of every host to rail i)", U,
        &btl_rail_names));
    RAIL_CHECK(rail_pvar_register_counters(pvars, RAIL_ARRAY_SIZE(pvars)));
fail:
    return rc;
}

/* Warn about the entries of a list that did not parse or matched nothing. */
static void btl_rail_warn_rules(const rail_netif_rules_t *rules, const char *param,
                                const char *who)
{
    char unused[512];
    if (rules->n_bad)
        rail_warn("%s: %s entries \"%s\" are neither interface names nor IPv4 subnets "
                  "(a.b.c.d/n); ignored", who, param, rules->bad);
    rail_netif_rules_unused(rules, unused, sizeof(unused));
    if (unused[0])
        rail_warn("%s: %s entries \"%s\" match no IPv4 interface that is up", who,
                  param, unused);
}

int btl_rail_select(const rail_netif_t *all, int n, const char *include, const char *exclude,
                    bool single_node, rail_netif_t *out, int max, const char *who)
{
    rail_netif_rules_t rules;
    int k = 0;
    if (include && include[0]) {
        if (exclude && exclude[0])
            rail_warn("%s: both an include and an exclude list are set; "
                      "using the include list only", who);
        rail_netif_rules_parse(include, &rules);
        for (int i = 0; i < n && k < max; i++)
            if (rail_netif_rules_match(&rules, &all[i]) >= 0)
                out[k++] = all[i];
        btl_rail_warn_rules(&rules, "the include list", who);
        return k;
    }
    rail_netif_rules_parse(exclude, &rules);
    if (rules.n_bad)
        btl_rail_warn_rules(&rules, "the exclude list", who);
    for (int i = 0; i < n && k < max; i++)
        if (!all[i].loopback && rail_netif_rules_match(&rules, &all[i]) < 0)
            out[k++] = all[i];
    bool want_lo = single_node || k == 0;
    for (int i = 0; i < n && k < max && want_lo; i++)
        if (all[i].loopback && rail_netif_rules_match(&rules, &all[i]) < 0)
            out[k++] = all[i];
    return k;
}

/* Leave out backend links without carrier, naming them. */
static int btl_rail_drop_not_running(rail_netif_t *ifs, int n, const char *who)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!ifs[i].loopback && !ifs[i].running) {
            rail_warn("%s: interface %s is up but its link is down (no carrier) at "
                      "start-up; not used", who, ifs[i].name);
            continue;
        }
        ifs[k++] = ifs[i];
    }
    return k;
}

/* The value of rte_if_include, "" when the runtime did not register it. */
static const char *btl_rail_frontend(char *buf, size_t len)
{
    const rail_param_t *p = rail_param_find("rte_if_include");
    buf[0] = '\0';
    if (p)
        rail_param_value_string(p, buf, len);
    return buf;
}

int btl_rail_drop_frontend(rail_netif_t *ifs, int n, bool single_node, const char *who)
{
    char fe[256], names[256] = "";
    rail_netif_rules_t rules;
    int k = 0, dropped = 0;
    if (!btl_rail_frontend(fe, sizeof(fe))[0])
        return n;
    rail_netif_rules_parse(fe, &rules);
    bool other = false;
    for (int i = 0; i < n; i++)
        other |= !ifs[i].loopback && rail_netif_rules_match(&rules, &ifs[i]) < 0;
    if (!other && !single_node) {
        for (int i = 0; i < n; i++)
            if (!ifs[i].loopback)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                         names[0] ? "," : "", ifs[i].name);
        if (names[0])
            rail_warn("%s: no backend interface is up, MPI data goes over the frontend (%s, "
                      "rte_if_include=%s)", who, names, fe);
        return n;
    }
    for (int i = 0; i < n; i++) {
        if (!ifs[i].loopback && rail_netif_rules_match(&rules, &ifs[i]) >= 0) {
            dropped++;
            continue;
        }
        ifs[k++] = ifs[i];
    }
    RAIL_VERBOSE(btl_verbose, 1, "%s: %d frontend interface(s) (rte_if_include=%s) "
                 "left out of the backend", who, dropped, fe);
    return k;
}

static int btl_rail_cmp_name(const void *a, const void *b)
{
    const rail_netif_t *x = a, *y = b;
    if (x->loopback != y->loopback)
        return x->loopback ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Rails from btl_rails: entry i is rail i; interfaces it does not name go. */
static int btl_rail_assign_named(rail_netif_t *ifs, int n, int *n_rails, const char *who)
{
    rail_netif_rules_t rules;
    char unused[512];
    int k = 0;
    rail_netif_rules_parse(btl_rail_names, &rules);
    if (rules.n_bad)
        rail_warn("%s: btl_rails entries \"%s\" are neither interface names nor IPv4 subnets; "
                  "ignored", who, rules.bad);
    for (int i = 0; i < n; i++) {
        int r = ifs[i].loopback ? -1 : rail_netif_rules_match(&rules, &ifs[i]);
        if (!ifs[i].loopback && r < 0) {
            RAIL_VERBOSE(btl_verbose, 1, "%s: %s is on no rail of btl_rails=%s; not "
                         "used", who, ifs[i].name, btl_rail_names);
            continue;
        }
        ifs[k] = ifs[i];
        ifs[k++].rail = r;
    }
    rail_netif_rules_unused(&rules, unused, sizeof(unused));
    if (unused[0])
        rail_warn("%s: btl_rails entries \"%s\" match no backend interface that is up on this "
                  "host; those rails are missing here", who, unused);
    *n_rails = rules.n;
    return k;
}

int btl_rail_assign(rail_netif_t *ifs, int n, int *n_rails, const char *who)
{
    int r = 0;
    if (btl_rail_names && btl_rail_names[0])
        return btl_rail_assign_named(ifs, n, n_rails, who);
    qsort(ifs, (size_t)n, sizeof(*ifs), btl_rail_cmp_name);
    for (int i = 0; i < n; i++)
        ifs[i].rail = ifs[i].loopback ? -1 : r++;
    *n_rails = r;
    return n;
}

int btl_rail_sysfs_local(const char *path)
{
    char list[4096];
    cpu_set_t mine;
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    bool got = fgets(list, sizeof(list), f) != NULL;
    fclose(f);
    if (!got || sched_getaffinity(0, sizeof(mine), &mine) != 0)
        return -1;
    hwloc_bitmap_t dev = hwloc_bitmap_alloc(), own = hwloc_bitmap_alloc();
    int local = -1;
    if (dev && own && hwloc_bitmap_list_sscanf(dev, list) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &mine))
                hwloc_bitmap_set(own, (unsigned)c);
        local = hwloc_bitmap_intersects(dev, own) ? 1 : 0;
    }
    hwloc_bitmap_free(dev);
    hwloc_bitmap_free(own);
    return local;
}

void btl_rail_locality(rail_netif_t *ifs, int n)
{
    char path[160];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/device/local_cpulist", ifs[i].name);
        ifs[i].local = ifs[i].loopback ? -1 : btl_rail_sysfs_local(path);
    }
}

int btl_rail_backend(const char *own_include, const char *own_exclude, bool single_node,
                     rail_netif_t *out, int max, int *n_rails, const char *who)
{
    rail_netif_t all[RAIL_NETIF_MAX];
    bool own = (own_include && own_include[0]) || (own_exclude && own_exclude[0]);
    const char *inc = own ? own_include : btl_rail_if_include;
    const char *exc = own ? own_exclude : btl_rail_if_exclude;
    int n = rail_netif_discover(all, RAIL_NETIF_MAX);
    int k = btl_rail_select(all, n, inc, exc, single_node, out, max, who);
    if (!inc || !inc[0])
        k = btl_rail_drop_frontend(out, k, single_node, who);
    k = btl_rail_drop_not_running(out, k, who);
    k = btl_rail_assign(out, k, n_rails, who);
    btl_rail_locality(out, k);
    return k;
}

int btl_rail_choose(const rail_netif_t *ifs, int n, int n_rails, int local_rank, char *why,
                    size_t len)
{
    int near[BTL_RAIL_MAX], n_near = 0;
    bool present[BTL_RAIL_MAX] = {false};
    int n_present = 0, list[BTL_RAIL_MAX];
    for (int i = 0; i < n; i++) {
        int r = ifs[i].rail;
        if (r < 0 || r >= BTL_RAIL_MAX || present[r])
            continue;
        present[r] = true;
        list[n_present++] = r;
        if (ifs[i].local == 1)
            near[n_near++] = r;
    }
    if (n_present == 0) {
        snprintf(why, len, "no rail interface");
        return -1;
    }
    local_rank = RAIL_MAX(local_rank, 0);
    if (n_near > 0) {
        snprintf(why, len, "its NIC is near this process's cores (hwloc), %d such rail(s)",
                 n_near);
        return near[local_rank % n_near];
    }
    snprintf(why, len, "local rank %d modulo %d rail(s) (no NIC locality known)", local_rank,
             n_present);
    (void)n_rails;
    return list[local_rank % n_present];
}

void btl_rail_check_peer(const char *peer_host, int peer_rails, const char *peer_names,
                         int n_rails, const rail_netif_t *ifs, int n)
{
    char mine[256] = "", id[320];
    if (peer_rails == n_rails)
        return;
    for (int i = 0; i < n; i++)
        if (ifs[i].rail >= 0)
            snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), "%s%s", mine[0] ? "," : "",
                     ifs[i].name);
    snprintf(id, sizeof(id), "btl_rail_uneven_%s", peer_host);
    rail_warn_once(id, "btl rails: uneven rails: host %s has %d rail(s) (%s), this host has %d "
                   "(%s); traffic to its missing rails goes cross-rail", peer_host, peer_rails,
                   peer_names, n_rails, mine);
}

void btl_rail_describe(const rail_netif_t *ifs, int n, int my_rail, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const rail_netif_t *f = &ifs[i];
        size_t l = strlen(buf);
        char speed[32] = "speed unknown";
        if (f->rail < 0)
            continue;
        if (f->speed_mbps)
            snprintf(speed, sizeof(speed), "%d Mb/s", f->speed_mbps);
        snprintf(buf + l, len - l, "  rail %d: %s %u.%u.%u.%u/%u, %s, %s%s\n", f->rail, f->name,
                 f->addr >> 24, (f->addr >> 16) & 255, (f->addr >> 8) & 255, f->addr & 255,
                 f->prefix, speed, f->local == 1 ? "near this process's cores" :
                 f->local == 0 ? "far from this process's cores" : "no PCI locality",
                 f->rail == my_rail ? " (this process's rail)" : "");
    }
}
