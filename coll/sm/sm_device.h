/*
 * coll sm: device to device (sm_device.c), what the operations' files
 * call.  Split from coll_sm.h.
 */
#ifndef COLL_SM_DEVICE_H
#define COLL_SM_DEVICE_H

#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_decide.h"

/* DEVICE TO DEVICE (sm_device.c): operations of coll_sm_device_handoff_min
 * bytes (blocks_min, ipc_reduce_min) with device buffers where
 * coll_sm_device_ipc allows.  A process with device buffers publishes
 * the IPC handles of b0 (n0 bytes; NULL: it cannot) and b1 before the
 * step that carries its device bit; after it,
 * where every process whose record is read said it has device buffers
 * (only those write one), coll_sm_dev_ready opens the handles of `root`
 * (-1: everyone) and agrees in `step` whether all could (false, the same
 * everywhere: hand the call on).  The opened mappings are held until the
 * operation's copies are done.  The operations end with everyone's
 * FINAL.  Whether a call may, and whether one process does it for all:
 * coll_sm_dev_eligible and the others in sm_decide.h. */
void coll_sm_dev_publish(coll_sm_module_t *m, uint64_t s, const void *b0, size_t n0,
                         const void *b1, size_t n1);
bool coll_sm_dev_ready(coll_sm_module_t *m, uint64_t s, uint32_t step, int root);
/* ... a gather's: everyone's records but the root's, opened by the root */
bool coll_sm_dev_ready_gather(coll_sm_module_t *m, uint64_t s, uint32_t step, int root);
/* ... everyone's buffer 0 only (an allgather's or alltoall's per-process
 * copies, where results were published for one process to fill) */
bool coll_sm_dev_ready_blocks(coll_sm_module_t *m, uint64_t s, uint32_t step);
/* ... everyone's records, opened by `one` alone (coll_sm_dev_allreduce_one) */
bool coll_sm_dev_ready_one(coll_sm_module_t *m, uint64_t s, uint32_t step, int one);
/* whether every process published its result too, for an operation done by
 * one: read in the records after the step that published them, so the
 * same answer everywhere before anyone posts a further step */
bool coll_sm_dev_results_published(coll_sm_module_t *m, uint64_t s);
int coll_sm_dev_bcast(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d);
/* ... after the root offered its buffer in step 1: the receivers publish
 * theirs in `step`, the root opens them all and says in step + 1 whether
 * it could; then it copies into all in one launch (true, *rc: the
 * result; the operation ended) or nothing happened (false: go on from
 * step + 2) */
bool coll_sm_dev_bcast_one(coll_sm_module_t *m, uint64_t s, uint32_t step, int root,
                           const coll_sm_data_t *d, size_t bytes, int *rc);
/* own: my block's device source, copied with the others' (NULL: in place already) */
int coll_sm_dev_allgather(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0,
                          const void *own);
/* ... after coll_sm_dev_ready_one: process 0 copies every block (send:
 * its published buffer 0, recv: its result) in one launch */
int coll_sm_dev_allgather_one(coll_sm_module_t *m, uint64_t s, const void *send, char *recv);
int coll_sm_dev_alltoall_one(coll_sm_module_t *m, uint64_t s, const void *send, char *recv);
/* my 1/n slice of N elements of esz bytes from everyone's input (in: mine),
 * posted as `step`, then the others' slices into out */
int coll_sm_dev_allreduce(coll_sm_module_t *m, uint64_t s, uint32_t step, rail_op_t rop,
                          rail_typekind_t kind, size_t esz, size_t N, const char *in, char *out);
/* the whole result of N elements from everyone's input into everyone's
 * output, folded by process 0 in one pass (after coll_sm_dev_ready_one) */
int coll_sm_dev_allreduce_one(coll_sm_module_t *m, uint64_t s, rail_op_t rop,
                              rail_typekind_t kind, size_t N, const char *in, char *out);
int coll_sm_dev_scatter(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d);
/* own (the root's): its block's device source, copied with the others'
 * (NULL: there already, or copied before) */
int coll_sm_dev_gather(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *r0,
                       const void *own);
/* my 1/n slice of N elements from everyone's input (in: mine) into the
 * root's result (out at the root; the others' opened as root's buffer 1) */
int coll_sm_dev_reduce(coll_sm_module_t *m, uint64_t s, int root, rail_op_t rop,
                       rail_typekind_t kind, size_t esz, size_t N, const char *in, char *out);
/* my block of everyone's send buffer (published whole: n blocks) into r0;
 * own: my own block's device source (NULL: copied already) */
int coll_sm_dev_alltoall(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0,
                         const void *own);
/* elements [lo, lo + len) of everyone's input (in: mine) reduced into out;
 * in place (in == out) the result lands after everyone posted `step` */
int coll_sm_dev_reduce_scatter(coll_sm_module_t *m, uint64_t s, uint32_t step, rail_op_t rop,
                               rail_typekind_t kind, size_t esz, size_t lo, size_t len,
                               const char *in, char *out);

#endif
