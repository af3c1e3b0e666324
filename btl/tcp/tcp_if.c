/*
 * btl tcp: which IPv4 interfaces to listen on, and in which order to try a
 * peer's addresses.
 *
 * btl_tcp_if_include / btl_tcp_if_exclude are comma-separated lists of
 * interface names ("eth0") and IPv4 subnets ("10.1.0.0/16", a bare address
 * meaning /32).  With include, exactly the matching interfaces are used
 * (loopback too, if it matches).  Otherwise every interface that is up and
 * not excluded is used, except loopback, which is added only when the job
 * runs on one node or nothing else is left.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct if_rule {
    bool cidr;
    bool used;                     /* matched some interface */
    char text[64];
    uint32_t net, mask;            /* host byte order */
} if_rule_t;

#define IF_MAX_RULES 32

static uint32_t prefix_mask(int prefix)
{
    return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

static int mask_prefix(uint32_t mask)
{
    int p = 0;
    while (p < 32 && (mask & (0x80000000u >> p)))
        p++;
    return p;
}

int btl_tcp_if_discover(btl_tcp_if_t *ifs, int max)
{
    struct ifaddrs *list, *a;
    int n = 0;
    if (getifaddrs(&list) != 0)
        return 0;
    for (a = list; a && n < max; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP))
            continue;
        btl_tcp_if_t *f = &ifs[n++];
        memset(f, 0, sizeof(*f));
        snprintf(f->name, sizeof(f->name), "%s", a->ifa_name);
        f->addr = ntohl(((const struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr);
        f->prefix = a->ifa_netmask ? (uint8_t)mask_prefix(ntohl(
                        ((const struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr)) : 32;
        f->loopback = (a->ifa_flags & IFF_LOOPBACK) || (f->addr >> 24) == 127;
    }
    freeifaddrs(list);
    return n;
}

/* Parse one list entry; false (after a warning) when it is malformed. */
static bool parse_rule(const char *tok, size_t len, if_rule_t *r, const char *param)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->text, sizeof(r->text), "%.*s", (int)len, tok);
    bool digits = len > 0 && tok[0] >= '0' && tok[0] <= '9';
    if (!memchr(tok, '/', len) && !digits)
        return true;               /* an interface name */
    char addr[64];
    int prefix = 32;
    const char *slash = memchr(tok, '/', len);
    size_t alen = slash ? (size_t)(slash - tok) : len;
    struct in_addr in;
    char *end = NULL;
    snprintf(addr, sizeof(addr), "%.*s", (int)alen, tok);
    if (slash) {
        prefix = (int)strtol(slash + 1, &end, 10);
        if (end != tok + len || end == slash + 1 || prefix < 0 || prefix > 32)
            prefix = -1;
    }
    if (alen >= sizeof(addr) || prefix < 0 || inet_pton(AF_INET, addr, &in) != 1) {
        rail_warn("btl tcp: %s entry \"%s\" is neither an interface name nor an IPv4 subnet "
                  "(a.b.c.d/n); ignored", param, r->text);
        return false;
    }
    r->cidr = true;
    r->mask = prefix_mask(prefix);
    r->net = ntohl(in.s_addr) & r->mask;
    return true;
}

static int parse_list(const char *list, if_rule_t *rules, int max, const char *param)
{
    int n = 0;
    const char *s = list;
    while (s && *s && n < max) {
        while (*s == ' ' || *s == ',')
            s++;
        size_t len = strcspn(s, ", ");
        if (len && parse_rule(s, len, &rules[n], param))
            n++;
        s += len;
    }
    return n;
}

static bool rule_match(if_rule_t *r, const btl_tcp_if_t *f)
{
    bool m = r->cidr ? (f->addr & r->mask) == r->net : strcmp(r->text, f->name) == 0;
    r->used |= m;
    return m;
}

static bool rules_match(if_rule_t *rules, int n, const btl_tcp_if_t *f)
{
    bool m = false;
    for (int i = 0; i < n; i++)
        m |= rule_match(&rules[i], f);
    return m;
}

static void warn_unused(const if_rule_t *rules, int n, const char *param)
{
    for (int i = 0; i < n; i++)
        if (!rules[i].used)
            rail_warn("btl tcp: %s entry \"%s\" matches no IPv4 interface that is up", param,
                      rules[i].text);
}

int btl_tcp_if_select(const btl_tcp_if_t *all, int n, const char *include, const char *exclude,
                      bool single_node, btl_tcp_if_t *out, int max)
{
    if_rule_t rules[IF_MAX_RULES];
    int k = 0;
    if (include && include[0]) {
        if (exclude && exclude[0])
            rail_warn("btl tcp: both btl_tcp_if_include and btl_tcp_if_exclude are set; "
                      "using btl_tcp_if_include only");
        int nr = parse_list(include, rules, IF_MAX_RULES, "btl_tcp_if_include");
        for (int i = 0; i < n && k < max; i++)
            if (rules_match(rules, nr, &all[i]))
                out[k++] = all[i];
        warn_unused(rules, nr, "btl_tcp_if_include");
        return k;
    }
    int nr = parse_list(exclude, rules, IF_MAX_RULES, "btl_tcp_if_exclude");
    for (int i = 0; i < n && k < max; i++)
        if (!all[i].loopback && !rules_match(rules, nr, &all[i]))
            out[k++] = all[i];
    bool want_lo = single_node || k == 0;
    for (int i = 0; i < n && k < max && want_lo; i++)
        if (all[i].loopback && !rules_match(rules, nr, &all[i]))
            out[k++] = all[i];
    return k;
}

static bool same_subnet(uint32_t ip, const btl_tcp_if_t *mine, int n_mine)
{
    for (int i = 0; i < n_mine; i++) {
        uint32_t mask = prefix_mask(mine[i].prefix);
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
 * container bridge present on every node) cannot be reached there. */
static int addr_class(const btl_tcp_card_addr_t *a, bool same_node, const btl_tcp_if_t *mine,
                      int n_mine)
{
    uint32_t ip = ntohl(a->ip);
    if (a->ip == 0 || a->port == 0)
        return -1;
    if (a->flags & BTL_TCP_ADDR_LOOPBACK)
        return same_node ? 0 : -1;
    if (!same_node && is_mine(ip, mine, n_mine))
        return -1;
    return same_subnet(ip, mine, n_mine) ? 1 : 2;
}

int btl_tcp_if_order_peer(const btl_tcp_card_t *card, bool same_node, const btl_tcp_if_t *mine,
                          int n_mine, struct sockaddr_in *out, int max)
{
    int k = 0;
    int n = RAIL_MIN((int)card->n_addrs, BTL_TCP_MAX_ADDRS);
    for (int cls = 0; cls <= 2; cls++)
        for (int i = 0; i < n && k < max; i++) {
            if (addr_class(&card->addrs[i], same_node, mine, n_mine) != cls)
                continue;
            memset(&out[k], 0, sizeof(out[k]));
            out[k].sin_family = AF_INET;
            out[k].sin_addr.s_addr = card->addrs[i].ip;
            out[k].sin_port = card->addrs[i].port;
            k++;
        }
    return k;
}
