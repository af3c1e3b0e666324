/*
 * Harness of the btl tcp unit tests: no pml, no MPI layer.
 *
 * A test double of the rte (tcp_fake_rte.c) keeps the modex and the fences
 * in files of a job directory, so the processes of a "job" may be forked
 * children of one test program, or separate programs started in different
 * network namespaces (`ip netns exec`), as long as they share the directory.
 *
 * tcp_test_run() forks N processes that run a function (rank, size), each
 * with its stderr in <jobdir>/stderr.<rank> (printed when the test fails,
 * readable afterwards with tcp_test_log()), waits with a time limit and
 * kills the others when one fails.
 */
#ifndef TEST_BTL_TCP_TCP_TEST_H
#define TEST_BTL_TCP_TCP_TEST_H

#include "base/rail.h"
#include "btl/btl.h"

/* Checks (test/check.h) name the forked rank (-1 in the parent). */
extern int tcp_test_rank;
#define CHECK_RANK tcp_test_rank
#include "test/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define TCP_TEST_MAX_PROCS 64

typedef int (*tcp_test_fn)(int rank, int size, void *arg);

typedef struct tcp_test_opts {
    int timeout_s;                 /* whole run (default 60) */
    const char *env;               /* "NAME=value NAME2=value" set in each child before init */
    const int *nodes;              /* node of each rank (NULL: all on node 0) */
    unsigned may_fail;             /* bit r: rank r may exit with an error or die */
} tcp_test_opts_t;

extern char tcp_test_dir[256];     /* job directory of the current or last run */

int tcp_test_run(const char *name, int nprocs, tcp_test_fn fn, void *arg, const tcp_test_opts_t *o);
/* Remove the last job directory; print the summary line (test/check.h)
 * and return the exit status of main(). */
int tcp_test_summary(const char *name);
/* Contents of rank's stderr in the last run (malloc()ed, "" if none). */
char *tcp_test_log(int rank);
/* Occurrences of needle in s. */
int tcp_test_count(const char *s, const char *needle);
/* Make a fresh empty directory for a job; false on failure. */
bool tcp_test_mkdir(char *path, size_t len, const char *tag);
void tcp_test_rmdir(const char *path);
double tcp_test_now(void);

/* Child: register parameters, init the component, fence, add_procs of all
 * ranks of the job; eps[rank] (NULL for self).  Returns the module. */
btl_module_t *tcp_test_init(btl_endpoint_t ***eps);
/* The same for another component's module (btl ofi's test uses this harness). */
btl_module_t *tcp_test_init_component(const btl_component_t *c, btl_endpoint_t ***eps);
/* Child: progress until the module holds no queued bytes (what the MPI
 * layer must do before a fence that does not progress), then fence. */
void tcp_test_fence(btl_module_t *m);
/* Child: fence, then del_procs and finalize. */
void tcp_test_fini(btl_module_t *m, btl_endpoint_t **eps);
/* Child: progress once; when idle, sleep on the module's wait_fd (at most
 * timeout_ms) as the progress engine does.  Returns the events handled. */
int tcp_test_progress(btl_module_t *m, int timeout_ms);
/* Child: progress until *counter >= target (fails the test after limit_s). */
void tcp_test_progress_until(btl_module_t *m, volatile long *counter, long target, int limit_s);
/* Child: send, progressing while it says RAIL_AGAIN; returns the number of
 * RAIL_AGAINs.  Fails the test on an error. */
long tcp_test_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                   size_t hdr_len, const btl_payload_t *p);

/* Checked messages: a header {src, dst, seq, len, off, total} padded with
 * known bytes to 32..64 bytes, payload bytes a function of (src, seq of the
 * logical message, offset), every third payload produced by a pack
 * callback.  A logical message larger than max_send_size is split by the
 * test into frames.  The receive callback checks order per sender and every
 * byte. */
#define TCP_TEST_TAG 3
extern volatile long tcp_test_received;   /* frames delivered and checked */
extern volatile long tcp_test_bytes;      /* payload bytes of them */
void tcp_test_msg_init(btl_module_t *m);
/* Send a logical message of len bytes to dst; returns the RAIL_AGAINs seen. */
long tcp_test_msg_send(btl_module_t *m, btl_endpoint_t *ep, int dst, size_t len);
/* Frames a logical message of len bytes takes. */
long tcp_test_msg_frames(btl_module_t *m, size_t len);

/* tcp_fake_rte.c */
/* Set up (or join) the job in dir: size ranks, nodes[rank] (NULL: all 0). */
int tcp_fake_rte_setup(const char *dir, const char *jobid, int size, const int *nodes);
/* Become rank (fills rte_info). */
void tcp_fake_rte_rank(int rank);
/* Write a modex value as if rank had put it (tests of foreign cards). */
int tcp_fake_rte_put_as(int rank, const char *key, const void *data, size_t len);

#endif
