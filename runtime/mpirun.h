/*
 * mpirun's state and the functions its files share: mpirun.c (the job's
 * policy, output, stdin, signals), mpirun_daemons.c (raild through the launch
 * agent, authenticated connections) and mpirun_modex.c (fences and direct
 * modex across hosts).
 */
#ifndef RUNTIME_MPIRUN_H
#define RUNTIME_MPIRUN_H

#include "runtime/launch.h"

typedef struct root_node {
    int id;
    const char *name;
    bool local;    /* node server in this process */
    lconn_t *conn; /* raild, once authenticated */
    pid_t agent;   /* launch agent process, 0 when gone */
    int agent_in;  /* its stdin (we keep it open: EOF tells raild we are gone) */
    bool up, done;
    uint64_t timer;
} root_node_t;

typedef struct root_rank {
    pid_t pid;
    bool connected, finalized, exited;
} root_rank_t;

typedef struct root_fence {
    struct root_fence *next;
    char *sig;
    uint32_t seq;
    int needed, got;
    bool *member; /* per node */
    bool *have;
    lbuf_t *parts;
} root_fence_t;

typedef struct root {
    launch_opts_t opts;
    launch_job_t *job;
    root_node_t *nodes;
    root_rank_t *ranks;
    int local_node, nremote, nconnected, nodes_done, agents_alive;
    bool quiet;       /* failures are no longer reported (we are ending the job) */
    bool terminating; /* KILL sent */
    bool all_done;
    bool have_failure;
    int exit_status;
    root_fence_t *fences;
    int listen_fd;
    int port;
    uint8_t secret[32];
    int nsignals;
    uint64_t timeout_timer, kill_timer, exit_timer;
    /* stdin forwarding to rank 0 */
    int stdin_node;
    bool stdin_on, stdin_polled, stdin_paused, stdin_eof;
    size_t stdin_credit;
    lbuf_t msg;
} root_t;

extern root_t root;

void root_send(root_node_t *n, const lbuf_t *msg);
void root_send_simple(root_node_t *n, uint32_t type);
const char *root_host_of(int rank);
/* Report the first failure (status, message) and end every rank. */
void root_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void root_terminate(void);
void root_node_done(root_node_t *n);
void root_finish(void);
void root_handle(int node, uint32_t type, lbuf_t *p);
/* mpirun_modex.c */
void root_fence_up(int node, lbuf_t *p);
void root_dmodex(int node, uint32_t type, lbuf_t *p);
/* mpirun_daemons.c */
int root_start_daemons(void);

#endif
