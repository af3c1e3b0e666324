/* btl sm: parameters, init (segment + business card), finalize. */
#include "btl/sm/sm.h"
#include "btl/sm/sm_fastbox.h"
#include "btl/sm/sm_fifo.h"
#include "base/log.h"
#include "base/param.h"
#include "base/pvar.h"
#include "runtime/rte.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The default ring: 256 KiB per sender, until a process's rings would
 * take more than BTL_SM_FBOX_AUTO_TOTAL (more than 17 local processes), or
 * more than an eighth of /dev/shm's free space shared by the node's
 * processes (containers often give it 64 MiB); then the largest power of
 * two that fits (not below BTL_SM_FBOX_MIN).  Each process sizes the rings
 * in its own segment, which its senders read from its header.
 * A sender that rewrites lines its receiver read a short while ago pays
 * much more for them than for lines read longer ago: np 2 streams of 1 KiB
 * messages (bw, 64 in flight) moved 2.6 GB/s through 16-128 KiB rings and
 * 7.6 GB/s through 256 KiB (512 B 2.5 -> 5.6-6.0, 4 KiB 8.0 -> 12.6; a
 * bare two-process ring outside MPI: 0.26 -> 0.06 us per 1 KiB entry
 * between 128 and 256 KiB, whether the sender ran 16 KiB or 256 KiB ahead
 * of its receiver, so the ring's size, not the distance, decides).
 * Traffic one message at a time stays in the ring's first 4 KiB
 * (BTL_SM_FBOX_HOT): ping-pong latency is the same either way. */
#define BTL_SM_FBOX_DEFAULT ((size_t)256 << 10)
/* Eager up to 16 KiB: with the default ring, such a message is one ring
 * entry, copied in and out, against a rendezvous's request, kernel copy
 * and reply (np 2 ping-pong 8 KiB 2.55 -> 1.57 us, 16 KiB 3.56 -> 2.74; bw
 * 8 KiB 10.3 -> 16.3 GB/s; np 4 on 2 cores, 8 KiB 6.6 -> 1.5 us).  The pml
 * then gives each peer 1 MiB / 16 KiB = 64 eager credits. */
#define BTL_SM_EAGER_DEFAULT ((size_t)16 << 10)
#define BTL_SM_FBOX_AUTO_TOTAL ((size_t)4 << 20)

btl_sm_params_t btl_sm_params;
btl_sm_module_t btl_sm_module;

/* MPI_T counters of shared gets (sm_cma.c) and streamed fragments (sm_fifo.c). */
static const rail_pvar_counter_t btl_sm_pvars[] = {
    {"btl_sm_get_shared",
     "Single-copy gets (btl sm, from btl_sm_get_share_min bytes) for which this process "
     "asked the sender to copy part of the data too",
     &btl_sm_count_share_gets},
    {"btl_sm_get_chunks_in",
     "Chunks of this process's shared gets that the sending process wrote (the rest this "
     "process read itself)",
     &btl_sm_count_share_chunks_in},
    {"btl_sm_get_chunks_out",
     "Chunks this process wrote into a peer's buffer for the peer's shared get",
     &btl_sm_count_share_chunks_out},
    {"btl_sm_frags_streamed",
     "Pipelined fragments this process wrote into shared memory with non-temporal stores "
     "(BTL_PAYLOAD_STREAM: the receiver chose it by time, or copy_stream=always)",
     &btl_sm_count_frags_streamed},
};

static int btl_sm_register_params(void)
{
    btl_sm_params_t *p = &btl_sm_params;
    const int T = RAIL_PARAM_LEVEL_TUNER;
    int rc = MPI_SUCCESS;

    RAIL_CHECK(rail_param_register_int("btl_sm_priority", 50,
        "Priority of btl sm among the btls that reach a peer (higher wins)", T, &p->priority));
    RAIL_CHECK(rail_param_register_size("btl_sm_eager_limit", BTL_SM_EAGER_DEFAULT,
        "Largest message (payload bytes) the pml sends eagerly through btl sm.  "
        "Measured on one machine: bench pingpong at np 2", T, &p->eager_limit));
    RAIL_CHECK(rail_param_set_flags("btl_sm_eager_limit", RAIL_PARAM_F_MEASURED));
    RAIL_CHECK(rail_param_register_size("btl_sm_max_send_size", 131072 - BTL_SM_FRAG_HDR,
        "Largest header + payload of one send: the size of a FIFO buffer less its "
        "128-byte header (the pml's pipeline fragment: 128 KiB moved 1 MiB messages "
        "1.8x and 4 MiB 1.6x faster than 32 KiB on 2 cores; frag_count of them per "
        "process in its segment).  Measured on one machine: bench bw at np 2", T,
        &p->max_send_size));
    RAIL_CHECK(rail_param_set_flags("btl_sm_max_send_size", RAIL_PARAM_F_MEASURED));
    RAIL_CHECK(rail_param_register_size("btl_sm_fbox_size", BTL_SM_FBOX_DEFAULT,
        "Bytes of the fast-box ring for each local sender (a power of two >= 1024; "
        "0 turns fast boxes off).  Left at its default, it shrinks past 17 local "
        "processes so that a process's rings take at most 4 MiB.  Measured on one "
        "machine: bench bw at np 2", T, &p->fbox_size));
    RAIL_CHECK(rail_param_set_flags("btl_sm_fbox_size", RAIL_PARAM_F_MEASURED));
    RAIL_CHECK(rail_param_register_size("btl_sm_fbox_max", 0,
        "Largest header + payload sent through a fast box (0: eager_limit + 64; at most "
        "half a ring)", T, &p->fbox_max));
    RAIL_CHECK(rail_param_register_int("btl_sm_frag_count", 32,
        "FIFO buffers of max_send_size bytes each process owns for sending.  Left at "
        "its default, fewer (down to 1) where they would take more than half of "
        "/dev/shm's free space shared among the local processes", T, &p->frag_count));
    RAIL_CHECK(rail_param_register_string("btl_sm_single_copy", "cma", "cma|none",
        "Single copy for get/put: cma (process_vm_readv/writev), or none (get/put "
        "off: the pml copies large messages in and out through sends)",
        RAIL_PARAM_LEVEL_USER, &p->single_copy));
    RAIL_CHECK(rail_param_register_size("btl_sm_get_share_min", 131072,
        "Smallest contiguous get (CMA) whose sender is asked to help: it writes chunks "
        "from the end of the buffer while the receiver reads from the start, in its "
        "progress, if it gets there (one process moved 12-13 GB/s by CMA where it was "
        "measured, two twice that; 0: never; never on an oversubscribed node).  "
        "Measured on one machine: bench bw at np 2", T, &p->get_share_min));
    RAIL_CHECK(rail_param_set_flags("btl_sm_get_share_min", RAIL_PARAM_F_MEASURED));
    RAIL_CHECK(rail_param_register_bool("btl_sm_prefault", true,
        "Pre-fault our whole segment at init, the peers' headers and our rings in them "
        "too, and a peer's FIFO buffers when its first one arrives (else only headers "
        "and fast boxes)", T,
        &p->prefault));
    RAIL_CHECK(rail_param_register_int("btl_sm_verbose", 0,
        "Verbosity of btl sm (the larger of this and btl_verbose)", RAIL_PARAM_LEVEL_DEV,
        &p->verbose));
    RAIL_CHECK(rail_pvar_register_counters(btl_sm_pvars, RAIL_ARRAY_SIZE(btl_sm_pvars)));
fail:
    return rc;
}

static size_t btl_sm_pow2_up(size_t v)
{
    size_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static size_t btl_sm_pow2_down(size_t v)
{
    size_t p = btl_sm_pow2_up(v);
    return p > v ? p / 2 : p;
}

/* Bring parameters into range, saying what changed. */
static void btl_sm_check_sizes(void)
{
    btl_sm_params_t *p = &btl_sm_params;
    size_t v;

    if (p->max_send_size < 1024 || p->max_send_size > (1u << 30)) {
        v = RAIL_MIN(RAIL_MAX(p->max_send_size, (size_t)1024), (size_t)1 << 30);
        rail_warn("btl_sm_max_send_size %zu out of range, using %zu", p->max_send_size, v);
        p->max_send_size = v;
    }
    if (p->eager_limit + BTL_SM_HDR_MAX > p->max_send_size) {
        v = p->max_send_size - BTL_SM_HDR_MAX;
        rail_warn("btl_sm_eager_limit %zu exceeds max_send_size, using %zu", p->eager_limit, v);
        p->eager_limit = v;
    }
    if (p->frag_count < 1) {
        rail_warn("btl_sm_frag_count %d < 1, using 1", p->frag_count);
        p->frag_count = 1;
    }
}

/* Ring size (a power of two, or 0) and the largest entry put in a ring. */
static void btl_sm_check_fbox(btl_sm_module_t *m, size_t shm_free)
{
    btl_sm_params_t *p = &btl_sm_params;
    const rail_param_t *fp = rail_param_find("btl_sm_fbox_size");
    size_t v;

    if (p->fbox_size && (p->fbox_size < BTL_SM_FBOX_MIN || p->fbox_size > (1u << 24) ||
                         (p->fbox_size & (p->fbox_size - 1)))) {
        v = RAIL_MIN(RAIL_MAX(p->fbox_size, (size_t)BTL_SM_FBOX_MIN), (size_t)1 << 24);
        v = btl_sm_pow2_up(v);
        rail_warn("btl_sm_fbox_size %zu is not a power of two in [1k, 16M], using %zu",
                  p->fbox_size, v);
        p->fbox_size = v;
    }
    if (fp && fp->source == RAIL_PARAM_SRC_DEFAULT && m->n_local > 1) {
        size_t total = RAIL_MIN(BTL_SM_FBOX_AUTO_TOTAL, shm_free / 8 / (size_t)m->n_local);
        if ((size_t)(m->n_local - 1) * p->fbox_size > total)
            p->fbox_size = RAIL_MAX(btl_sm_pow2_down(total / (size_t)(m->n_local - 1)),
                                    (size_t)BTL_SM_FBOX_MIN);
    }
    size_t fmax = p->fbox_max ? p->fbox_max : p->eager_limit + BTL_SM_HDR_MAX;
    m->fbox_entry_max = p->fbox_size ? RAIL_MIN(btl_sm_fbox_entry_size(0, fmax), p->fbox_size / 2)
                                     : 0;
}

/* FIFO buffers: left at its default, btl_sm_frag_count shrinks so that a
 * process's frags take at most half of /dev/shm's free space over the local
 * process count (a container's 64 MiB held 15 processes' 4 MiB of frags,
 * not 16).  Each process sizes its own, in its segment's header. */
static void btl_sm_check_frags(btl_sm_module_t *m, size_t shm_free)
{
    btl_sm_params_t *p = &btl_sm_params;
    const rail_param_t *fp = rail_param_find("btl_sm_frag_count");

    if (!fp || fp->source != RAIL_PARAM_SRC_DEFAULT)
        return;
    size_t fit = shm_free / 2 / (size_t)m->n_local / btl_sm_frag_size();
    if (fit < (size_t)p->frag_count) {
        p->frag_count = fit < 1 ? 1 : (int)fit;
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: %d FIFO buffers (a small /dev/shm)",
                     p->frag_count);
    }
}

static uint64_t btl_sm_new_cookie(void)
{
    uint64_t c = 0;
    if (getrandom(&c, sizeof(c), GRND_NONBLOCK) != (ssize_t)sizeof(c)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        c = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
    }
    return c | 1;
}

/* Decide whether get/put can be offered: parameter, then CMA on ourselves.
 * Peers are probed in add_procs.  Under Yama ptrace_scope 1, let our peers
 * (same user, anyway) read us. */
static void btl_sm_cma_init(btl_sm_module_t *m)
{
    m->cma = true;
    if (strcmp(btl_sm_params.single_copy, "none") == 0) {
        m->cma = false;
        m->super.flags &= ~(uint32_t)(BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV);
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: single copy off (btl_sm_single_copy=none)");
    } else {
        int err = rail_cma_probe_self();
        if (err)
            btl_sm_cma_disable(m, rte_info.rank, err);
    }
#ifdef PR_SET_PTRACER
    if (m->cma)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

static int btl_sm_finalize(btl_module_t *base);

static const btl_module_t btl_sm_template = {
    .name = "sm",
    .flags = BTL_FLAG_SEND | BTL_FLAG_PUT | BTL_FLAG_GET | BTL_FLAG_IOV,
    .add_procs = btl_sm_add_procs,
    .del_procs = btl_sm_del_procs,
    .send = btl_sm_send,
    .register_mem = btl_sm_register_mem,
    .deregister_mem = btl_sm_deregister_mem,
    .get = btl_sm_get,
    .put = btl_sm_put,
    .progress = btl_sm_progress,
    .wait_fd = -1,
    .sleep_prepare = btl_sm_sleep_prepare,
    .sleep_block = btl_sm_sleep_block,
    .sleep_finish = btl_sm_sleep_finish,
    .finalize = btl_sm_finalize,
    .sleep_wake = btl_sm_sleep_wake,
    .sleep_word = btl_sm_sleep_word,
};

static int btl_sm_my_index(void)
{
    for (int i = 0; i < rte_info.local_size; i++)
        if (rte_info.local_peers[i] == rte_info.rank)
            return i;
    return -1;
}

static int btl_sm_module_alloc(btl_sm_module_t *m)
{
    int n = m->n_local;
    m->bases = calloc((size_t)n, sizeof(*m->bases));
    /* endpoints keep their receiving half on its own cache line: the
     * array must be aligned as its type is (calloc gives 16 bytes) */
    void *eps = NULL;
    if (posix_memalign(&eps, _Alignof(btl_endpoint_t), (size_t)n * sizeof(*m->eps)) == 0) {
        memset(eps, 0, (size_t)n * sizeof(*m->eps));
        m->eps = eps;
    }
    m->peers = calloc((size_t)n, sizeof(*m->peers));
    m->free_frags = calloc((size_t)btl_sm_params.frag_count, sizeof(*m->free_frags));
    return m->bases && m->eps && m->peers && m->free_frags ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void btl_sm_module_free(btl_sm_module_t *m)
{
    free(m->bases);
    free(m->eps);
    free(m->peers);
    free(m->free_frags);
    memset(m, 0, sizeof(*m));
}

static int btl_sm_publish(btl_sm_module_t *m)
{
    btl_sm_card_t card = {.version = BTL_SM_VERSION, .pid = (int32_t)getpid(),
                          .cookie = m->cookie, .size = m->seg_size,
                          .probe_addr = (uint64_t)(uintptr_t)&btl_sm_module.cookie};
    snprintf(card.name, sizeof(card.name), "%s", m->name);
    return rte_modex_put(BTL_SM_MODEX_KEY, &card, sizeof(card));
}

static int btl_sm_init(btl_module_t **mods, int *n)
{
    btl_sm_module_t *m = &btl_sm_module;
    int rc = MPI_SUCCESS, max = *n;

    *n = 0;
    if (max < 1 || rte_info.local_size < 2 || btl_sm_my_index() < 0) {
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: no other process of the job on this node");
        return MPI_SUCCESS;
    }
    memset(m, 0, sizeof(*m));
    m->super = btl_sm_template;
    m->my_index = btl_sm_my_index();
    m->n_local = rte_info.local_size;
    m->cookie = btl_sm_new_cookie();
    btl_sm_check_sizes();
    size_t shm_free = rte_shm_free();   /* (one statvfs for both) */
    btl_sm_check_fbox(m, shm_free);
    btl_sm_check_frags(m, shm_free);
    m->super.priority = btl_sm_params.priority;
    m->super.eager_limit = btl_sm_params.eager_limit;
    m->super.max_send_size = btl_sm_params.max_send_size;
    btl_sm_cma_init(m);
    RAIL_CHECK(btl_sm_module_alloc(m));
    RAIL_CHECK(btl_sm_segment_create(m));
    btl_sm_fifo_init(m);
    btl_register_recv(BTL_SM_TAG_SHARE, btl_sm_share_help);
    RAIL_CHECK(btl_sm_publish(m));
    RAIL_VERBOSE(btl_sm_verbosity(), 2,
                 "btl sm: segment /dev/shm%s, %zu bytes, %d local peers, single copy %s",
                 m->name, m->seg_size, m->n_local - 1, m->cma ? "cma" : "none");
    mods[0] = &m->super;
    *n = 1;
    return MPI_SUCCESS;
fail:
    rail_warn("btl sm: disabled on this process (see the message above)");
    btl_sm_segment_destroy(m);
    btl_sm_module_free(m);
    return MPI_SUCCESS;
}

static int btl_sm_finalize(btl_module_t *base)
{
    btl_sm_module_t *m = &btl_sm_module;
    int held = btl_sm_params.frag_count - m->n_free;

    if (held > 0 && m->seg)
        RAIL_VERBOSE(btl_sm_verbosity(), 3, "btl sm: %d frags still out at finalize", held);
    btl_sm_segment_destroy(m);
    btl_sm_module_free(m);
    return MPI_SUCCESS;
}

const btl_component_t btl_sm_component = {
    .name = "sm",
    .priority = 50,
    .register_params = btl_sm_register_params,
    .init = btl_sm_init,
};
