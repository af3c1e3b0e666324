/*
 * Harness of the btl sm unit tests: fork N processes that share a fake rte
 * (fake_rte.c), run a function in each, wait with a time limit, end the
 * whole "job" when one rank fails (as the launcher does) and check that no
 * /dev/shm/rail-<jobid>-* file is left.
 */
#ifndef TEST_BTL_SM_SM_TEST_H
#define TEST_BTL_SM_SM_TEST_H

#include "base/rail.h"
#include "btl/btl.h"

/* Checks (test/check.h) name the forked rank (-1 in the parent). */
extern int sm_test_rank;
#define CHECK_RANK sm_test_rank
#include "test/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define SM_TEST_MAX_PROCS 64
#define SM_TEST_FENCE_TIMEOUT 60

typedef int (*sm_test_fn)(int rank, int size, void *arg);

typedef struct sm_test_opts {
    bool oversubscribed;     /* rte_info.oversubscribed in the children */
    int timeout_s;           /* whole run (default 60) */
    const char *env;         /* "NAME=value NAME2=value" set in each child before init */
    int kill_rank;           /* >= 0: SIGKILL this rank after kill_after_ms */
    int kill_after_ms;
    bool expect_failure;     /* a rank is meant to die: no leftover check */
    int cpus;                /* > 0: pin every child to the first `cpus` CPUs */
} sm_test_opts_t;

extern char sm_test_jobid[64];

/* Parent: run fn in nprocs processes; 0 when all exit 0 and nothing is left
 * in /dev/shm (unless expect_failure). */
int sm_test_run(const char *name, int nprocs, sm_test_fn fn, void *arg, const sm_test_opts_t *o);

/* Launcher-style cleanup: unlink /dev/shm/rail-<jobid>-*; returns how many. */
int sm_test_shm_cleanup(const char *jobid);
int sm_test_shm_count(const char *jobid);

/* Child: register parameters, init the component, fence, add_procs of all
 * ranks; eps[rank] (NULL for self).  Returns the module. */
btl_module_t *sm_test_init(btl_endpoint_t ***eps);
/* Child: fence, then finalize. */
void sm_test_fini(btl_module_t *m, btl_endpoint_t **eps);
/* Child: send, progressing (and yielding) while it returns RAIL_AGAIN. */
void sm_test_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                  size_t hdr_len, const void *data, size_t len);
/* Child: progress until *counter >= target, yielding when idle. */
void sm_test_progress_until(btl_module_t *m, volatile long *counter, long target);

/* Checked messages: header {src, dst, seq, len, hdr_len} padded with known
 * bytes to 24..64 bytes, payload bytes a function of (src, seq, offset), every
 * third payload produced by a pack callback.  The receive callback checks
 * order per sender and every byte. */
#define SM_TEST_TAG 3
extern volatile long sm_test_received;   /* checked messages delivered here */
void sm_test_msg_init(btl_module_t *m);
/* Send the next message to dst (payload clamped to max_send_size); returns
 * how many times send said RAIL_AGAIN first. */
long sm_test_msg_send(btl_module_t *m, btl_endpoint_t *ep, int dst, size_t len);

/* fake_rte.c */
int fake_rte_setup(int size, const char *jobid, bool oversubscribed);
void fake_rte_child(int rank);

#endif
