/*
 * coll sm: device buffers moved device to device by the processes
 * themselves (coll_sm_device_ipc).
 *
 * Where a collective has device buffers (broadcasts and scatters from
 * coll_sm_device_handoff_min bytes per process; gathers, allgathers and
 * alltoalls from coll_sm_device_blocks_min bytes in all and reductions
 * from coll_sm_device_ipc_reduce_min, every size above the slots by
 * default), each
 * process whose buffers the others will read publishes their IPC handles
 * (accel_ipc_handle_get) in a record at the start of its own area of the
 * operation's set, before the step
 * that tells the others it has device buffers (the device bit of its
 * control words; a record is read only when that bit is set, so host
 * processes' data in their areas are never taken for one).  After that
 * step everyone sees the same records.  If every record needed is there,
 * each process opens the others' handles (accel's cache of opened
 * handles: a peer's buffer is mapped once and kept; the mappings are held
 * until this operation's copies are done, so no other open, of this
 * operation or of another thread, closes them) and says in its record
 * whether it could, then posts coll_sm_dev_ready's step; only if everyone
 * could does the operation go on device to device, else everyone hands it
 * to the next component as before (tuned, whose large messages go by IPC
 * in the pml, or stage).  So a failure to open is never a hang: all take
 * the same branch.
 *
 *   bcast:     every receiver copies the root's buffer into its own; up
 *              to coll_sm_device_bcast_one_max bytes and from three
 *              processes, the receivers publish their buffers in a step
 *              of their own, and if the root can open them all it copies
 *              into every one in one launch while they wait (else each
 *              copies as before);
 *   allgather: every process copies each other's block (and its own
 *              where it has not yet) into its result;
 *   allreduce: every process reduces its 1/n slice of the result from
 *              everyone's input (the kernel reads the peers' buffers
 *              where they are), posts a step, then copies the others'
 *              slices from their results; not in place, where the
 *              size times the processes is at most
 *              coll_sm_device_allreduce_whole_max, each reduces the whole
 *              result instead, in one step; up to
 *              coll_sm_device_allreduce_one_max bytes, in place or not,
 *              process 0 alone reads every input and writes every
 *              result in one kernel (coll_sm_dev_ready_one: only it
 *              opens the others' handles) while the others wait for its
 *              FINAL and read in its record whether it succeeded;
 *   alltoall:  every process copies its block of each other's send
 *              buffer (and of its own) into its result (not in place);
 *              allgathers and alltoalls of contiguous results up to
 *              coll_sm_device_blocks_one_max bytes in all: process 0
 *              makes all n * n copies in one launch, as above (where
 *              some result is not contiguous, which every record says
 *              before step 2, everyone copies its own as before);
 *   scatter:   every receiver copies its block of the root's buffer;
 *   gather:    the root copies every other block from its owner;
 *   reduce:    every process reduces its 1/n slice from everyone's input
 *              into the root's result where it lies (the root's own input
 *              first where it is in place there);
 *   reduce_scatter: every process reduces its block from everyone's
 *              input where it lies (in place, into a device temporary
 *              copied home after a step that says everyone has read).
 *
 * Each process's own buffers are read or written by the others until
 * everyone's FINAL, which it waits for before returning.  Copies and
 * reductions go on one accel stream per module, synchronised before each
 * step is posted; the copies of a step go to accel_copy_many together.
 * MPI_T counter coll_sm_device_ipc: operations done so.
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_device.h"
#include "accel/accel.h"
#include "base/log.h"
#include "obj/err.h"

#include <stdlib.h>
#include <string.h>

uint64_t coll_sm_count_device_ipc;

typedef struct sm_dev_rec {
    uint64_t published;            /* h[0 .. nbuf - 1] are valid */
    uint64_t opened;               /* this process opened every handle it needs */
    uint64_t failed;               /* an operation done by one: that one's error */
    uint64_t one;                  /* coll_sm_dev_bcast_one: the root opened everyone's */
    uint64_t bytes[2];             /* of each buffer the others may read */
    uint64_t off[2];               /* of the buffer in its allocation */
    accel_ipc_handle_t h[2];
} sm_dev_rec_t;

_Static_assert(sizeof(sm_dev_rec_t) <= COLL_SM_PAGE, "a device record fits one page");

static sm_dev_rec_t *dev_rec(coll_sm_module_t *m, int r, uint64_t s)
{
    return (sm_dev_rec_t *)coll_sm_buf(m, r, coll_sm_set(m, s), 0);
}

void coll_sm_dev_publish(coll_sm_module_t *m, uint64_t s, const void *b0, size_t n0,
                         const void *b1, size_t n1)
{
    coll_sm_claim_set(m, s);   /* the record goes into this operation's set */
    sm_dev_rec_t *rec = dev_rec(m, m->me, s);
    const void *b[2] = { b0, b1 };
    size_t len[2] = { n0, n1 };
    bool ok = b0 != NULL;
    accel_mem_info_t info[2];
    for (int i = 0; i < 2 && ok; i++) {
        size_t off = 0;
        rec->bytes[i] = len[i];
        if (b[i] == NULL) {
            memset(&rec->h[i], 0, sizeof(rec->h[i]));
            rec->off[i] = 0;
            continue;
        }
        if (i == 1 && b[1] == b[0])
            info[1] = info[0];
        else
            ok = accel_memory_info(b[i], &info[i]) == MPI_SUCCESS &&
                 info[i].type != ACCEL_MEM_HOST;
        if (ok && i == 1 && info[1].id == info[0].id && info[1].base == info[0].base) {
            /* both in one allocation (in place, or two parts of one): one
             * handle, whose bytes another export of the allocation might
             * not repeat (a peer could not map it twice) */
            rec->h[1] = rec->h[0];
            rec->off[1] = (uint64_t)((const char *)b[1] - (const char *)info[1].base);
            continue;
        }
        ok = ok && accel_ipc_handle_get(b[i], &rec->h[i], &off) == MPI_SUCCESS;
        rec->off[i] = off;
    }
    rec->opened = 0;
    rec->published = ok ? 1 : 0;
}

static bool dev_ptrs(coll_sm_module_t *m)
{
    if (m->dev_ptr == NULL)
        m->dev_ptr = calloc(2 * (size_t)m->n, sizeof(char *));
    if (m->dev_held == NULL)
        m->dev_held = calloc(2 * (size_t)m->n, sizeof(void *));
    if (m->dev_in == NULL)
        m->dev_in = calloc((size_t)m->n, sizeof(void *));
    if (m->dev_cdst == NULL)
        m->dev_cdst = calloc((size_t)m->n, sizeof(void *));
    if (m->dev_clen == NULL)
        m->dev_clen = calloc((size_t)m->n, sizeof(size_t));
    return m->dev_ptr != NULL && m->dev_held != NULL && m->dev_in != NULL &&
           m->dev_cdst != NULL && m->dev_clen != NULL;
}

/* the mappings of this operation may be closed again (once its copies are done) */
static void dev_release(coll_sm_module_t *m)
{
    for (int i = 0; i < m->dev_nheld; i++)
        accel_ipc_handle_release(m->dev_held[i]);
    m->dev_nheld = 0;
}

/* For an operation done by one: the record offers its result buffer too
 * (where it has any data at all). */
static bool rec_has_result(const sm_dev_rec_t *r)
{
    return r->bytes[1] != 0 || r->bytes[0] == 0;
}

/* Records needed: root's (root >= 0), everyone's (-1), or with to_root
 * everyone's but the root's (gather; with root_rec the root's too),
 * opened by the root alone; of each, the first nbuf buffers. */
static bool dev_ready(coll_sm_module_t *m, uint64_t s, uint32_t step, int root, bool to_root,
                      bool root_rec, int nbuf)
{
    int lo = root < 0 || to_root ? 0 : root, hi = root < 0 || to_root ? m->n : root + 1;
    /* the same verdict everywhere: everyone reads the same records */
    for (int j = lo; j < hi; j++) {
        const sm_dev_rec_t *rj = dev_rec(m, j, s);
        if (!(to_root && j == root && !root_rec) && !rj->published)
            return false;
        /* done by one: everyone's result buffer too */
        if (root_rec && !rec_has_result(rj))
            return false;
    }
    bool mine = dev_ptrs(m);
    if (to_root && m->me != root)
        hi = lo;   /* a gather's sender opens nothing */
    /* every open holds its mapping (accel's cache closes no held one) until
     * dev_release */
    for (int j = lo; j < hi && mine; j++) {
        const sm_dev_rec_t *rj = dev_rec(m, j, s);
        for (int i = 0; i < 2 && mine; i++) {
            if (i >= nbuf || rj->bytes[i] == 0 || j == m->me) {
                m->dev_ptr[2 * j + i] = NULL;
                continue;
            }
            void *base;
            mine = accel_ipc_handle_open_cached(&rj->h[i], &base) == MPI_SUCCESS;
            if (mine)
                m->dev_held[m->dev_nheld++] = base;
            m->dev_ptr[2 * j + i] = mine ? (char *)base + rj->off[i] : NULL;
        }
    }
    if (!mine) {
        RAIL_VERBOSE(coll_sm_verbosity(), 1, "coll sm: cannot open a peer's device buffer by "
                     "IPC; the next component takes this operation");
        dev_release(m);
    }
    dev_rec(m, m->me, s)->opened = mine ? 1 : 0;
    coll_sm_post(m, COLL_SM_V(s, step));
    coll_sm_wait_all(m, COLL_SM_V(s, step));
    for (int j = 0; j < m->n; j++)
        if (!dev_rec(m, j, s)->opened) {
            dev_release(m);
            return false;
        }
    return true;
}

bool coll_sm_dev_ready(coll_sm_module_t *m, uint64_t s, uint32_t step, int root)
{
    return dev_ready(m, s, step, root, false, false, 2);
}

bool coll_sm_dev_ready_blocks(coll_sm_module_t *m, uint64_t s, uint32_t step)
{
    return dev_ready(m, s, step, -1, false, false, 1);
}

bool coll_sm_dev_ready_gather(coll_sm_module_t *m, uint64_t s, uint32_t step, int root)
{
    return dev_ready(m, s, step, root, true, false, 2);
}

bool coll_sm_dev_ready_one(coll_sm_module_t *m, uint64_t s, uint32_t step, int one)
{
    return dev_ready(m, s, step, one, true, true, 2);
}

bool coll_sm_dev_results_published(coll_sm_module_t *m, uint64_t s)
{
    for (int j = 0; j < m->n; j++) {
        const sm_dev_rec_t *rj = dev_rec(m, j, s);
        if (!rj->published || !rec_has_result(rj))
            return false;
    }
    return true;
}

static int dev_stream(coll_sm_module_t *m, accel_stream_t **st)
{
    if (m->dev_stream == NULL) {
        int rc = accel_stream_create(&m->dev_stream);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *st = m->dev_stream;
    return MPI_SUCCESS;
}

/* bytes of src (device memory of a peer) into d at offset off */
static int dev_take(coll_sm_module_t *m, const coll_sm_data_t *d, size_t off, const char *src,
                    size_t bytes, accel_stream_t *st)
{
    if (d->contig)
        return accel_copy(d->contig + off, src, bytes, st);
    /* a noncontiguous receive type: through host scratch, a chunk at a time */
    int rc = accel_stream_sync(st);
    for (size_t at = 0; at < bytes && rc == MPI_SUCCESS; at += m->chunk) {
        size_t len = RAIL_MIN(m->chunk, bytes - at);
        rc = accel_copy(m->scratch, src + at, len, NULL);
        if (rc == MPI_SUCCESS)
            rc = coll_sm_unpack(d, off + at, m->scratch, len);
    }
    return rc;
}

/* The end of a device-direct operation: my buffers are read until
 * everyone's FINAL. */
static int dev_finish(coll_sm_module_t *m, uint64_t s, accel_stream_t *st, int rc)
{
    if (st != NULL)
        rc = SM_KEEP(rc, accel_stream_sync(st));
    dev_release(m);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
    rail_atomic_add_fetch(&coll_sm_count_device_ipc, 1);
    return rc;
}

/* The end of an operation done by process 0 for everyone: its FINAL
 * says the results are there, its record whether they are (the record
 * stays until everyone's FINAL, which it waits for). */
static int dev_one_end(coll_sm_module_t *m, uint64_t s, accel_stream_t *st, int rc, int one)
{
    sm_dev_rec_t *r0 = dev_rec(m, one, s);
    if (m->me == one) {
        if (st != NULL)
            rc = SM_KEEP(rc, accel_stream_sync(st));
        r0->failed = rc != MPI_SUCCESS;   /* read by the others before their FINAL */
        return dev_finish(m, s, NULL, rc);
    }
    coll_sm_wait(m, one, COLL_SM_V(s, COLL_SM_FINAL));
    if (r0->failed)
        rc = obj_errf(MPI_ERR_OTHER, "coll sm: process %d of the communicator could not move "
                      "this operation's device buffers (see its error)", one);
    return dev_finish(m, s, NULL, rc);
}

/* A receiver's data from the root's published buffer, cut in blocks of
 * its bytes[0]: block `block` (bcast 0, scatter the receiver's rank). */
static int dev_from_root(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d,
                         size_t block)
{
    accel_stream_t *st = NULL;
    int rc = MPI_SUCCESS;
    if (m->me != root) {
        const sm_dev_rec_t *rr = dev_rec(m, root, s);
        size_t total = (size_t)rr->bytes[0], want = RAIL_MIN(total, d->bytes);
        rc = dev_stream(m, &st);
        if (rc == MPI_SUCCESS)
            rc = dev_take(m, d, 0, m->dev_ptr[2 * root] + block * total, want, st);
        if (rc == MPI_SUCCESS)
            rc = coll_check_length(-1, total, d->bytes);
    }
    return dev_finish(m, s, st, rc);
}

int coll_sm_dev_bcast(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d)
{
    return dev_from_root(m, s, root, d, 0);
}

bool coll_sm_dev_bcast_one(coll_sm_module_t *m, uint64_t s, uint32_t step, int root,
                           const coll_sm_data_t *d, size_t bytes, int *rc)
{
    sm_dev_rec_t *rr = dev_rec(m, root, s);
    *rc = MPI_SUCCESS;
    if (m->me != root) {
        /* my buffer, where it is contiguous device memory of the size */
        bool mine = d->device && d->contig != NULL && d->bytes == bytes;
        coll_sm_dev_publish(m, s, mine ? d->contig : NULL, bytes, NULL, 0);
        coll_sm_post(m, COLL_SM_V(s, step));
        coll_sm_wait(m, root, COLL_SM_V(s, step + 1));
        if (!rr->one)   /* (not `opened`: the root's next step may rewrite it) */
            return false;
        *rc = dev_one_end(m, s, NULL, MPI_SUCCESS, root);
        return true;
    }
    coll_sm_wait_all(m, COLL_SM_V(s, step));
    bool ok = dev_ptrs(m);
    for (int j = 0; j < m->n && ok; j++) {
        const sm_dev_rec_t *rj = dev_rec(m, j, s);
        void *base;
        if (j == root)
            continue;
        ok = rj->published && rj->bytes[0] == bytes &&
             accel_ipc_handle_open_cached(&rj->h[0], &base) == MPI_SUCCESS;
        if (ok) {
            m->dev_held[m->dev_nheld++] = base;
            m->dev_ptr[2 * j] = (char *)base + rj->off[0];
        }
    }
    if (!ok)
        dev_release(m);
    rr->one = ok;
    coll_sm_post(m, COLL_SM_V(s, step + 1));
    if (!ok)
        return false;
    /* every receiver's copy in one launch */
    accel_stream_t *st = NULL;
    int r = dev_stream(m, &st), k = 0;
    for (int j = 0; j < m->n && r == MPI_SUCCESS; j++) {
        if (j == root)
            continue;
        m->dev_cdst[k] = m->dev_ptr[2 * j];
        m->dev_in[k] = d->contig;
        m->dev_clen[k++] = bytes;
    }
    if (r == MPI_SUCCESS)
        r = accel_copy_many(m->dev_cdst, m->dev_in, m->dev_clen, k, st);
    *rc = dev_one_end(m, s, st, r, root);
    return true;
}

int coll_sm_dev_scatter(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d)
{
    return dev_from_root(m, s, root, d, (size_t)m->me);
}

/* Block j of the result r0 from each other process j: block `sel` of the
 * buffer j published, cut in `div` blocks; own (device memory, or NULL:
 * there already): my own block's source.  Into a contiguous result all
 * copies go to accel_copy_many at once (one kernel on a GPU, where one
 * cuMemcpyAsync each took ~10 us even on one stream: np 8 allgather of 64
 * KiB 93 us), else block by block through host scratch. */
static int dev_blocks(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0, size_t div,
                      size_t sel, const void *own)
{
    accel_stream_t *st = NULL;
    int rc = dev_stream(m, &st), k = 0;
    if (own != NULL && rc == MPI_SUCCESS) {
        coll_sm_data_t dm = coll_sm_data_at(r0, m->me * r0->count);
        m->dev_cdst[k] = dm.contig;
        m->dev_in[k] = own;
        m->dev_clen[k++] = r0->bytes;
    }
    for (int i = 1; i < m->n && rc == MPI_SUCCESS; i++) {
        int j = (m->me + i) % m->n;   /* not everyone at the same process first */
        size_t bj = (size_t)dev_rec(m, j, s)->bytes[0] / div;
        coll_sm_data_t dj = coll_sm_data_at(r0, j * r0->count);
        const char *src = m->dev_ptr[2 * j] + sel * bj;
        if (bj > r0->bytes)
            rc = obj_errf(MPI_ERR_TRUNCATE, "process %d sent %zu bytes, this process's "
                          "arguments hold %zu per process (type signatures differ)", j, bj,
                          r0->bytes);
        else if (dj.contig) {
            m->dev_cdst[k] = dj.contig;
            m->dev_in[k] = src;
            m->dev_clen[k++] = bj;
        } else {
            rc = dev_take(m, &dj, 0, src, bj, st);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = accel_copy_many(m->dev_cdst, m->dev_in, m->dev_clen, k, st);
    return dev_finish(m, s, st, rc);
}

/* Process 0 fills every process's result (published as buffer 1, n
 * blocks) from every process's buffer 0 (cut in `div` blocks: block i for
 * process i; send, recv: process 0's own) in one launch of n * n copies
 * (a block already where it goes, in place, skipped); the others wait. */
static int dev_blocks_one(coll_sm_module_t *m, uint64_t s, size_t div, const void *send,
                          char *recv)
{
    accel_stream_t *st = NULL;
    int rc = MPI_SUCCESS, n = m->n, k = 0;
    size_t nn = (size_t)n * (size_t)n;
    if (m->me == 0) {
        if (m->dev_one_cap < nn) {
            free(m->dev_one);
            m->dev_one = malloc(nn * (2 * sizeof(void *) + sizeof(size_t)));
            m->dev_one_cap = m->dev_one != NULL ? nn : 0;
        }
        rc = m->dev_one != NULL ? dev_stream(m, &st) : MPI_ERR_NO_MEM;
    }
    void **dst = NULL;
    const void **src = NULL;
    size_t *len = NULL;
    if (m->me == 0 && rc == MPI_SUCCESS) {
        dst = m->dev_one;
        src = (const void **)(dst + nn);
        len = (size_t *)(src + nn);
    }
    for (int i = 0; i < n && m->me == 0 && rc == MPI_SUCCESS; i++) {
        size_t ri = (size_t)dev_rec(m, i, s)->bytes[1] / (size_t)n;   /* i's block */
        char *rb = i == 0 ? recv : m->dev_ptr[2 * i + 1];
        for (int j = 0; j < n && rc == MPI_SUCCESS; j++) {
            size_t bj = (size_t)dev_rec(m, j, s)->bytes[0] / div;
            const char *sb = (j == 0 ? (const char *)send : m->dev_ptr[2 * j]) +
                             (div > 1 ? (size_t)i * bj : 0);
            if (bj > ri)
                rc = obj_errf(MPI_ERR_TRUNCATE, "process %d sent %zu bytes, process %d's "
                              "arguments hold %zu per process (type signatures differ)", j, bj,
                              i, ri);
            else if (rb + (size_t)j * ri != sb && bj > 0) {
                dst[k] = rb + (size_t)j * ri;
                src[k] = sb;
                len[k++] = bj;
            }
        }
    }
    if (rc == MPI_SUCCESS && k > 0)
        rc = accel_copy_many(dst, src, len, k, st);
    return dev_one_end(m, s, st, rc, 0);
}

int coll_sm_dev_allgather_one(coll_sm_module_t *m, uint64_t s, const void *send, char *recv)
{
    return dev_blocks_one(m, s, 1, send, recv);
}

int coll_sm_dev_alltoall_one(coll_sm_module_t *m, uint64_t s, const void *send, char *recv)
{
    return dev_blocks_one(m, s, (size_t)m->n, send, recv);
}

int coll_sm_dev_allgather(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0,
                          const void *own)
{
    return dev_blocks(m, s, r0, 1, 0, own);   /* each one's whole block */
}

int coll_sm_dev_gather(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *r0,
                       const void *own)
{
    if (m->me == root)
        return dev_blocks(m, s, r0, 1, 0, own);
    return dev_finish(m, s, NULL, MPI_SUCCESS);   /* my buffer is read until then */
}

int coll_sm_dev_alltoall(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0,
                         const void *own)
{
    /* j's block for me: the me-th of the n blocks of its send buffer */
    return dev_blocks(m, s, r0, (size_t)m->n, (size_t)m->me, own);
}

/* My 1/n slice of N elements of everyone's input folded into the same
 * elements of res, on *st (made here): the input of `first` is the first
 * operand (where res is that input it is there already), then the others,
 * each from its buffer, all in one pass where the device can
 * (accel_reduce_many). */
static int dev_fold(coll_sm_module_t *m, accel_stream_t **st, rail_op_t rop,
                    rail_typekind_t kind, size_t esz, size_t N, const char *in, char *res,
                    int first)
{
    size_t n = (size_t)m->n, lo = (size_t)m->me * N / n, len = (size_t)(m->me + 1) * N / n - lo;
    int rc = dev_stream(m, st);
    if (rc != MPI_SUCCESS || len == 0)
        return rc;
    int k = 0;
    for (int i = 0; i < m->n; i++) {
        int j = (first + i) % m->n;
        const char *x = j == m->me ? in : j == first ? res : m->dev_ptr[2 * j];
        m->dev_in[k++] = x + lo * esz;
    }
    return accel_reduce_many(rop, kind, m->dev_in, k, res + lo * esz, len, *st);
}

int coll_sm_dev_allreduce(coll_sm_module_t *m, uint64_t s, uint32_t step, rail_op_t rop,
                          rail_typekind_t kind, size_t esz, size_t N, const char *in, char *out)
{
    int n = m->n, me = m->me;
    accel_stream_t *st = NULL;
    if (in != out && N * esz * (size_t)n <= coll_sm_params.device_allreduce_whole_max) {
        /* not in place, and little to read: everyone folds the whole
         * result from everyone's input, in rank order on every process
         * (the same result everywhere), and no second step (on an H200
         * 1.5-1.8x faster up to 1 MiB at np 2 and 8: docs/performance.md) */
        int rc = dev_stream(m, &st);
        for (int j = 0; j < n; j++)
            m->dev_in[j] = j == me ? in : m->dev_ptr[2 * j];
        if (rc == MPI_SUCCESS && N > 0)
            rc = accel_reduce_many(rop, kind, m->dev_in, n, out, N, st);
        return dev_finish(m, s, st, rc);
    }
    /* my slice: my own input first (in place it is there already), then
     * everyone else's folded in, read from their buffers */
    int rc = dev_fold(m, &st, rop, kind, esz, N, in, out, me);
    rc = SM_KEEP(rc, accel_stream_sync(st));
    /* everyone's slice is done: the others' slices from their results */
    coll_sm_post(m, COLL_SM_V(s, step));
    coll_sm_wait_all(m, COLL_SM_V(s, step));
    int c = 0;
    for (int k = 1; k < n; k++) {
        int j = (me + k) % n;
        size_t l = (size_t)j * N / (size_t)n, h = (size_t)(j + 1) * N / (size_t)n;
        m->dev_cdst[c] = out + l * esz;
        m->dev_in[c] = m->dev_ptr[2 * j + 1] + l * esz;
        m->dev_clen[c++] = (h - l) * esz;
    }
    if (rc == MPI_SUCCESS)
        rc = accel_copy_many(m->dev_cdst, m->dev_in, m->dev_clen, c, st);
    return dev_finish(m, s, st, rc);
}

int coll_sm_dev_allreduce_one(coll_sm_module_t *m, uint64_t s, rail_op_t rop,
                              rail_typekind_t kind, size_t N, const char *in, char *out)
{
    /* one process launches and waits, the others only wait (under MPS
     * eight processes' launches and synchronisations of a small allreduce
     * took twice one's; in place, this needs no step between the reads
     * and the writes: one thread reads element i of every input, then
     * writes element i of every result) */
    accel_stream_t *st = NULL;
    int rc = MPI_SUCCESS;
    if (m->me == 0 && N > 0) {
        rc = dev_stream(m, &st);
        for (int j = 0; j < m->n; j++) {
            m->dev_in[j] = j == 0 ? in : m->dev_ptr[2 * j];
            m->dev_cdst[j] = j == 0 ? out : m->dev_ptr[2 * j + 1];
        }
        if (rc == MPI_SUCCESS)
            rc = accel_reduce_many_to(rop, kind, m->dev_in, m->n, m->dev_cdst, m->n, N, st);
    }
    return dev_one_end(m, s, st, rc, 0);
}

int coll_sm_dev_reduce_scatter(coll_sm_module_t *m, uint64_t s, uint32_t step, rail_op_t rop,
                               rail_typekind_t kind, size_t esz, size_t lo, size_t len,
                               const char *in, char *out)
{
    int n = m->n, me = m->me;
    accel_stream_t *st = NULL;
    int rc = dev_stream(m, &st);
    /* In place my input is my result buffer, whose block 0 (where my result
     * goes) others read until they are done: the result gathers in a
     * device temporary unless my block is block 0. */
    char *res = out, *tmp = NULL;
    if (in == out && lo != 0 && len > 0 && rc == MPI_SUCCESS) {
        tmp = accel_alloc_device(len * esz, out);
        if (tmp == NULL)
            rc = obj_errf(MPI_ERR_NO_MEM, "coll sm: no device memory for a reduce_scatter "
                          "result of %zu bytes", len * esz);
        res = tmp;
    }
    if (rc == MPI_SUCCESS && len > 0) {
        /* mine first, then the others from their buffers, in one pass */
        for (int k = 0; k < n; k++) {
            int j = (me + k) % n;
            m->dev_in[k] = (j == me ? in : m->dev_ptr[2 * j]) + lo * esz;
        }
        rc = accel_reduce_many(rop, kind, m->dev_in, n, res, len, st);
    }
    if (in == out) {
        /* everyone has read my input */
        rc = SM_KEEP(rc, accel_stream_sync(st));
        coll_sm_post(m, COLL_SM_V(s, step));
        coll_sm_wait_all(m, COLL_SM_V(s, step));
        if (tmp != NULL && rc == MPI_SUCCESS)
            rc = accel_copy(out, tmp, len * esz, st);
    }
    rc = dev_finish(m, s, st, rc);
    if (tmp != NULL)
        accel_free_device(tmp);
    return rc;
}

int coll_sm_dev_reduce(coll_sm_module_t *m, uint64_t s, int root, rail_op_t rop,
                       rail_typekind_t kind, size_t esz, size_t N, const char *in, char *out)
{
    accel_stream_t *st = NULL;
    /* my slice of the root's result, written where it lies; the root's
     * input in place is that result, so it is the first operand there */
    bool at_root = m->me == root;
    char *res = at_root ? out : m->dev_ptr[2 * root + 1];
    const char *rin = at_root ? in : m->dev_ptr[2 * root];
    int rc = dev_fold(m, &st, rop, kind, esz, N, in, res, rin == res ? root : m->me);
    return dev_finish(m, s, st, rc);
}
