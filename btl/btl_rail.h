/*
 * Rails: the backend network interfaces of a host, each on a rail.
 *
 * A rail-optimised cluster cables NIC i of every host to the same set of
 * switches (rail i); traffic that stays on its rail crosses one switch.
 * This file is the btl-level notion of rails that every network btl (tcp
 * today) and the pml can use:
 *
 *   backend    the interfaces MPI data may use: btl_if_include (or the
 *              btl's own form, btl_tcp_if_include), else every interface
 *              that is up but those of the frontend (rte_if_include, the
 *              launcher's network).  Data goes over the frontend only when
 *              a list names it, or when nothing else is left, and then a
 *              warning says so.
 *   rail       the index of an interface among the host's backend
 *              interfaces sorted by name, or the index of the first entry
 *              of btl_rails (names or per-rail subnets) it matches.
 *   my rail    the rail this process sends on: the one whose NIC is close
 *              to the process's cores (sysfs local_cpulist of its PCI
 *              device, hwloc bitmaps), else local rank modulo the number
 *              of rails, so that the ranks of a host spread over them.
 *
 * Bad input is said once, naming this host and the interface or entry:
 * btl_rails entries matching no interface, a backend link that is not
 * running at start-up, a peer host with another number of rails.
 */
#ifndef BTL_BTL_RAIL_H
#define BTL_BTL_RAIL_H

#include "base/netif.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTL_RAIL_MAX 16

extern const char *btl_rail_if_include;
extern const char *btl_rail_if_exclude;
extern const char *btl_rail_names;       /* parameter btl_rails */
extern uint64_t btl_rail_cross;          /* pvar btl_rail_cross_rail */

int btl_rail_register_params(void);

/* Choose among n interfaces by an include or exclude list (names and
 * subnets); loopback only when included, or on a job of one node, or when
 * nothing else is left.  Bad or unmatched entries are warned about. */
int btl_rail_select(const rail_netif_t *all, int n, const char *include, const char *exclude,
                    bool single_node, rail_netif_t *out, int max, const char *who);

/* The whole choice: discover, select (own_include/own_exclude, a btl's own
 * lists, win over btl_if_include/exclude), leave out the frontend and links
 * without carrier, assign rails, mark locality.  Returns the count. */
int btl_rail_backend(const char *own_include, const char *own_exclude, bool single_node,
                     rail_netif_t *out, int max, int *n_rails, const char *who);

/* Drop the frontend's interfaces (rte_if_include) from a backend list that
 * no include list chose; keeps them, with a warning, when nothing else but
 * loopback would be left on a job of several nodes.  Returns the new count. */
int btl_rail_drop_frontend(rail_netif_t *ifs, int n, bool single_node, const char *who);

/* Give each non-loopback interface its rail (btl_rails, else by name);
 * interfaces that btl_rails does not name are removed.  Returns the new
 * count; *n_rails gets the number of rails. */
int btl_rail_assign(rail_netif_t *ifs, int n, int *n_rails, const char *who);

/* Whether the device whose sysfs local_cpulist is at path is near this
 * process's cores (hwloc bitmaps): 1, 0, or -1 when sysfs says nothing
 * (no PCI device: veth, bridges). */
int btl_rail_sysfs_local(const char *path);

/* Mark interfaces near this process's cores (local = 1 / 0 / -1). */
void btl_rail_locality(rail_netif_t *ifs, int n);

/* The rail this process uses (-1 when there is none); why says how it was
 * chosen. */
int btl_rail_choose(const rail_netif_t *ifs, int n, int n_rails, int local_rank, char *why,
                    size_t len);

/* A peer on another host has peer_rails rails where we have n_rails:
 * warn once per host. */
void btl_rail_check_peer(const char *peer_host, int peer_rails, const char *peer_names,
                         int n_rails, const rail_netif_t *ifs, int n);

/* One line per rail interface, for railinfo --rails and verbose output. */
void btl_rail_describe(const rail_netif_t *ifs, int n, int my_rail, char *buf, size_t len);

#endif
