/*
 * Network interfaces of this host, and lists that choose among them.
 *
 * Used by the launcher (rte_if_include: the frontend), btl tcp and the
 * rails of the btl layer (btl_if_include, btl_rails: the backend).  A list
 * is comma-separated interface names ("eth0") and IPv4 subnets
 * ("10.1.0.0/16"; a bare address means /32).  Nothing here logs: a caller
 * reads what did not parse or match from the rule list and says so itself
 * (the launcher has no rail_warn).
 */
#ifndef BASE_NETIF_H
#define BASE_NETIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One IPv4 address of an interface that is up. */
typedef struct rail_netif {
    char name[32];
    uint32_t addr;                 /* host byte order */
    uint8_t prefix;
    bool loopback;
    bool running;                  /* IFF_RUNNING: the link has carrier */
    int rail;                      /* rail index (btl/btl_rail.h); -1: none */
    int speed_mbps;                /* /sys/class/net/<name>/speed; 0: unknown */
    int local;                     /* near this process's cores: 1, 0, -1 unknown (no PCI) */
} rail_netif_t;

#define RAIL_NETIF_MAX 64
#define RAIL_NETIF_MAX_RULES 32
#define RAIL_NETIF_MIN(a, b) ((a) < (b) ? (a) : (b))

typedef struct rail_netif_rule {
    bool cidr;
    bool used;                     /* matched some interface */
    char text[64];
    uint32_t net, mask;            /* host byte order */
} rail_netif_rule_t;

typedef struct rail_netif_rules {
    int n;
    rail_netif_rule_t r[RAIL_NETIF_MAX_RULES];
    int n_bad;                     /* entries that are neither a name nor a subnet */
    char bad[256];                 /* those entries, comma-separated */
} rail_netif_rules_t;

/* The IPv4 addresses of the interfaces that are up, with their link
 * speed; rail -1, local -1.  Returns how many were put in ifs. */
int rail_netif_discover(rail_netif_t *ifs, int max);

/* Parse a list (NULL or "" gives none). */
void rail_netif_rules_parse(const char *list, rail_netif_rules_t *rules);

/* Index of the first rule f matches (marking every rule it matches as
 * used), or -1. */
int rail_netif_rules_match(rail_netif_rules_t *rules, const rail_netif_t *f);

/* Entries that matched no interface, comma-separated into buf ("" if none). */
void rail_netif_rules_unused(const rail_netif_rules_t *rules, char *buf, size_t len);

uint32_t rail_netif_prefix_mask(int prefix);

#endif
