/*
 * The node server's shared state, for its two halves: launch_node.c (the
 * ranks: fork/exec, binding, stdio, exits, orders from the root) and
 * launch_pmix.c (the PMIx server: namespace registration, upcalls, fences
 * and direct modex).
 */
#ifndef RUNTIME_LAUNCH_NODE_INT_H
#define RUNTIME_LAUNCH_NODE_INT_H

#include "runtime/launch.h"

#include <hwloc.h>
#include <limits.h>
#include <pmix_server.h>
#include <sched.h>
#include <sys/resource.h>

typedef struct node_rank {
    int rank;
    pid_t pid;
    int out_fd, err_fd, in_fd; /* our ends of its stdout, stderr, stdin pipes */
    lbuf_t line[3];            /* unfinished line of fd 1 and 2 */
    bool exited;
    char *exe;
    char **env;
    cpu_set_t *cpus; /* binding, or NULL */
} node_rank_t;

typedef struct node_pending {
    struct node_pending *next;
    char *sig; /* fence participants */
    uint32_t seq;
    uint64_t id; /* direct modex request */
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
} node_pending_t;

typedef struct node_seq {
    struct node_seq *next;
    char *sig;
    uint32_t n;
} node_seq_t;

typedef struct node_state {
    launch_job_t *job;
    int node_id;
    launch_node_info_t *info;
    launch_up_fn up;
    int nlocal, nalive;
    node_rank_t *ranks;
    char tmpdir[PATH_MAX];
    bool pmix_up, started, killing, done, cleaned;
    hwloc_topology_t topo;
    node_pending_t *fences, *dmodex;
    node_seq_t *seqs;
    uint64_t next_id;
    lbuf_t msg;
    node_rank_t *stdin_rank; /* rank 0 when it is here and reads a pipe */
    bool stdin_inherit;
    lbuf_t stdin_buf;
    bool stdin_eof;
    bool set_hwloc_env; /* we set HWLOC_PLUGINS_BLACKLIST, not the user */
    struct rlimit nofile; /* the fd limit the ranks get back */
} node_state_t;


extern node_state_t nsrv;

/* Messages up to the root (built in nsrv.msg). */
void node_send(void);
void node_send_rank_state(int rank, int state, int status);
void node_send_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* launch_pmix.c */
int node_pmix_init(void);
int node_pmix_register_nspace(void);
int node_pmix_register_rank(node_rank_t *r);
/* FENCE_DOWN, DMODEX_RESP, DMODEX_SERVE from the root. */
void node_pmix_handle(uint32_t type, lbuf_t *p);

#endif
