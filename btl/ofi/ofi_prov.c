/*
 * btl ofi: which provider to use.
 *
 * fi_getinfo lists every provider, domain and fabric that offers reliable
 * datagram endpoints with sends and RMA reads and writes.  Each is ranked:
 *   - not matching a non-empty btl_ofi_provider: declined;
 *   - hardware (verbs, efa, cxi, psm2, psm3, opx, ...): btl_ofi_priority,
 *     above btl tcp;
 *   - software (tcp, udp, sockets, shm, net, ...) named in btl_ofi_provider:
 *     btl_ofi_priority too;
 *   - software not named: btl_ofi_priority_soft (below btl tcp) when btl tcp
 *     is not selected, else declined: btl tcp carries that traffic itself.
 * The first candidate of the best rank (libfabric lists them in its own
 * order of preference) is used; with btl_verbose=1 every process says what
 * it uses and why each other candidate was declined.
 *
 * btl_ofi_provider is a list like FI_PROVIDER: entries separated by commas,
 * each a provider name or a layered one ("tcp;ofi_rxm").  A single name
 * matches every provider stack that contains it ("tcp" matches
 * "tcp;ofi_rxm").  The list is also allowed to use ';' between names that
 * are not a layered pair: every name is checked, and an unknown one is an
 * error naming the parameter.
 */
#include "btl/ofi/ofi.h"
#include "base/log.h"
#include "base/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const hw_provs[] = {"verbs", "efa", "cxi", "psm2", "psm3", "opx", "usnic",
                                       "gni", "bgq", "mlx", "lpp", "ucx", NULL};
static const char *const sw_provs[] = {"tcp", "udp", "sockets", "shm", "net", "sm2",
                                       "rstream", NULL};
/* utility providers layered over a core one */
static const char *const util_provs[] = {"ofi_rxm", "rxm", "ofi_rxd", "rxd", "ofi_mrail",
                                         "mrail", "lnx", "hook_debug", "ofi_hook_noop",
                                         "perf", NULL};

const char *btl_ofi_strerror(int rc)
{
    return fi_strerror(rc < 0 ? -rc : rc);
}

static bool in_set(const char *const *set, const char *s, size_t len)
{
    for (int i = 0; set[i]; i++)
        if (strlen(set[i]) == len && strncasecmp(set[i], s, len) == 0)
            return true;
    return false;
}

static bool known_name(const char *s, size_t len)
{
    return in_set(hw_provs, s, len) || in_set(sw_provs, s, len) || in_set(util_provs, s, len);
}

int btl_ofi_prov_check_names(const char *list)
{
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ",;");
        if (len > 0 && !known_name(s, len)) {
            rail_error("btl_ofi_provider=\"%s\": unknown libfabric provider \"%.*s\" (known: "
                       "verbs, efa, cxi, psm2, psm3, opx, tcp, udp, shm, sockets, net, "
                       "with ofi_rxm or ofi_rxd layered as in \"tcp;ofi_rxm\")",
                       list, (int)len, s);
            return MPI_ERR_ARG;
        }
        s += len;
        s += *s ? 1 : 0;
    }
    return MPI_SUCCESS;
}

/* Is the core provider of a stack ("tcp;ofi_rxm": tcp) a software one? */
static bool prov_is_soft(const char *prov)
{
    return in_set(sw_provs, prov, strcspn(prov, ";"));
}

/* Does prov ("tcp;ofi_rxm") contain the name s[0..len)? */
static bool prov_has(const char *prov, const char *s, size_t len)
{
    for (const char *p = prov; *p;) {
        size_t l = strcspn(p, ";");
        if (l == len && strncasecmp(p, s, len) == 0)
            return true;
        p += l;
        p += *p ? 1 : 0;
    }
    return false;
}

/* Does an entry of the list name prov?  Entries are comma-separated; an
 * entry is a layered stack ("tcp;ofi_rxm") matched whole, or one name. */
static bool prov_named(const char *list, const char *prov)
{
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ",");
        if (len == strlen(prov) && strncasecmp(s, prov, len) == 0)
            return true;
        /* every name of the entry in prov ("tcp;ofi_rxm" or "tcp") */
        bool all = len > 0;
        for (const char *p = s; p < s + len && all;) {
            size_t l = RAIL_MIN(strcspn(p, ";,"), (size_t)(s + len - p));
            all = prov_has(prov, p, l);
            p += l + 1;
        }
        if (all)
            return true;
        s += len;
        s += *s ? 1 : 0;
    }
    return false;
}

static struct fi_info *prov_hints(uint64_t extra_caps)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | extra_caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                              FI_MR_ENDPOINT | FI_MR_HMEM;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    return h;
}

/* Rank of a candidate: 2 preferred, 1 usable below btl tcp, 0 declined
 * (why says so). */
static int prov_rank(const struct fi_info *fi, char *why, size_t len)
{
    const char *prov = fi->fabric_attr->prov_name;
    const char *list = btl_ofi_params.provider;
    bool named = list && *list && prov_named(list, prov);
    if (list && *list && !named) {
        snprintf(why, len, "not in btl_ofi_provider=\"%s\"", list);
        return 0;
    }
    if (!prov_is_soft(prov) || named)
        return 2;
    if (btl_base_selected("tcp")) {
        snprintf(why, len, "a software provider ranks below btl tcp, which is in use "
                 "(name it in btl_ofi_provider to use it)");
        return 0;
    }
    return 1;
}

/* One line per provider and verdict: its domains and fabrics in one. */
static void say_candidate(const struct fi_info *fi, const char *verdict)
{
    static char last[512];
    char now[512];
    snprintf(now, sizeof(now), "%s: %s", fi->fabric_attr->prov_name, verdict);
    if (strcmp(now, last) == 0)
        return;
    snprintf(last, sizeof(last), "%s", now);
    RAIL_VERBOSE(btl_verbose, 1, "btl ofi: provider %s (domain %s, fabric %s, and others): %s",
                 fi->fabric_attr->prov_name, fi->domain_attr->name, fi->fabric_attr->name,
                 verdict);
}

/* The same provider, domain and fabric with FI_MULTI_RECV, if offered. */
static struct fi_info *with_multi_recv(const struct fi_info *fi)
{
    struct fi_info *h = fi_dupinfo(fi), *out = NULL;
    if (!h)
        return NULL;
    h->caps |= FI_MULTI_RECV;
    if (fi_getinfo(BTL_OFI_FI_VERSION, NULL, NULL, 0, h, &out) != 0)
        out = NULL;
    fi_freeinfo(h);
    return out;
}

struct fi_info *btl_ofi_prov_choose(btl_ofi_module_t *m, int *priority)
{
    struct fi_info *hints = prov_hints(0), *list = NULL, *best = NULL;
    int best_rank = 0, rc;
    char why[256];
    if (!hints)
        return NULL;
    rc = fi_getinfo(BTL_OFI_FI_VERSION, NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    if (rc != 0) {
        snprintf(m->why, sizeof(m->why), "no libfabric provider offers reliable datagrams "
                 "with RMA here (fi_getinfo: %s)", btl_ofi_strerror(rc));
        return NULL;
    }
    char first[160] = "";
    for (struct fi_info *fi = list; fi; fi = fi->next) {
        int r = prov_rank(fi, why, sizeof(why));
        if (r == 0 && !first[0])
            snprintf(first, sizeof(first), "%.40s: %.110s", fi->fabric_attr->prov_name, why);
        if (r > best_rank) {
            if (best)
                say_candidate(best, "declined: a better-ranked provider follows");
            best = fi;
            best_rank = r;
        } else {
            say_candidate(fi, r == 0 ? why : "declined: an earlier one of this rank is used");
        }
    }
    struct fi_info *out = NULL;
    if (best) {
        out = with_multi_recv(best);
        if (!out)
            out = fi_dupinfo(best);
        *priority = best_rank == 2 ? btl_ofi_params.priority : btl_ofi_params.priority_soft;
    } else {
        snprintf(m->why, sizeof(m->why), "no libfabric provider is usable (first, %.160s; "
                 "btl_verbose=1 says why each was declined)", first);
    }
    fi_freeinfo(list);
    return out;
}
