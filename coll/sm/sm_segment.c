/*
 * coll sm: the communicator's segment, set up at its first sm collective.
 *
 *   rank 0                                  rank r > 0
 *   create /dev/shm/rail-<jobid>-csm-...,
 *   size it, map it, write the header  -->  name (or "" when that failed)
 *                                           map it, check the header
 *   collect the answers               <--  1 (mapped) / 0
 *   unlink the name
 *   verdict: 1 when all mapped        -->  READY, or OFF (unmap)
 *
 * All messages are point-to-point in the collective context with one tag
 * of the communicator's sequence, taken by every process in the same call.
 * After the exchange nothing is left in /dev/shm; a crash during it leaves
 * a rail-<jobid>-* file that the launcher removes.
 *
 * The layout (buffers, slots and their sizes) is decided in sm_layout.c.
 *
 * REUSE.  Making a segment costs milliseconds (allocating and faulting in
 * megabytes), so a freed communicator's segment stays mapped in a small
 * per-process cache (coll_sm_segment_cache entries holding at most
 * coll_sm_segment_cache_bytes of /dev/shm, sm_held, and SM_CACHE_WHOLE of
 * those allocated whole; least recently freed evicted), with the members'
 * world ranks and where its sequence numbers stood.  When rank 0 of a new
 * communicator holds one with exactly the new membership, its first
 * message offers it (the segment's id and
 * sequence numbers) instead of a name; every process answers whether it
 * holds the same entry, and if all do, all continue on it from those
 * sequence numbers (flags stay monotonic, so nothing needs resetting).
 * Every member freed the old communicator before answering, after its
 * last operation on it, so no process still reads it.  Otherwise the offer
 * is dropped everywhere and a fresh segment follows as above.
 */
#include "coll/sm/sm_layout.h"
#include "coll/sm/sm_slots.h"
#include "accel/accel.h"
#include "base/log.h"
#include "obj/err.h"
#include "runtime/rte.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SM_NAME_MAX 128

/* Answer and verdict bits of the setup exchange. */
enum { SM_OK_MAPPED = 1, SM_OK_CMA = 2, SM_OK_REUSE = 4 };

/* Rank 0's first message: a cached segment to reuse (id != 0) or a name. */
typedef struct sm_offer {
    uint64_t id, seq, small_seq;
    char name[SM_NAME_MAX];
} sm_offer_t;

/* A freed communicator's segment, kept for the next one of the same members. */
typedef struct sm_cached {
    char *seg;
    size_t seg_size;
    uint64_t id, seq, small_seq;
    uint8_t verdict;
    bool populated;                /* this process's buffers faulted in */
    int bulk_ready;                /* ... and how many of its bulk slots */
    size_t held;                   /* bytes of /dev/shm it holds (sm_held) */
    bool whole;                    /* allocated at once (a small /dev/shm) */
    int n;
    int *world;                    /* members' world ranks, in comm rank order */
} sm_cached_t;

#define SM_CACHE_MAX 16
/* Segments allocated whole (a small /dev/shm, ROOM) kept at most, as
 * before the byte bound: the btl sm segments and new communicators need
 * the room (a container's 64 MiB). */
#define SM_CACHE_WHOLE 4
static sm_cached_t sm_cache[SM_CACHE_MAX];   /* oldest first */
static int sm_cache_n;
uint64_t coll_sm_count_created, coll_sm_count_reused, coll_sm_count_alltoall_cma;
uint64_t coll_sm_count_populated, coll_sm_count_reserved, coll_sm_count_slot_doublings,
    coll_sm_count_bulk_populated;
uint64_t coll_sm_count_alltoall_streamed, coll_sm_count_allgather_streamed;
uint64_t coll_sm_count_bcast_chunks_in, coll_sm_count_gather_chunks_in;
uint64_t coll_sm_count_gather_cma;
uint64_t coll_sm_count_scatter_cma;

/* Read by the others through CMA at setup: can they read our memory? */
static const uint64_t sm_probe_word = COLL_SM_MAGIC;

int coll_sm_cma_status(int rc)
{
    return rc == MPI_SUCCESS ? rc : obj_errf(MPI_ERR_OTHER, "coll sm: %s", rail_cma_error());
}

int coll_sm_cma_read(int32_t pid, uint64_t remote, void *local, size_t len)
{
    return coll_sm_cma_status(rail_cma_read((pid_t)pid, local, remote, len, RAIL_CMA_QUIET));
}

int coll_sm_cma_write(int32_t pid, uint64_t remote, const void *local, size_t len)
{
    return coll_sm_cma_status(rail_cma_write((pid_t)pid, remote, local, len, RAIL_CMA_QUIET));
}

/* Map len bytes at addr in one call (allocating what is not yet); false
 * with errno where the kernel would not.  `touch`: then page by page
 * (only where the pages are allocated already: else a fault past the
 * room left raises SIGBUS). */
static bool sm_populate(void *addr, size_t len, bool touch)
{
    /* from the start of addr's page (madvise wants it; pages may be larger
     * than COLL_SM_PAGE) */
    size_t page = (size_t)RAIL_MAX(sysconf(_SC_PAGESIZE), 1L);   /* (no system call) */
    size_t skew = (uintptr_t)addr % page;
    addr = (char *)addr - skew;
    len = len ? len + skew : 0;
    int rc;
    while (len && (rc = madvise(addr, len, MADV_POPULATE_WRITE)) != 0 &&
           (errno == EINTR || errno == EAGAIN))
        ;
    if (!len || rc == 0)
        return true;
    int err = errno;
    for (size_t off = 0; touch && off < len; off += COLL_SM_PAGE)
        __atomic_fetch_add((uint64_t *)((char *)addr + off), 0, __ATOMIC_RELAXED);
    errno = err;
    return false;
}

/* ROOM.  The creator allocates the segment in /dev/shm (posix_fallocate)
 * before anyone maps it, so that no access can fault past the room left
 * (SIGBUS); allocating takes time (np 4: 1.6 ms for 22 MiB, most of it
 * the buffers), while the others wait.  Where /dev/shm has at least
 * SM_LAZY_ROOM times the segment free, the segment is allocated piece by
 * piece with MADV_POPULATE_WRITE (which fails instead of faulting) where
 * it is first used: by the creator the header, flags and the slots in use
 * at first (GROWTH in sm_small.c); by every process the slots newly in
 * use at each doubling (coll_sm_slots_grow), and its own bulk slots
 * (coll_sm_bulk_populate) and buffers (coll_sm_begin) before it first
 * writes them.  A communicator whose collectives all fit 16 slots
 * allocates 16 slots (np 4 on 2 cores: 0.1 MiB, against 6 MiB with all
 * 256 slots and the bulk slots).  Should /dev/shm fill up meanwhile, the
 * job ends with a message (sm_no_room). */
#define SM_LAZY_ROOM 16

static void sm_no_room(size_t len, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "coll sm: /dev/shm has no room left for %s of a communicator "
             "(%zu bytes, allocated at their first use): %s; enlarge /dev/shm (docker run "
             "--shm-size) or set RAIL_COLL=^sm", what, len,
             errno == EFAULT ? "it is full" : strerror(errno));
    rte_abort(1, msg);
}

static void *sm_map(int fd, size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Our flag before the first operation: "operation seq0 is over". */
static void sm_flag_init(coll_sm_module_t *m)
{
    m->seq = m->seq0 = coll_sm_params.seq_start;
    rail_atomic_store_release(&coll_sm_ctl(m, m->me)->flag, COLL_SM_V(m->seq0, COLL_SM_FINAL));
}

/* Rank 0: create /dev/shm's `name` for a segment of layout l for n
 * processes and map it, allocated whole or where used (*lazy: ROOM), with
 * the header, flags and the slots in use at first mapped; NULL (the name
 * unlinked) on failure. */
static void *sm_create_map(const char *name, const coll_sm_layout_t *l, int n, bool *lazy)
{
    size_t size = l->size;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    size_t free_now = rte_shm_free();
    *lazy = free_now != SIZE_MAX && free_now / SM_LAZY_ROOM >= size;
    int err = fd < 0                            ? errno
              : ftruncate(fd, (off_t)size) != 0 ? errno
              : *lazy                           ? 0
                                                : posix_fallocate(fd, 0, (off_t)size);
    void *seg = err ? NULL : sm_map(fd, size);
    /* the header, flags and the slots in use at first (GROWTH) mapped now,
     * in one call (and, lazy, allocated: ROOM); where the kernel cannot
     * (before 5.14) or /dev/shm filled up since, everything allocated now */
    size_t head = coll_sm_slots_end(l->slot_off, n, l->slots_start, l->slot_size);
    if (seg && *lazy && !sm_populate(seg, head, false)) {
        *lazy = false;
        if ((err = posix_fallocate(fd, 0, (off_t)size)) != 0) {
            munmap(seg, size);
            seg = NULL;
        }
    }
    if (seg && !*lazy)
        sm_populate(seg, head, true);
    if (!seg) {
        rail_warn("coll sm: cannot create /dev/shm%s (%zu bytes): %s; collectives of this "
                  "communicator use the next component", name, size,
                  strerror(err ? err : errno));
        if (fd >= 0) {
            close(fd);
            shm_unlink(name);
        }
        return NULL;
    }
    close(fd);
    return seg;
}

/* Rank 0: a fresh segment's header, from its layout l (serial: this
 * process's count of segments made before). */
static void sm_write_header(coll_sm_module_t *m, const coll_sm_layout_t *l, bool lazy,
                            uint32_t serial)
{
    coll_sm_hdr_t *h = m->hdr;
    h->size = l->size;
    h->n = (uint32_t)m->n;
    h->chunk = (uint32_t)l->chunk;
    h->sets = (uint32_t)l->sets;
    h->nbuf = (uint32_t)l->nbuf;
    h->ctl_off = l->ctl_off;
    h->data_off = l->data_off;
    h->probe = (uint64_t)(uintptr_t)&sm_probe_word;
    h->id = (uint64_t)(uint32_t)rte_info.rank << 32 | ((uint64_t)serial + 1);
    h->slot_off = l->slot_off;
    h->slot_size = (uint32_t)l->slot_size;
    h->slots = (uint32_t)l->slots;
    h->bulk_off = l->bulk_off;
    h->bulk_size = (uint32_t)l->bulk_size;
    h->bulk_slots = (uint32_t)l->bulk_slots;
    h->nofence = l->nofence && coll_sm_membarrier_registered();
    h->lazy = lazy;
    h->slots_start = (uint32_t)l->slots_start;
}

/* Rank 0: create, size, map and fill the segment; *name "" on failure. */
static void sm_create(coll_sm_module_t *m, char *name)
{
    static uint32_t counter;
    coll_sm_layout_t l;
    char suffix[64];
    bool lazy;
    coll_sm_layout_plan(m->n, &l);
    uint32_t serial = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    snprintf(suffix, sizeof(suffix), "csm-%d-%u", rte_info.rank, serial);
    void *seg = rte_shm_name(name, SM_NAME_MAX, suffix) == MPI_SUCCESS
                    ? sm_create_map(name, &l, m->n, &lazy) : NULL;
    if (!seg) {
        name[0] = '\0';
        return;
    }
    m->seg = seg;
    m->seg_size = l.size;
    m->hdr = seg;
    sm_write_header(m, &l, lazy, serial);
    if (!lazy)
        rail_atomic_add_fetch(&coll_sm_count_reserved, 1);
    coll_sm_ctl(m, 0)->pid = (int32_t)getpid();
    coll_sm_ctl(m, 0)->accel = accel_any_device_active ? 1 : 0;
    sm_flag_init(m);
    rail_atomic_store_release(&m->hdr->magic, COLL_SM_MAGIC);
}

/* The header, flags and slots up to the first `slots` of every process
 * (slot-major: they lie together). */
static size_t sm_head_len(const coll_sm_module_t *m, int slots)
{
    return coll_sm_slots_end(m->hdr->slot_off, m->n, slots, m->hdr->slot_size);
}

void coll_sm_slots_grow(coll_sm_module_t *m, uint64_t t)
{
    int before = m->slots_on;
    coll_sm_slots_phase(m, t);
    /* the slots new in use mapped in one call, not page by page (GROWTH) */
    size_t from = sm_head_len(m, before) / COLL_SM_PAGE * COLL_SM_PAGE;
    size_t len = sm_head_len(m, m->slots_on) - from;
    if (!sm_populate(m->seg + from, len, !m->hdr->lazy) && m->hdr->lazy)
        sm_no_room(len, "the small-operation slots");
    rail_atomic_add_fetch(&coll_sm_count_slot_doublings, 1);
}

void coll_sm_bulk_populate(coll_sm_module_t *m, int upto)
{
    if (upto <= m->bulk_ready)
        return;
    size_t len = (size_t)(upto - m->bulk_ready) * m->bulk_stride;
    if (!sm_populate(coll_sm_bulk(m, m->me, m->bulk_ready), len, !m->hdr->lazy) &&
        m->hdr->lazy)
        sm_no_room(len, "this process's bulk slots");
    m->bulk_ready = upto;
    rail_atomic_add_fetch(&coll_sm_count_bulk_populated, 1);
}

/* Rank > 0: map the segment named `name` and check it. */
static bool sm_attach(coll_sm_module_t *m, const char *name)
{
    struct stat st;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(coll_sm_hdr_t)) {
        rail_warn("coll sm: cannot open /dev/shm%s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    void *seg = sm_map(fd, (size_t)st.st_size);
    close(fd);
    coll_sm_hdr_t *h = seg;
    if (!seg || rail_atomic_load_acquire(&h->magic) != COLL_SM_MAGIC ||
        h->size != (uint64_t)st.st_size || h->n != (uint32_t)m->n) {
        rail_warn("coll sm: /dev/shm%s is not this communicator's segment", name);
        if (seg)
            munmap(seg, (size_t)st.st_size);
        return false;
    }
    m->seg = seg;
    m->seg_size = (size_t)st.st_size;
    m->hdr = h;
    return true;
}

/* The module's view of a mapped segment (hdr set) and the verdict. */
static void sm_take_layout(coll_sm_module_t *m, uint8_t verdict)
{
    m->chunk = m->hdr->chunk;
    m->sets = (int)m->hdr->sets;
    m->nbuf = (int)m->hdr->nbuf;
    m->slot_size = m->hdr->slot_size;
    m->slot_stride = coll_sm_slot_stride(m->slot_size);
    m->bulk_size = m->hdr->bulk_size;
    m->bulk_stride = m->bulk_size ? coll_sm_bulk_stride(m->bulk_size) : 0;
    m->bulk_slots = (int)m->hdr->bulk_slots;
    m->slots = (int)m->hdr->slots;
    m->slots_start = (int)m->hdr->slots_start;
    /* BULK in sm_small.c: bulk slots in use, growing as the slots do */
    m->bulk_count = 0;
    m->bulk_next = 0;
    m->bulk_on = coll_sm_grown((uint64_t)RAIL_MIN(m->slots_start, m->bulk_slots),
                               (uint64_t)m->bulk_slots, 0, &m->bulk_until);
    m->nofence = m->hdr->nofence && coll_sm_membarrier_registered();
    m->small_seq = 0;
    coll_sm_slots_phase(m, 0);
    m->small_min = 0;
    m->verdict = verdict;
    /* every answer came before the verdict, so every ctl word is written */
    m->host_only = true;
    for (int r = 0; r < m->n; r++)
        m->host_only = m->host_only && coll_sm_ctl(m, r)->accel == 0;
    m->cma = (verdict & SM_OK_CMA) && (coll_sm_params.cma_min > 0 || coll_sm_params.adapt_min > 0 ||
                                          coll_sm_params.adapt_agree_min > 0 ||
                                          coll_sm_params.adapt_blocks_min > 0);
}

static void sm_finish(coll_sm_module_t *m, uint8_t verdict)
{
    if (!(verdict & SM_OK_MAPPED)) {
        coll_sm_segment_release(m);
        m->state = COLL_SM_OFF;
        return;
    }
    sm_take_layout(m, verdict);
    m->populated = false;   /* at the first operation through the buffers */
    m->bulk_ready = 0;
    m->state = COLL_SM_READY;
    rail_atomic_add_fetch(&coll_sm_count_created, 1);
}

/* Private memory of the module; before the answer, so that a failure is
 * everyone's verdict. */
static bool sm_alloc_private(coll_sm_module_t *m)
{
    m->scratch = malloc(2 * (size_t)m->hdr->chunk);
    m->small_seen = calloc((size_t)m->n, sizeof(uint64_t));
    m->small_starts = calloc((size_t)m->n, sizeof(MPI_Count));
    m->small_x = calloc((size_t)m->n, sizeof(char *));
    m->bulk_t = calloc(RAIL_MAX((size_t)m->hdr->bulk_slots, (size_t)1), sizeof(uint64_t));
    return m->scratch && m->small_seen && m->small_starts && m->small_x && m->bulk_t;
}

static void sm_free_private(coll_sm_module_t *m)
{
    free(m->scratch);
    free(m->small_seen);
    free(m->small_starts);
    free(m->small_x);
    free(m->bulk_t);
    m->bulk_t = NULL;
    m->scratch = NULL;
    m->small_seen = NULL;
    m->small_starts = NULL;
    m->small_x = NULL;
}

/* ------------------------------------------------------------ reuse */

/* The cache is shared by the threads of the process (communicators may be
 * freed and set up concurrently): entries are taken out under the lock
 * and owned by the setup that took them until adopted or unmapped. */
static pthread_mutex_t sm_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t sm_cache_held;   /* the entries' held bytes together */

static bool sm_cache_members(const sm_cached_t *e, const obj_comm_t *comm)
{
    if (e->n != comm->size)
        return false;
    for (int i = 0; i < e->n; i++)
        if (e->world[i] != obj_group_world_rank(comm->group, i))
            return false;
    return true;
}

/* Take entry i out of the cache (the lock held). */
static sm_cached_t sm_cache_remove(int i)
{
    sm_cached_t e = sm_cache[i];
    memmove(&sm_cache[i], &sm_cache[i + 1], (size_t)(sm_cache_n - i - 1) * sizeof(sm_cache[0]));
    sm_cache_n--;
    sm_cache_held -= e.held;
    return e;
}

static void sm_cached_free(sm_cached_t *e, bool unmap)
{
    if (unmap && e->seg)
        munmap(e->seg, e->seg_size);
    free(e->world);
    memset(e, 0, sizeof(*e));
}

/* Take out the most recently freed entry for comm's members (comm != NULL)
 * or the one with `id`; false when there is none. */
static bool sm_cache_take(const obj_comm_t *comm, uint64_t id, sm_cached_t *out)
{
    bool found = false;
    pthread_mutex_lock(&sm_cache_lock);
    for (int i = sm_cache_n - 1; i >= 0 && !found; i--) {
        if (comm ? !sm_cache_members(&sm_cache[i], comm) : sm_cache[i].id != id)
            continue;
        *out = sm_cache_remove(i);
        found = true;
    }
    pthread_mutex_unlock(&sm_cache_lock);
    return found;
}

/* Continue on entry e (every member holds it; private memory allocated). */
static void sm_adopt(coll_sm_module_t *m, sm_cached_t *e)
{
    m->seg = e->seg;
    m->seg_size = e->seg_size;
    m->hdr = (coll_sm_hdr_t *)e->seg;
    sm_take_layout(m, e->verdict);
    m->seq = m->seq0 = e->seq;     /* every flag already says e->seq is over */
    m->small_seq = e->small_seq;
    coll_sm_slots_phase(m, m->small_seq);
    m->populated = e->populated;
    m->bulk_ready = e->bulk_ready;
    m->state = COLL_SM_READY;
    e->seg = NULL;
    sm_cached_free(e, false);
    rail_atomic_add_fetch(&coll_sm_count_reused, 1);
}

/* Rank 0's offer of e (e->seg NULL: none) answered with verdict `all`:
 * adopt it, or unmap it and forget the private memory. */
static bool sm_offer_done(coll_sm_module_t *m, sm_cached_t *e, uint8_t all)
{
    if (e->seg && (all & SM_OK_REUSE)) {
        sm_adopt(m, e);
        return true;
    }
    RAIL_VERBOSE(m->me == 0 ? coll_sm_verbosity() : 0, 2,
                 "coll sm: a freed communicator's segment offered for reuse was refused by "
                 "some process; making a fresh one");
    sm_free_private(m);
    m->hdr = NULL;
    sm_cached_free(e, true);
    return false;
}

/* Bytes of /dev/shm m's segment, allocated where used (ROOM), holds as far
 * as this process knows: the header, flags and slots in use, the bulk
 * slots and the buffers, taking the others' bulk slots and buffers to be
 * as far as its own. */
static size_t sm_held(const coll_sm_module_t *m)
{
    size_t n = (size_t)m->n;
    return sm_head_len(m, m->slots_on) + n * (size_t)m->bulk_ready * m->bulk_stride +
           (m->populated ? n * coll_sm_rank_stride(m) : 0);
}

void coll_sm_segment_keep(coll_sm_module_t *m, obj_comm_t *comm)
{
    int max = RAIL_MIN(coll_sm_params.segment_cache, SM_CACHE_MAX);
    if (m->state != COLL_SM_READY || !m->seg || max <= 0) {
        coll_sm_segment_release(m);
        return;
    }
    /* segments allocated where used count by their bytes, those allocated
     * whole (a small /dev/shm, or a kernel before 5.14) by their number,
     * SM_CACHE_WHOLE at most (the same decision everywhere: whole or not
     * is the creator's) */
    bool whole = !m->hdr->lazy;
    size_t held = whole ? 0 : sm_held(m), cap = coll_sm_params.segment_cache_bytes;
    int *world = NULL;
    if (held > cap || !(world = malloc((size_t)comm->size * sizeof(int)))) {
        coll_sm_segment_release(m);
        return;
    }
    for (int i = 0; i < comm->size; i++)
        world[i] = obj_group_world_rank(comm->group, i);
    sm_cached_t old[SM_CACHE_MAX];
    int n_old = 0;
    pthread_mutex_lock(&sm_cache_lock);
    /* the least recently freed go first */
    int n_whole = 0;
    for (int i = 0; i < sm_cache_n; i++)
        n_whole += sm_cache[i].whole;
    while (sm_cache_n > 0 && (sm_cache_n >= max || sm_cache_held + held > cap ||
                              (whole && n_whole >= SM_CACHE_WHOLE))) {
        int i = 0;
        while (whole && n_whole >= SM_CACHE_WHOLE && !sm_cache[i].whole)
            i++;
        n_whole -= sm_cache[i].whole;
        old[n_old++] = sm_cache_remove(i);
    }
    sm_cache[sm_cache_n++] = (sm_cached_t){ m->seg,       m->seg_size,   m->hdr->id,
                                            m->seq,       m->small_seq,  m->verdict,
                                            m->populated, m->bulk_ready, held,
                                            whole,        comm->size,    world };
    sm_cache_held += held;
    pthread_mutex_unlock(&sm_cache_lock);
    for (int i = 0; i < n_old; i++)
        sm_cached_free(&old[i], true);
    m->seg = NULL;
    m->hdr = NULL;
    m->seg_size = 0;
}

/* ------------------------------------------------------------ exchange */

static int sm_setup_root(coll_sm_module_t *m, obj_comm_t *comm, int tag)
{
    obj_datatype_t *byte = coll_byte_type();
    int rc = MPI_SUCCESS;
    sm_cached_t e = { 0 };
    sm_cache_take(comm, 0, &e);
    for (;;) {
        sm_offer_t offer;
        memset(&offer, 0, sizeof(offer));
        uint8_t all;
        if (e.seg) {
            offer.id = e.id;
            offer.seq = e.seq;
            offer.small_seq = e.small_seq;
            m->hdr = (coll_sm_hdr_t *)e.seg;
            all = sm_alloc_private(m) ? SM_OK_REUSE : 0;
        } else {
            all = SM_OK_MAPPED | SM_OK_CMA;
            sm_create(m, offer.name);
            if (!offer.name[0] || !sm_alloc_private(m))
                all = 0;
        }
        for (int r = 1; r < m->n && rc == MPI_SUCCESS; r++)
            rc = coll_send(&offer, sizeof(offer), byte, r, tag, comm);
        for (int r = 1; r < m->n && rc == MPI_SUCCESS; r++) {
            uint8_t ok = 0;
            rc = coll_recv(&ok, 1, byte, r, tag, comm);
            all &= ok;
        }
        if (offer.name[0])
            shm_unlink(offer.name);
        for (int r = 1; r < m->n && rc == MPI_SUCCESS; r++)
            rc = coll_send(&all, 1, byte, r, tag, comm);
        if (rc != MPI_SUCCESS) {
            if (e.seg) {
                m->hdr = NULL;
                sm_cached_free(&e, true);
            }
            return rc;
        }
        if (!offer.id) {
            sm_finish(m, all);
            return MPI_SUCCESS;
        }
        if (sm_offer_done(m, &e, all))
            return MPI_SUCCESS;
        /* not everyone had it: a fresh segment */
    }
}

static int sm_setup_other(coll_sm_module_t *m, obj_comm_t *comm, int tag)
{
    obj_datatype_t *byte = coll_byte_type();
    for (;;) {
        sm_offer_t offer;
        uint8_t ok = 0, all = 0;
        int rc = coll_recv(&offer, sizeof(offer), byte, 0, tag, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        offer.name[SM_NAME_MAX - 1] = '\0';
        if (offer.id) {
            sm_cached_t e = { 0 };
            if (sm_cache_take(NULL, offer.id, &e) && e.seq == offer.seq &&
                e.small_seq == offer.small_seq && sm_cache_members(&e, comm)) {
                m->hdr = (coll_sm_hdr_t *)e.seg;
                if (sm_alloc_private(m))
                    ok = SM_OK_REUSE;
            }
            rc = coll_send(&ok, 1, byte, 0, tag, comm);
            if (rc == MPI_SUCCESS)
                rc = coll_recv(&all, 1, byte, 0, tag, comm);
            if (rc != MPI_SUCCESS) {
                m->hdr = NULL;
                sm_cached_free(&e, true);
                return rc;
            }
            if (sm_offer_done(m, &e, all))
                return MPI_SUCCESS;
            continue;            /* a fresh segment follows */
        }
        if (offer.name[0] && sm_attach(m, offer.name) && sm_alloc_private(m)) {
            /* the header, flags and the slots in use at first (GROWTH)
             * mapped now, in one call, not page by page at first touch: on
             * a VM each fault may trap
             * (np 8 on 2 cores with 1024 slots, 13 MiB each process
             * touches: alltoalls of 8 B at 200 us per call against 32
             * until every page was touched) */
            sm_populate(m->seg, sm_head_len(m, (int)m->hdr->slots_start), true);
            coll_sm_ctl(m, m->me)->pid = (int32_t)getpid();
            coll_sm_ctl(m, m->me)->accel = accel_any_device_active ? 1 : 0;
            sm_flag_init(m);
            ok = SM_OK_MAPPED;
            if (rail_cma_probe_peer((pid_t)coll_sm_ctl(m, 0)->pid, m->hdr->probe,
                                    COLL_SM_MAGIC) == 0)
                ok |= SM_OK_CMA;
        }
        rc = coll_send(&ok, 1, byte, 0, tag, comm);
        if (rc == MPI_SUCCESS)
            rc = coll_recv(&all, 1, byte, 0, tag, comm);
        if (rc == MPI_SUCCESS)
            sm_finish(m, all);
        else
            coll_sm_segment_release(m);
        return rc;
    }
}

int coll_sm_segment_setup(coll_sm_module_t *m, obj_comm_t *comm)
{
    int tag = coll_tag_next(comm);
    int rc = m->me == 0 ? sm_setup_root(m, comm, tag) : sm_setup_other(m, comm, tag);
    if (rc != MPI_SUCCESS) {
        coll_sm_segment_release(m);
        m->state = COLL_SM_OFF;
        return rc;
    }
    RAIL_VERBOSE(m->me == 0 ? coll_sm_verbosity() : 0, 1,
                 "coll sm: communicator %s (context %u, %d processes): %s",
                 comm->name[0] ? comm->name : "(unnamed)", comm->context_id, m->n,
                 m->state != COLL_SM_READY ? "no segment: using the next component"
                 : m->seq0 != coll_sm_params.seq_start && m->seq == m->seq0
                     ? "shared-memory segment of a freed communicator reused"
                     : "shared-memory segment ready");
    if (m->state == COLL_SM_READY)
        RAIL_VERBOSE(m->me == 0 ? coll_sm_verbosity() : 0, 2,
                     "coll sm: segment of %zu bytes, buffers of %zu bytes, single copy %s",
                     m->seg_size, m->chunk, m->cma ? "on" : "off");
    return MPI_SUCCESS;
}

void coll_sm_segment_release(coll_sm_module_t *m)
{
    if (m->seg)
        munmap(m->seg, m->seg_size);
    m->seg = NULL;
    m->hdr = NULL;
    m->seg_size = 0;
}

int coll_sm_begin(coll_sm_module_t *m, obj_comm_t *comm, uint64_t *seq)
{
    if (RAIL_UNLIKELY(m->state != COLL_SM_READY)) {
        if (m->state == COLL_SM_UNSET) {
            int rc = coll_sm_segment_setup(m, comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (m->state != COLL_SM_READY)
            return COLL_SM_HANDOFF;
    }
    /* Our own buffers: faulted in at the first operation through them, in
     * parallel with the others, not page by page at first touch.  This
     * costs (~0.5 ms per MiB on the VMs we measure on), but buffers left
     * to fault in at first use made the rarely taken path of every
     * time-based choice look slow each time it was tried (a 64 KiB bcast
     * stayed on CMA at 6 us where the segment took 1.6).  Not at setup: a
     * communicator whose operations all fit the slots never pays it
     * (Rotation in coll/sm/README.md). */
    if (RAIL_UNLIKELY(!m->populated)) {
        size_t len = coll_sm_rank_stride(m);
        if (!sm_populate(coll_sm_buf(m, m->me, 0, 0), len, !m->hdr->lazy) && m->hdr->lazy)
            sm_no_room(len, "this process's collective buffers");
        m->populated = true;
        rail_atomic_add_fetch(&coll_sm_count_populated, 1);
    }
    *seq = ++m->seq;
    return MPI_SUCCESS;
}
