/* Network interfaces of this host and lists that choose among them (netif.h). */
#include "base/netif.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t rail_netif_prefix_mask(int prefix)
{
    return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

static int netif_mask_prefix(uint32_t mask)
{
    int p = 0;
    while (p < 32 && (mask & (0x80000000u >> p)))
        p++;
    return p;
}

/* Link speed in Mb/s from sysfs; 0 when unknown (down, virtual without one). */
static int netif_speed(const char *name)
{
    char path[128];
    int v = 0;
    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    if (fscanf(f, "%d", &v) != 1 || v < 0)
        v = 0;
    fclose(f);
    return v;
}

int rail_netif_discover(rail_netif_t *ifs, int max)
{
    struct ifaddrs *list, *a;
    int n = 0;
    if (getifaddrs(&list) != 0)
        return 0;
    for (a = list; a && n < max; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP))
            continue;
        rail_netif_t *f = &ifs[n++];
        memset(f, 0, sizeof(*f));
        snprintf(f->name, sizeof(f->name), "%s", a->ifa_name);
        f->addr = ntohl(((const struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr);
        f->prefix = a->ifa_netmask ? (uint8_t)netif_mask_prefix(ntohl(
                        ((const struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr)) : 32;
        f->loopback = (a->ifa_flags & IFF_LOOPBACK) || (f->addr >> 24) == 127;
        f->running = (a->ifa_flags & IFF_RUNNING) != 0;
        f->rail = -1;
        f->local = -1;
        f->speed_mbps = f->loopback ? 0 : netif_speed(f->name);
    }
    freeifaddrs(list);
    return n;
}

/* Parse one entry; false when it is neither a name nor a subnet. */
static bool netif_parse_rule(const char *tok, size_t len, rail_netif_rule_t *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->text, sizeof(r->text), "%.*s", (int)len, tok);
    const char *slash = memchr(tok, '/', len);
    if (!slash && !(tok[0] >= '0' && tok[0] <= '9'))
        return true;               /* an interface name */
    char addr[64];
    int prefix = 32;
    size_t alen = slash ? (size_t)(slash - tok) : len;
    struct in_addr in;
    char *end = NULL;
    snprintf(addr, sizeof(addr), "%.*s", (int)RAIL_NETIF_MIN(alen, sizeof(addr) - 1), tok);
    if (slash) {
        prefix = (int)strtol(slash + 1, &end, 10);
        if (end != tok + len || end == slash + 1 || prefix < 0 || prefix > 32)
            prefix = -1;
    }
    if (alen >= sizeof(addr) || prefix < 0 || inet_pton(AF_INET, addr, &in) != 1)
        return false;
    r->cidr = true;
    r->mask = rail_netif_prefix_mask(prefix);
    r->net = ntohl(in.s_addr) & r->mask;
    return true;
}

void rail_netif_rules_parse(const char *list, rail_netif_rules_t *rules)
{
    const char *s = list;
    memset(rules, 0, sizeof(*rules));
    while (s && *s) {
        while (*s == ' ' || *s == ',')
            s++;
        size_t len = strcspn(s, ", ");
        if (len && rules->n < RAIL_NETIF_MAX_RULES) {
            if (netif_parse_rule(s, len, &rules->r[rules->n])) {
                rules->n++;
            } else {
                size_t l = strlen(rules->bad);
                snprintf(rules->bad + l, sizeof(rules->bad) - l, "%s%.*s", l ? "," : "",
                         (int)len, s);
                rules->n_bad++;
            }
        }
        s += len;
    }
}

int rail_netif_rules_match(rail_netif_rules_t *rules, const rail_netif_t *f)
{
    int first = -1;
    for (int i = 0; i < rules->n; i++) {
        rail_netif_rule_t *r = &rules->r[i];
        bool m = r->cidr ? (f->addr & r->mask) == r->net : strcmp(r->text, f->name) == 0;
        r->used |= m;
        if (m && first < 0)
            first = i;
    }
    return first;
}

void rail_netif_rules_unused(const rail_netif_rules_t *rules, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < rules->n; i++) {
        size_t l = strlen(buf);
        if (!rules->r[i].used)
            snprintf(buf + l, len - l, "%s%s", l ? "," : "", rules->r[i].text);
    }
}
