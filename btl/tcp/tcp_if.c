/*
 * btl tcp: which IPv4 interfaces to listen on, and in which order to try a
 * peer's addresses.
 *
 * btl_tcp_if_include / btl_tcp_if_exclude (else btl_if_include /
 * btl_if_exclude) are comma-separated lists of interface names ("eth0")
 * and IPv4 subnets ("10.1.0.0/16", a bare address meaning /32).  With
 * include, exactly the matching interfaces are used (loopback too, if it
 * matches).  Otherwise every interface that is up and not excluded is
 * used, except the frontend's (rte_if_include) and loopback, which is
 * added only when the job runs on one node or nothing else is left.  Each
 * gets its rail (btl/btl_rail.h); a peer's addresses on this process's
 * rail are tried first.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"
#include "btl/btl_rail.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int btl_tcp_if_discover(btl_tcp_if_t *ifs, int max)
{
    return rail_netif_discover(ifs, max);
}

int btl_tcp_if_select(const btl_tcp_if_t *all, int n, const char *include, const char *exclude,
                      bool single_node, btl_tcp_if_t *out, int max)
{
    return btl_rail_select(all, n, include, exclude, single_node, out, max, "btl tcp");
}

static bool same_subnet(uint32_t ip, const btl_tcp_if_t *mine, int n_mine)
{
    for (int i = 0; i < n_mine; i++) {
        uint32_t mask = rail_netif_prefix_mask(mine[i].prefix);
        if (!mine[i].loopback && (ip & mask) == (mine[i].addr & mask))
            return true;
    }
    return false;
}

static bool is_mine(uint32_t ip, const btl_tcp_if_t *mine, int n_mine)
{
    for (int i = 0; i < n_mine; i++)
        if (mine[i].addr == ip)
            return true;
    return false;
}

/* Preference class of a peer's address (lower first), -1: unusable.  A
 * peer on another node that shows an address we have ourselves (a
 * container bridge present on every node) cannot be reached there.  On
 * our subnet, the addresses of my_rail come first (rail-aligned). */
static int addr_class(const btl_tcp_card_addr_t *a, bool same_node, const btl_tcp_if_t *mine,
                      int n_mine, int my_rail)
{
    uint32_t ip = ntohl(a->ip);
    if (a->ip == 0 || a->port == 0)
        return -1;
    if (a->flags & BTL_TCP_ADDR_LOOPBACK)
        return same_node ? 0 : -1;
    if (!same_node && is_mine(ip, mine, n_mine))
        return -1;
    if (!same_subnet(ip, mine, n_mine))
        return 3;
    return my_rail >= 0 && a->rail == my_rail ? 1 : 2;
}

int btl_tcp_if_order_peer_rail(const btl_tcp_card_t *card, bool same_node,
                               const btl_tcp_if_t *mine, int n_mine, int my_rail,
                               struct sockaddr_in *out, int8_t *rails, int max)
{
    int k = 0;
    int n = RAIL_MIN((int)card->n_addrs, BTL_TCP_MAX_ADDRS);
    for (int cls = 0; cls <= 3; cls++)
        for (int i = 0; i < n && k < max; i++) {
            if (addr_class(&card->addrs[i], same_node, mine, n_mine, my_rail) != cls)
                continue;
            memset(&out[k], 0, sizeof(out[k]));
            out[k].sin_family = AF_INET;
            out[k].sin_addr.s_addr = card->addrs[i].ip;
            out[k].sin_port = card->addrs[i].port;
            if (rails)
                rails[k] = card->addrs[i].rail;
            k++;
        }
    return k;
}

int btl_tcp_if_order_peer(const btl_tcp_card_t *card, bool same_node, const btl_tcp_if_t *mine,
                          int n_mine, struct sockaddr_in *out, int max)
{
    return btl_tcp_if_order_peer_rail(card, same_node, mine, n_mine, -1, out, NULL, max);
}

int btl_tcp_if_backend(btl_tcp_module_t *m, bool single_node)
{
    char why[160], desc[1024];
    int k = btl_rail_backend(btl_tcp_params.if_include, btl_tcp_params.if_exclude, single_node,
                             m->ifs, BTL_TCP_MAX_ADDRS, &m->n_rails, "btl tcp");
    m->my_rail = btl_rail_choose(m->ifs, k, m->n_rails, rte_info.local_rank, why, sizeof(why));
    btl_rail_describe(m->ifs, k, m->my_rail, desc, sizeof(desc));
    RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: %d rail(s), this process on rail %d (%s)%s%s",
                 m->n_rails, m->my_rail, why, desc[0] ? ":\n" : "", desc);
    return k;
}
