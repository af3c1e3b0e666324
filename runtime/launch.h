/*
 * Internal interfaces of the launcher: mpirun (the job's root) and raild (one
 * per remote host).  Both run one event loop thread (launch_loop.c); libpmix
 * runs its own thread and hands work to the loop with loop_post().
 *
 *   mpirun ── parses the command line, maps ranks to hosts (launch_opts.c,
 *   │         launch_job.c), runs the job's policy (mpirun.c): output, exit
 *   │         codes, fences across hosts, failure -> kill everything.
 *   ├── node server in-process for the local host (launch_node.c):
 *   │      PMIx server, fork/exec of the ranks, their stdio and exits
 *   └── raild on every other host, started through the launch agent,
 *          connected back over TCP (launch_net.c), running the same node
 *          server; messages (launch_buf.c) carry what the node server
 *          reports up and what mpirun tells it down.
 */
#ifndef RUNTIME_LAUNCH_H
#define RUNTIME_LAUNCH_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAUNCH_PROTOCOL "RAILD1"

/* ------------------------------------------------------------ buffers */

typedef struct lbuf {
    char *data;
    size_t len, cap;
    size_t pos; /* read position */
    bool bad;   /* a read ran past the end */
} lbuf_t;

void lbuf_init(lbuf_t *b);
void lbuf_free(lbuf_t *b);
void lbuf_reset(lbuf_t *b);
void lbuf_put(lbuf_t *b, const void *p, size_t n);
void lbuf_put_u32(lbuf_t *b, uint32_t v);
void lbuf_put_i32(lbuf_t *b, int32_t v);
void lbuf_put_u64(lbuf_t *b, uint64_t v);
void lbuf_put_bytes(lbuf_t *b, const void *p, size_t n); /* length, then bytes */
void lbuf_put_str(lbuf_t *b, const char *s);             /* NULL allowed */
void lbuf_put_strv(lbuf_t *b, char *const *v);           /* NULL-terminated vector */
uint32_t lbuf_get_u32(lbuf_t *b);
int32_t lbuf_get_i32(lbuf_t *b);
uint64_t lbuf_get_u64(lbuf_t *b);
const void *lbuf_get_bytes(lbuf_t *b, size_t *n); /* points into b */
char *lbuf_get_str(lbuf_t *b);                    /* malloc()ed, NULL if NULL was put */
char **lbuf_get_strv(lbuf_t *b);

/* Messages: u32 length of what follows, u32 type, payload. */
enum lmsg_type {
    LMSG_AUTH_CHALLENGE = 1, /* root->node: nonce[32] */
    LMSG_AUTH_RESPONSE,      /* node->root: i32 node, nonce[32], mac[32] */
    LMSG_AUTH_OK,            /* root->node: mac[32] */
    LMSG_JOB,                /* root->node: the packed job */
    LMSG_NODE_UP,            /* node->root: i32 n, n x (i32 rank, i32 pid) */
    LMSG_NODE_ERROR,         /* node->root: i32 exit status, str message; the node gives up */
    LMSG_RANK_STATE,         /* node->root: i32 rank, i32 state, i32 wait status */
    LMSG_OUTPUT,             /* node->root: i32 rank, i32 fd (1|2), bytes (whole lines) */
    LMSG_ABORT,              /* node->root: i32 rank, i32 code, str message */
    LMSG_FENCE_UP,           /* node->root: str participants, u32 seq, bytes data */
    LMSG_FENCE_DOWN,         /* root->node: str participants, u32 seq, i32 status, bytes */
    LMSG_DMODEX_REQ,         /* node->root: u64 id, i32 rank */
    LMSG_DMODEX_SERVE,       /* root->node: i32 asking node, u64 id, i32 rank */
    LMSG_DMODEX_DATA,        /* node->root: i32 asking node, u64 id, i32 status, bytes */
    LMSG_DMODEX_RESP,        /* root->node: u64 id, i32 status, bytes */
    LMSG_SIGNAL,             /* root->node: i32 signal to forward to the ranks */
    LMSG_KILL,               /* root->node: kill every rank now */
    LMSG_STDIN,              /* root->node: bytes for rank 0's stdin; empty = end of file */
    LMSG_STDIN_ACK,          /* node->root: u32 bytes taken */
    LMSG_NODE_DONE,          /* node->root: every local rank is gone */
    LMSG_EXIT,               /* root->node: remove the job's /dev/shm files and exit */
    LMSG_MAX
};

enum { RANK_CONNECTED = 1, RANK_FINALIZED, RANK_EXITED };

void lmsg_start(lbuf_t *b, uint32_t type); /* resets b */
void lmsg_finish(lbuf_t *b);               /* fills in the length */
const char *lmsg_name(uint32_t type);

/* ------------------------------------------------------------ the job */

enum { LAUNCH_BIND_DEFAULT, LAUNCH_BIND_CORE, LAUNCH_BIND_NONE };
enum { LAUNCH_MAP_SLOT, LAUNCH_MAP_NODE, LAUNCH_MAP_CORE };

typedef struct launch_app {
    int nprocs;
    int first_rank;
    char **argv; /* NULL-terminated */
    char **env;  /* NAME=VALUE for this app's ranks (-x given after this app's ':') */
} launch_app_t;

typedef struct launch_node_info {
    char *name;  /* as given on the command line: PMIX_HOSTNAME of its ranks */
    int nranks;
    int *ranks;  /* ascending */
} launch_node_info_t;

typedef struct launch_job {
    char jobid[32];
    char nspace[256]; /* PMIX_MAX_NSLEN + 1 */
    int size, universe;
    int napps;
    launch_app_t *apps;
    int nnodes;
    launch_node_info_t *nodes;
    int *rank_node, *rank_app, *rank_local; /* per rank */
    char **env;       /* NAME=VALUE for every rank (--param, -x, forwarded RAIL_*) */
    char **unset_env; /* names to remove from the ranks' inherited environment */
    char *wdir;
    int bind;
    bool tag_output;
    int verbose;
} launch_job_t;

void launch_job_pack(const launch_job_t *job, lbuf_t *b);
launch_job_t *launch_job_unpack(lbuf_t *b);
void launch_job_free(launch_job_t *job);
/* Fill nodes/rank_* from per-rank host indexes (host_of[rank] into names). */
int launch_job_set_map(launch_job_t *job, int nhosts, char **names, const int *host_of);

/* ------------------------------------------------------------ mpirun's options */

typedef struct launch_opts {
    launch_job_t *job;
    double timeout;  /* seconds; 0 = none */
    char *agent;     /* launch agent template, "{host}" replaced */
    int nhosts;
    char **hosts;    /* as given, or this host's name */
    int *slots;
    int map;
    bool hosts_given;
} launch_opts_t;

/* 0: run the job; 1: done (help or version printed); -1: error (printed). */
int launch_opts_parse(int argc, char **argv, launch_opts_t *o);

/* ------------------------------------------------------------ event loop */

typedef void (*loop_fd_fn)(int fd, uint32_t events, void *arg);
typedef void (*loop_fn)(void *arg);
typedef void (*loop_child_fn)(pid_t pid, int status, void *arg);
typedef void (*loop_signal_fn)(int sig);

/* Blocks the handled signals (call before any thread exists). */
int loop_init(loop_signal_fn on_signal);
int loop_fd_add(int fd, uint32_t events, loop_fd_fn fn, void *arg);
int loop_fd_mod(int fd, uint32_t events);
void loop_fd_del(int fd);
/* One-shot timer; returns an id for loop_timer_cancel (0 = none). */
uint64_t loop_timer_add(double ms, loop_fn fn, void *arg);
void loop_timer_cancel(uint64_t id);
/* Run fn on the loop thread soon; callable from any thread. */
void loop_post(loop_fn fn, void *arg);
/* Report the exit of a child through fn. */
void loop_child_watch(pid_t pid, loop_child_fn fn, void *arg);
int loop_run(void);
void loop_stop(void);
double loop_now_ms(void);
/* In a forked child: restore signal dispositions and mask. */
void loop_child_reset_signals(void);

/* ------------------------------------------------------------ node server */

/* Where the node server sends a finished message (mpirun: straight to the
 * root logic; raild: the TCP connection).  The callee copies what it keeps. */
typedef void (*launch_up_fn)(lbuf_t *msg);

typedef struct launch_node_opts {
    bool stdin_inherit; /* rank 0 (if here) inherits our fd 0 instead of a pipe */
} launch_node_opts_t;

/* Start the PMIx server and the node's ranks; reports NODE_UP or NODE_ERROR. */
int launch_node_start(launch_job_t *job, int node_id, const launch_node_opts_t *opts,
                      launch_up_fn up);
/* A message from the root (type, payload positioned after the header). */
void launch_node_handle(uint32_t type, lbuf_t *payload);
/* Kill every rank (SIGKILL), as if told by the root. */
void launch_node_kill(void);
/* Remove the job's /dev/shm entries and this node's temp dir (idempotent). */
void launch_node_final_cleanup(void);
bool launch_node_done(void);

/* ------------------------------------------------------------ network */

typedef struct lconn lconn_t;
typedef void (*lconn_msg_fn)(lconn_t *c, uint32_t type, lbuf_t *payload, void *arg);
typedef void (*lconn_close_fn)(lconn_t *c, void *arg);

/* Wrap a connected socket (made non-blocking) into the event loop. */
lconn_t *lconn_new(int fd, size_t max_msg, lconn_msg_fn on_msg, lconn_close_fn on_close,
                   void *arg);
void lconn_set_max_msg(lconn_t *c, size_t max_msg);
void lconn_set_handlers(lconn_t *c, lconn_msg_fn on_msg, lconn_close_fn on_close, void *arg);
void lconn_send(lconn_t *c, const lbuf_t *msg);
void lconn_close(lconn_t *c);
/* Write out what is queued, waiting up to timeout_ms. */
void lconn_flush(lconn_t *c, int timeout_ms);
int lconn_fd(lconn_t *c);

/* Listening TCP socket on every IPv4 address, ephemeral port. */
int net_listen(int *port);
/* "a.b.c.d,..." of this host's IPv4 addresses, non-loopback first. */
/* This host's IPv4 addresses, comma-separated, loopback last; only those
 * frontend (rte_if_include) takes when it is set.  NULL, after saying
 * why, when frontend is malformed or matches nothing. */
char *net_addresses(const char *frontend);
/* Connect to the first address of the list that answers, trying each for up to timeout_ms. */
int net_connect_any(const char *addrs, int port, int timeout_ms, char *err, size_t errlen);
/* Blocking helpers for raild's handshake. */
int net_write_all(int fd, const void *p, size_t n, int timeout_ms);
int net_read_msg(int fd, lbuf_t *msg, uint32_t *type, size_t max, int timeout_ms);

/* HMAC-SHA-256 over the concatenation of up to three parts. */
void launch_hmac(const uint8_t key[32], const void *a, size_t na, const void *b, size_t nb,
                 const void *c, size_t nc, uint8_t mac[32]);
int launch_random(void *buf, size_t n);
void launch_hex(const uint8_t *p, size_t n, char *out); /* out: 2n + 1 chars */
int launch_unhex(const char *s, uint8_t *p, size_t n);

/* ------------------------------------------------------------ utilities */

extern const char *launch_progname; /* "mpirun" or "raild" (for messages) */
extern int launch_verbose;

void launch_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void launch_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *launch_xmalloc(size_t n);
void *launch_xcalloc(size_t n, size_t m);
char *launch_xstrdup(const char *s);
const char *launch_signame(int sig);
/* Remove a directory tree (no symlinks followed). */
void launch_rmtree(const char *path);
/* Remove /dev/shm/rail-<jobid>-*; returns how many. */
int launch_shm_cleanup(const char *jobid);
/* Environment vectors. */
char **launch_env_copy(char **env);
void launch_env_set(char ***env, const char *name_value); /* "NAME=VALUE" */
void launch_env_unset(char **env, const char *name);
const char *launch_env_get(char **env, const char *name);
void launch_strv_free(char **v);
int launch_strv_len(char *const *v);
void launch_strv_append(char ***v, const char *s);
/* Search PATH for an executable; malloc()ed path or NULL with errno. */
char *launch_find_exe(const char *name, const char *path, const char *wdir);
void launch_set_cloexec(int fd);
void launch_set_nonblock(int fd);
bool launch_is_local_host(const char *name);
/* Open /dev/null on whichever of fds 0, 1, 2 is closed. */
void launch_fix_std_fds(void);

#endif
