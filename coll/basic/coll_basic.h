/*
 * coll basic: the reference implementation of every collective operation,
 * on intra- and intercommunicators.  Simple, linear, always correct: a root
 * sends to / receives from everyone; all-to-all patterns post every send
 * and receive at once; reductions gather the operands at one process and
 * combine them in rank order (x0 op x1 op ... op x(n-1)), so
 * non-commutative operations give the standard's result.  The blocking
 * forms are written here on pml calls; the nonblocking and persistent forms
 * are the same algorithms as schedules (coll/nbc: coll_nbc_i<name>).
 *
 * Intercommunicator forms use only messages between the two groups
 * (every process of one group exchanges with every process of the other
 * where needed), so no local intracommunicator is required.
 */
#ifndef COLL_BASIC_COLL_BASIC_H
#define COLL_BASIC_COLL_BASIC_H

#include "coll/coll.h"
#include "coll/coll_util.h"

#define COLL_BASIC_X_PROTO(name, params, args)                                                     \
    int coll_basic_##name(COLL_UNPAREN params, coll_module_t *module);
COLL_OPS(COLL_BASIC_X_PROTO)
#undef COLL_BASIC_X_PROTO

/* The all-to-all exchange every gather-to-all and all-to-all form reduces
 * to (see coll_blocks_t): block i of s goes to peer i, block i of r comes
 * from it.  self_copy: copy the own block locally (intracommunicators);
 * stage: MPI_IN_PLACE all-to-all, the send blocks are the receive blocks,
 * staged through a temporary before anything arrives. */
int coll_basic_exchange(const coll_blocks_t *s, const coll_blocks_t *r, bool self_copy,
                        bool stage, int tag, obj_comm_t *comm);

/* Reduce the vectors (count elements of r->udt) of peers 0..n-1 in rank
 * order into a new temporary *acc (free *mem with coll_red_tmp_free, after
 * an error too; *acc NULL where there was no memory for it); peer `self`
 * contributes `mine` from this process instead of a message.  Every
 * message is received, after an error too (a peer's count that differs:
 * MPI_ERR_TRUNCATE or MPI_ERR_COUNT), so that no sender waits for ever;
 * the callers likewise send and receive everything they would have. */
int coll_basic_reduce_ordered(const coll_red_t *r, int n, int self, const void *mine, int tag,
                              obj_comm_t *comm, void **acc, void **mem);

#endif
