/*
 * Single copy by cross-memory attach (CMA): one process reads or writes
 * another's memory with process_vm_readv/writev, the kernel copying the
 * bytes once.  The one implementation for btl sm (get/put, the pml's
 * rendezvous) and coll sm (single-copy collectives).
 *
 * rail_cma_xfer moves bytes between iovec lists of any length: at most
 * RAIL_CMA_IOV_BATCH pieces of each side per system call (the kernel takes
 * IOV_MAX), a partial transfer continued where it stopped (even inside a
 * piece), EINTR retried.  A failure returns an MPI error class (MPI_ERR_ARG
 * where an address or length was wrong: EFAULT, EINVAL; MPI_ERR_OTHER
 * else), leaves the system's errno in errno and a sentence saying what
 * failed and why in rail_cma_error(), and warns once per process unless
 * the caller passes RAIL_CMA_QUIET (it reports the failure itself, or
 * expects it).
 *
 * SHARED SINGLE COPY.  One process copies by CMA at a fraction of
 * memcpy's rate, whatever the chunk or page size (the kernel's work per
 * page: 12-13 GB/s on the 2-core VMs it was measured on, a quarter of
 * memcpy);
 * two processes copying different chunks of one transfer at once move
 * twice that.  So where the process that owns the data would only wait
 * while another reads it (btl sm's get, a coll sm bcast's root or gather's
 * sender), it helps: the reader claims chunks from the front and reads
 * them; the helper claims chunks from the back and writes them into the
 * reader's buffer.  Their words live in memory both map (the caller's
 * segment; rail_cma_share_ctl_t points at them): the reader publishes its
 * transfer (rail_cma_share_desc_t) and a claim word, generation << 32 |
 * chunks the helper claimed << 16 | chunks the reader claimed; the reader
 * claims with one atomic add, the helper with a compare and swap; the
 * helper counts each chunk finished in the done word, plus
 * RAIL_CMA_SHARE_FAILED where the kernel refused it (the reader then
 * copies the helper's chunks again itself).  The reader waits only for
 * chunks the helper claimed, each being copied, so a helper that is busy
 * or comes late costs at most one chunk; at the end it clears the claim
 * word, so a late helper claims nothing.  The generation (the caller's,
 * never 0) names the transfer and its helper: a helper claims only from a
 * word carrying the generation it was told, never from another transfer's.
 */
#ifndef BASE_CMA_H
#define BASE_CMA_H

#include "base/rail.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Pieces of each side per system call: within IOV_MAX (1024), and the two
 * lists rail_cma_xfer builds take 8 KiB of stack. */
#define RAIL_CMA_IOV_BATCH 256

/* rail_cma_xfer flags */
#define RAIL_CMA_WRITE 1u   /* local to remote (process_vm_writev); else remote to local */
#define RAIL_CMA_QUIET 2u   /* no warning on failure */

/* Move bytes between local pieces and pieces of process pid's memory,
 * until either list ends; MPI_SUCCESS or an error class (above). */
int rail_cma_xfer(pid_t pid, const struct iovec *local, int n_local, const struct iovec *remote,
                  int n_remote, unsigned flags);

/* One contiguous piece each side. */
static inline int rail_cma_read(pid_t pid, void *local, uint64_t remote, size_t len,
                                unsigned flags)
{
    struct iovec l = {local, len}, r = {(void *)(uintptr_t)remote, len};
    return rail_cma_xfer(pid, &l, 1, &r, 1, flags & ~RAIL_CMA_WRITE);
}

static inline int rail_cma_write(pid_t pid, uint64_t remote, const void *local, size_t len,
                                 unsigned flags)
{
    struct iovec l = {(void *)local, len}, r = {(void *)(uintptr_t)remote, len};
    return rail_cma_xfer(pid, &l, 1, &r, 1, flags | RAIL_CMA_WRITE);
}

/* The calling thread's last failure, e.g. "process_vm_readv of 4096 bytes
 * from process 12 failed: No such process (it has exited)"; "" if none. */
const char *rail_cma_error(void);

/* Whether CMA works towards ourselves: 0, or the errno (ENOSYS without
 * CMA, EPERM under a seccomp filter). */
int rail_cma_probe_self(void);
/* Whether we can read process pid: the 8 bytes at addr there must hold
 * `expect` (the caller published both); 0, or the errno (EIO: another
 * value, or a short read). */
int rail_cma_probe_peer(pid_t pid, uint64_t addr, uint64_t expect);

/* How many times as long the kernel's copy between processes takes as
 * memcpy for 64 KiB, the best of 8 each; measured on this process's own
 * memory (the same page pinning as a peer's) at the first call, the same
 * figure afterwards; 1e9 where the kernel's copy fails.  A copy through
 * shared memory costs two memcpys and a synchronisation per piece, single
 * copy one kernel copy: coll sm's oversubscribed alltoalls and large
 * scatter blocks take single copy where this is below
 * RAIL_CMA_KERNEL_RATIO_MAX.
 *
 * The pml's messages both ways take the get below the larger
 * RAIL_CMA_KERNEL_RATIO_BOTH_WAYS_MAX: the probe's memcpy copies lines in
 * this core's cache, the pipeline's lines the other core wrote.  On an AMD
 * EPYC VM whose probe gave 7-8.6 (64 KiB: memcpy 0.6 us, the kernel 5.1),
 * np 2 exchanges of 256 KiB-4 MiB both ways took 0.70-0.85 of the
 * pipeline's time by the get (the pipeline's copies ran at about a quarter
 * of the probe's memcpy). */
double rail_cma_kernel_ratio(void);
#define RAIL_CMA_KERNEL_RATIO_MAX 4.0
#define RAIL_CMA_KERNEL_RATIO_BOTH_WAYS_MAX 10.0

/* ------------------------------------------------------ shared single copy */

/* Principle: a chunk's kernel copy should take over twice the ~1 us a
 * system call costs besides it, and each extra chunk costs a call and a
 * wait for the helper's last one, so two halves of at least 32 KiB.
 * Chunks: two halves, one per process, each at least
 * RAIL_CMA_SHARE_CHUNK_MIN bytes (whole pages), so a transfer is shared
 * from RAIL_CMA_SHARE_MIN bytes.  Each chunk is one system call, which
 * costs about a microsecond besides the copy: 32 KiB (2.5 us at the
 * kernel's 12-13 GB/s here) is the smallest piece clearly worth one (np 2
 * bcast of 64 KiB in two 32 KiB chunks: 2.4-2.6 us against 2.8-3.1 read
 * alone; four 16 KiB chunks were slower than alone).  Halves rather than
 * quarters: a reader and a polling helper on a 2-core VM, fastest 5%
 * of 1000-1500 transfers, policies in turns, 128 KiB 6.0-6.3 us in halves
 * against 9.1-9.5 in quarters of 32 KiB (alone 6.8-7.3), 256 KiB 8.6-9.2
 * against 11.4-12.2, 1 MiB 36-47 against 41-48 (alone 59-62); with the
 * helper starting 3 or 10 us late, halves were as fast or faster at every
 * size to 4 MiB but one (384 KiB, 10 us late: 19.5 against 18.1 us): more
 * chunks cost more calls and a wait for the helper's last one. */
#define RAIL_CMA_SHARE_CHUNK_MIN ((size_t)32 << 10)
#define RAIL_CMA_SHARE_MIN (2 * RAIL_CMA_SHARE_CHUNK_MIN)
/* Added to the done word per chunk the helper could not write: counted
 * above 32 bits (a bit of its own would carry away when two fail). */
#define RAIL_CMA_SHARE_FAILED ((uint64_t)1 << 32)

/* What the reader reads (written by it before the claim word). */
typedef struct rail_cma_share_desc {
    uint64_t dst;                  /* its buffer */
    uint64_t src;                  /* the data, in the helper */
    uint64_t len, chunk;
} rail_cma_share_desc_t;

/* Where one reader's words live: shared memory that its helpers map too. */
typedef struct rail_cma_share_ctl {
    uint64_t *claim;
    uint64_t *done;
    rail_cma_share_desc_t *desc;
} rail_cma_share_ctl_t;

/* A reader's transfer (its own memory). */
typedef struct rail_cma_share {
    rail_cma_share_ctl_t ctl;
    pid_t pid;                     /* the helper, who owns the data */
    uint32_t gen, nch;
    unsigned flags;                /* for the reader's copies (RAIL_CMA_QUIET) */
    char *dst;
    uint64_t src;
    size_t len, chunk;
    /* after rail_cma_share_read: */
    uint32_t mine;                 /* chunks the reader copied */
    uint32_t helped;               /* chunks the helper claimed (nch - mine) */
    bool failed;                   /* it could not write some: copied again here */
} rail_cma_share_t;

/* The chunk size of a shared transfer of len bytes. */
size_t rail_cma_share_chunk(size_t len);

/* Reader: publish a transfer of len bytes (at least RAIL_CMA_SHARE_MIN)
 * from src in process pid into dst, generation gen (not 0).  Then tell
 * the helper (or it polls) and call rail_cma_share_read; or, where the
 * helper could not be told, rail_cma_share_cancel. */
void rail_cma_share_publish(rail_cma_share_t *t, const rail_cma_share_ctl_t *ctl, uint32_t gen,
                            pid_t pid, void *dst, uint64_t src, size_t len, unsigned flags);
void rail_cma_share_cancel(rail_cma_share_t *t);
/* Reader: copy the chunks the helper does not claim, wait for those it
 * did, copy again those it could not write.  MPI_SUCCESS or the first
 * copy's error (every chunk is claimed even so: the helper never waits). */
int rail_cma_share_read(rail_cma_share_t *t);

/* rail_cma_share_help flags */
#define RAIL_CMA_SHARE_REFUSE 1u   /* testing: claim chunks and report them failed, unwritten */

/* Helper, whose memory holds the data: claim chunks of reader's transfer
 * of generation gen from the back and write them (at most max chunks;
 * stops after a chunk it could not write, setting *failed).  Returns the
 * chunks claimed, or -1 when the reader's word does not carry gen (not
 * published yet, or over). */
int rail_cma_share_help(const rail_cma_share_ctl_t *ctl, uint32_t gen, pid_t reader, uint32_t max,
                        unsigned flags, bool *failed);

#endif
