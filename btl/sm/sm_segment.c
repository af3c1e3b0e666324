/*
 * Segments: one per process, /dev/shm/rail-<jobid>-sm-<rank>.
 *
 * Why one per process rather than one per node: ranks start concurrently,
 * and each creates, sizes and initializes only its own file (O_EXCL), then
 * announces it in the modex, so nobody elects a creator or waits for one to
 * finish; the slow first touch of fresh memory (about 0.2-0.4 GB/s here) is
 * paid by all ranks in parallel, each for its own small segment, and lands
 * on each receiver's NUMA node; a segment's size follows its owner's
 * parameters.  Every local peer maps every segment eagerly in add_procs
 * (open + mmap; populated with btl_sm_prefault, its frags only when the
 * first one arrives, else only the header: a first touch on the message
 * path costs a fault per page): the FIFO links
 * frags of any process to frags of any other, so every producer must see
 * every segment, and eager mapping lets the file be unlinked right away by
 * the last peer that maps it.  After wire-up nothing is left in /dev/shm;
 * before, a crash leaves files that the launcher's sweep of rail-<jobid>-*
 * removes; finalize and exit() unlink too.
 */
#include "btl/sm/sm.h"
#include "btl/sm/sm_fastbox.h"
#include "base/log.h"
#include "runtime/rte.h"

#include <errno.h>
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

/* Our segment's name, unlinked by exit() if finalize did not run. */
static char btl_sm_exit_name[200];
static pid_t btl_sm_exit_pid;

static void btl_sm_atexit(void)
{
    if (btl_sm_exit_name[0] && btl_sm_exit_pid == getpid())
        shm_unlink(btl_sm_exit_name);
}

static void btl_sm_unlink_at_exit(const char *name)
{
    static bool registered;
    if (!registered)
        registered = atexit(btl_sm_atexit) == 0;
    snprintf(btl_sm_exit_name, sizeof(btl_sm_exit_name), "%s", name ? name : "");
    btl_sm_exit_pid = getpid();
}

/* Make the page-table entries of [addr, addr + len) present and writable in
 * one batch, instead of a slow fault per page on the message path later. */
void btl_sm_populate(void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(BTL_SM_PAGE - 1);
    size_t n = RAIL_ALIGN_UP((uintptr_t)addr + len - a, (size_t)BTL_SM_PAGE);
    if (len == 0 || madvise((void *)a, n, MADV_POPULATE_WRITE) == 0)
        return;
    for (size_t off = 0; off < n; off += BTL_SM_PAGE)
        __atomic_fetch_add((uint64_t *)(a + off), 0, __ATOMIC_RELAXED);
}

static void btl_sm_layout(btl_sm_seg_hdr_t *h, int n_local)
{
    size_t peers = (size_t)n_local - 1;
    h->fbox_ctrl_off = BTL_SM_PAGE;
    h->fbox_ring_off = RAIL_ALIGN_UP(h->fbox_ctrl_off + peers * RAIL_CACHELINE, BTL_SM_PAGE);
    h->frag_off = RAIL_ALIGN_UP(h->fbox_ring_off + peers * h->fbox_size, BTL_SM_PAGE);
    h->size = RAIL_ALIGN_UP(h->frag_off + (size_t)h->frag_count * h->frag_size, BTL_SM_PAGE);
}

/* Create the file exclusively and reserve its memory (ENOSPC now, not
 * SIGBUS on first touch).  A leftover of a crashed job with the same id is
 * replaced.  Returns the fd or -errno. */
static int btl_sm_shm_create(const char *name, size_t size)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: replacing stale /dev/shm%s", name);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        return -errno;
    int err = posix_fallocate(fd, 0, (off_t)size);
    if (err) {
        shm_unlink(name);
        close(fd);
        return -err;
    }
    return fd;
}

static void btl_sm_fill_header(btl_sm_module_t *m, const btl_sm_seg_hdr_t *h)
{
    btl_sm_seg_hdr_t *s = m->hdr;
    s->version = BTL_SM_VERSION;
    s->pid = (int32_t)getpid();
    s->cookie = m->cookie;
    s->size = h->size;
    s->local_index = (uint32_t)m->my_index;
    s->local_size = (uint32_t)m->n_local;
    s->fbox_size = h->fbox_size;
    s->frag_size = h->frag_size;
    s->frag_count = h->frag_count;
    s->fbox_ctrl_off = h->fbox_ctrl_off;
    s->fbox_ring_off = h->fbox_ring_off;
    s->frag_off = h->frag_off;
    s->wake_mode = rte_info.oversubscribed;
    rail_atomic_store_release(&s->magic, BTL_SM_MAGIC);
}

int btl_sm_segment_create(btl_sm_module_t *m)
{
    btl_sm_seg_hdr_t h = {.fbox_size = (uint32_t)btl_sm_params.fbox_size,
                          .frag_count = (uint32_t)btl_sm_params.frag_count,
                          .frag_size = (uint32_t)btl_sm_frag_size()};
    char suffix[32];
    int fd;

    btl_sm_layout(&h, m->n_local);
    snprintf(suffix, sizeof(suffix), "sm-%d", rte_info.rank);
    if (rte_shm_name(m->name, sizeof(m->name), suffix) != MPI_SUCCESS)
        return MPI_ERR_INTERN;
    fd = btl_sm_shm_create(m->name, h.size);
    if (fd < 0) {
        rail_warn("btl sm: cannot create /dev/shm%s (%zu bytes): %s%s", m->name, (size_t)h.size,
                  strerror(-fd), fd == -ENOSPC ? " (/dev/shm is full or too small: a container's "
                                                 "can be enlarged, e.g. docker run --shm-size=1g)"
                                               : "");
        return MPI_ERR_NO_MEM;
    }
    void *seg = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (seg == MAP_FAILED) {
        rail_warn("btl sm: cannot map /dev/shm%s: %s", m->name, strerror(errno));
        shm_unlink(m->name);
        return MPI_ERR_NO_MEM;
    }
    btl_sm_unlink_at_exit(m->name);
    m->seg = seg;
    m->hdr = seg;
    m->seg_size = h.size;
    m->bases[m->my_index] = seg;
    btl_sm_populate(seg, btl_sm_params.prefault ? h.size : h.frag_off);
    btl_sm_fill_header(m, &h);
    return MPI_SUCCESS;
}

/* The peer's card, or NULL when it has no sm (it then never uses sm). */
static btl_sm_card_t *btl_sm_card_get(int rank)
{
    void *data = NULL;
    size_t len = 0;
    btl_sm_card_t *c;

    if (rte_modex_get(rank, BTL_SM_MODEX_KEY, &data, &len) != MPI_SUCCESS)
        return NULL;
    c = data;
    if (len != sizeof(*c) || c->version != BTL_SM_VERSION) {
        rail_warn("btl sm: rank %d published an incompatible sm card", rank);
        free(data);
        return NULL;
    }
    c->name[sizeof(c->name) - 1] = '\0';
    return c;
}

static void *btl_sm_map_file(const char *name, size_t size)
{
    struct stat st;
    void *base = MAP_FAILED;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= size)
        base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    else
        errno = EINVAL;
    close(fd);
    return base;
}

static bool btl_sm_header_ok(const btl_sm_seg_hdr_t *h, const btl_sm_card_t *c, int idx)
{
    return rail_atomic_load_acquire(&h->magic) == BTL_SM_MAGIC && h->version == BTL_SM_VERSION &&
           h->pid == c->pid && h->cookie == c->cookie && h->size == c->size &&
           h->local_index == (uint32_t)idx && h->local_size == (uint32_t)btl_sm_module.n_local;
}

/* The last local peer to map a segment removes its name. */
static void btl_sm_attached(btl_sm_seg_hdr_t *h, const char *name)
{
    if (rail_atomic_add_fetch(&h->attached, 1) == h->local_size - 1)
        shm_unlink(name);
}

static int btl_sm_map_peer(btl_sm_module_t *m, int idx)
{
    int rank = rte_info.local_peers[idx];
    btl_sm_card_t *c = btl_sm_card_get(rank);
    btl_endpoint_t *ep = &m->eps[idx];

    if (!c) {
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: local rank %d has no sm; not reached", rank);
        return MPI_SUCCESS;
    }
    void *base = btl_sm_map_file(c->name, c->size);
    if (base == MAP_FAILED || !btl_sm_header_ok(base, c, idx)) {
        rail_error("btl sm: cannot map the segment /dev/shm%s of rank %d: %s", c->name, rank,
                   base == MAP_FAILED ? strerror(errno) : "bad header");
        if (base != MAP_FAILED)
            munmap(base, c->size);
        free(c);
        return MPI_ERR_OTHER;
    }
    *ep = (btl_endpoint_t){.index = (uint16_t)idx, .rank = rank, .pid = c->pid,
                           .cookie = c->cookie, .base = base, .size = c->size, .hdr = base};
    m->bases[idx] = base;
    m->peers[m->n_peers++] = ep;
    /* header and control lines, and with btl_sm_prefault its fast-box
     * rings (ours among them); its frags when the first one reaches us
     * (sm_fifo.c) */
    btl_sm_populate(base, btl_sm_params.prefault ? ep->hdr->frag_off : ep->hdr->fbox_ring_off);
    btl_sm_fbox_setup(m, ep);
    btl_sm_attached(ep->hdr, c->name);
    int err = m->cma ? rail_cma_probe_peer(ep->pid, c->probe_addr, ep->cookie) : 0;
    if (err)
        btl_sm_cma_disable(m, rank, err);
    free(c);
    return MPI_SUCCESS;
}

int btl_sm_segment_map_peers(btl_sm_module_t *m)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < m->n_local && rc == MPI_SUCCESS; i++)
        if (i != m->my_index)
            rc = btl_sm_map_peer(m, i);
    return rc;
}

void btl_sm_segment_destroy(btl_sm_module_t *m)
{
    for (int i = 0; i < m->n_peers; i++)
        munmap(m->peers[i]->base, m->peers[i]->size);
    m->n_peers = 0;
    if (m->seg) {
        shm_unlink(m->name);
        munmap(m->seg, m->seg_size);
        m->seg = NULL;
        m->hdr = NULL;
    }
    btl_sm_unlink_at_exit(NULL);
}
