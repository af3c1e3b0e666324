/*
 * accel fake component: device memory that the host cannot touch, for tests.
 *
 * The user's views of all allocations live in one address window reserved
 * at selection (PROT_NONE, no backing), like a GPU's share of a unified
 * address space; this also keeps host lookups cheap, as the memtab's span is
 * the window.  Copies and reductions go through the private views; work is
 * synchronous, so a stream is a counter and an event is done when recorded.
 * Fork: the child keeps every allocation (shared with the parent, as both
 * views are MAP_SHARED) and can allocate, copy and export its own.
 */
#include "accel/fake/accel_fake.h"
#include "base/param.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

fake_state_t accel_fake = { .index = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t fake_page_size(void)
{
    static size_t page;
    if (page == 0)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* ------------------------------------------------------------ selection */

static void fake_atfork_prepare(void)
{
    pthread_mutex_lock(&accel_fake.lock);
}

static void fake_atfork_release(void)
{
    pthread_mutex_unlock(&accel_fake.lock);
}

static void fake_register_atfork(void)
{
    pthread_atfork(fake_atfork_prepare, fake_atfork_release, fake_atfork_release);
}

static void fake_register_params(void)
{
    rail_param_register_size("accel_fake_va_size", (size_t)64 << 30,
                             "Address space reserved for fake device memory (halved until the "
                             "reservation succeeds)", RAIL_PARAM_LEVEL_DEV, &accel_fake.va_size);
    rail_param_register_string("accel_fake_ipc", "auto", "auto|proc|pidfd",
                               "How the fake device opens a peer's memory: /proc/<pid>/fd, "
                               "pidfd_getfd, or auto (proc, then pidfd)", RAIL_PARAM_LEVEL_DEV,
                               &accel_fake.ipc_how);
}

static int fake_query(int self_index, const char **why)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    size_t size = RAIL_MAX(accel_fake.va_size, (size_t)1 << 30);
    void *w;
    while ((w = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                     0)) == MAP_FAILED && size > (1u << 30))
        size /= 2;
    if (w == MAP_FAILED) {
        *why = "cannot reserve an address window for fake device memory";
        return MPI_ERR_NO_MEM;
    }
    int fd = memfd_create("rail-fake-probe", MFD_CLOEXEC);
    if (fd < 0) {
        munmap(w, size);
        *why = "memfd_create failed";
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    close(fd);
    pthread_once(&once, fake_register_atfork);
    accel_fake.index = self_index;
    accel_fake.window = (uintptr_t)w;
    accel_fake.window_size = size;
    accel_fake.head = NULL;
    return MPI_SUCCESS;
}

static void fake_finalize(void)
{
    pthread_mutex_lock(&accel_fake.lock);
    while (accel_fake.head != NULL) {
        fake_alloc_t *a = accel_fake.head;
        accel_fake.head = a->next;
        munmap(a->priv, a->maplen);
        close(a->fd);
        free(a);
    }
    accel_memtab_remove_component(accel_fake.index);
    munmap((void *)accel_fake.window, accel_fake.window_size);
    accel_fake.window = 0;
    accel_fake.index = -1;
    pthread_mutex_unlock(&accel_fake.lock);
}

/* ------------------------------------------------------------ memory */

/* First gap of maplen bytes in the window (lock held); 0 when full.  *prevp
 * is the allocation after which the new one goes in the sorted list. */
static uintptr_t fake_find_gap(size_t maplen, fake_alloc_t **prevp)
{
    uintptr_t cursor = accel_fake.window, end = accel_fake.window + accel_fake.window_size;
    fake_alloc_t *prev = NULL;
    for (fake_alloc_t *a = accel_fake.head; a != NULL; prev = a, a = a->next) {
        if (a->user - cursor >= maplen)
            break;
        cursor = a->user + a->maplen;
    }
    *prevp = prev;
    return end - cursor >= maplen ? cursor : 0;
}

int accel_fake_map(int fd, size_t size, size_t maplen, bool imported, fake_alloc_t **out)
{
    int rc = MPI_SUCCESS;
    struct stat st;
    fake_alloc_t *a = calloc(1, sizeof(*a)), *prev;
    RAIL_CHECK_ALLOC(a);
    a->fd = fd;
    a->priv = MAP_FAILED;
    a->size = size;
    a->maplen = maplen;
    a->imported = imported;
    if (fstat(fd, &st) != 0) {
        rc = MPI_ERR_OTHER;
        goto fail;
    }
    a->dev = (uint64_t)st.st_dev;
    a->ino = (uint64_t)st.st_ino;
    a->priv = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a->priv == MAP_FAILED) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    pthread_mutex_lock(&accel_fake.lock);
    a->user = fake_find_gap(maplen, &prev);
    if (a->user == 0 ||
        mmap((void *)a->user, maplen, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        pthread_mutex_unlock(&accel_fake.lock);
        rail_warn("accel: fake: no room for %zu bytes of device memory in its %zu-byte window",
                  size, accel_fake.window_size);
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    a->id = ++accel_fake.next_id;
    a->next = prev != NULL ? prev->next : accel_fake.head;
    *(prev != NULL ? &prev->next : &accel_fake.head) = a;
    accel_range_t r = { .base = a->user, .size = size, .id = a->id, .cookie = a, .device = 0,
                        .type = ACCEL_MEM_DEVICE, .component = (uint8_t)accel_fake.index };
    rc = accel_memtab_insert(&r);
    pthread_mutex_unlock(&accel_fake.lock);
    if (rc != MPI_SUCCESS) {
        accel_fake_unmap(a);
        return rc;
    }
    *out = a;
    return MPI_SUCCESS;
fail:
    if (a != NULL && a->priv != MAP_FAILED)
        munmap(a->priv, maplen);
    free(a);
    close(fd);
    return rc;
}

int accel_fake_unmap(fake_alloc_t *a)
{
    accel_memtab_remove(a->user, NULL);
    pthread_mutex_lock(&accel_fake.lock);
    fake_alloc_t **pp = &accel_fake.head;
    while (*pp != NULL && *pp != a)
        pp = &(*pp)->next;
    if (*pp == a)
        *pp = a->next;
    /* Give the range back to the reservation: no hole for others to map into. */
    mmap((void *)a->user, a->maplen, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    pthread_mutex_unlock(&accel_fake.lock);
    munmap(a->priv, a->maplen);
    close(a->fd);
    free(a);
    return MPI_SUCCESS;
}

static int fake_malloc(size_t size, void **ptr)
{
    *ptr = NULL;
    if (size == 0)
        return MPI_SUCCESS;
    size_t maplen = RAIL_ALIGN_UP(size, fake_page_size());
    int fd = memfd_create("rail-fake", MFD_CLOEXEC);
    if (fd < 0)
        return errno == EMFILE || errno == ENFILE ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    if (ftruncate(fd, (off_t)maplen) != 0) {
        close(fd);
        return MPI_ERR_NO_MEM;
    }
    fake_alloc_t *a;
    int rc = accel_fake_map(fd, size, maplen, false, &a);
    if (rc == MPI_SUCCESS)
        *ptr = (void *)a->user;
    return rc;
}

static void *fake_alloc(size_t len, const accel_range_t *like)
{
    void *p;
    return fake_malloc(len, &p) == MPI_SUCCESS ? p : NULL;
}

static int fake_free(void *ptr, const accel_range_t *r)
{
    fake_alloc_t *a = r->cookie;
    if (a->imported) {
        rail_warn("accel: fake: %p was opened from an IPC handle: close it, do not free it", ptr);
        return MPI_ERR_ARG;
    }
    return accel_fake_unmap(a);
}

/* ------------------------------------------------------------ data */

/* The private address of [p, p + len) of the allocation r (NULL r: host). */
static int fake_span(const void *p, const accel_range_t *r, size_t len, void **priv)
{
    if (r == NULL) {
        *priv = (void *)p;
        return MPI_SUCCESS;
    }
    size_t off = (uintptr_t)p - r->base;
    if (len > r->size - off) {
        rail_warn("accel: fake: %zu bytes at offset %zu overrun the device allocation of %zu "
                  "bytes at %p", len, off, r->size, (void *)r->base);
        return MPI_ERR_ARG;
    }
    *priv = ((fake_alloc_t *)r->cookie)->priv + off;
    return MPI_SUCCESS;
}

static int fake_copy(void *dst, const accel_range_t *dr, const void *src, const accel_range_t *sr,
                     size_t len, void *stream)
{
    int rc;
    void *d, *s;
    RAIL_CHECK(fake_span(dst, dr, len, &d));
    RAIL_CHECK(fake_span(src, sr, len, &s));
    memmove(d, s, len);
    if (stream != NULL)
        ++*(uint64_t *)stream;
    return MPI_SUCCESS;
fail:
    return rc;
}

/* The fake device's reduction: the base/op kernels, run on the private views. */
static int fake_reduce(rail_op_t op, rail_typekind_t tk, const void *in, const accel_range_t *ir,
                       void *inout, const accel_range_t *or_, size_t count, void *stream)
{
    int rc;
    void *i, *o;
    rail_op_kernel_t kernel = rail_op_kernel(op, tk);
    if (kernel == NULL)
        return MPI_ERR_OP;
    size_t len = count * rail_typekind_size(tk);
    RAIL_CHECK(fake_span(in, ir, len, &i));
    RAIL_CHECK(fake_span(inout, or_, len, &o));
    if (count > 0)
        kernel(i, o, count);
    if (stream != NULL)
        ++*(uint64_t *)stream;
    return MPI_SUCCESS;
fail:
    return rc;
}

/* ------------------------------------------------------------ streams */

/* A stream counts the operations queued on it; all of them are done on
 * return, so an event is complete when recorded. */
static int fake_stream_create(void **s)
{
    *s = calloc(1, sizeof(uint64_t));
    return *s != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int fake_stream_destroy(void *s)
{
    free(s);
    return MPI_SUCCESS;
}

static int fake_stream_sync(void *s)
{
    return MPI_SUCCESS;
}

static int fake_event_record(void **ev, void *s)
{
    uint64_t *e = malloc(sizeof(*e));
    if (e == NULL)
        return MPI_ERR_NO_MEM;
    *e = *(uint64_t *)s;    /* operations covered */
    *ev = e;
    return MPI_SUCCESS;
}

static int fake_event_query(void *ev)
{
    return MPI_SUCCESS;
}

static int fake_event_destroy(void *ev)
{
    free(ev);
    return MPI_SUCCESS;
}

const accel_component_t accel_fake_component = {
    .name = "fake",
    .tag = { 'F', 'A', 'K', 'E' },
    .priority = 10,
    .is_device = true,
    .register_params = fake_register_params,
    .query = fake_query,
    .finalize = fake_finalize,
    .copy = fake_copy,
    .reduce = fake_reduce,
    .alloc = fake_alloc,
    .free = fake_free,
    .ipc_get = accel_fake_ipc_get,
    .ipc_open = accel_fake_ipc_open,
    .ipc_close = accel_fake_ipc_close,
    .stream_create = fake_stream_create,
    .stream_destroy = fake_stream_destroy,
    .stream_sync = fake_stream_sync,
    .event_record = fake_event_record,
    .event_query = fake_event_query,
    .event_destroy = fake_event_destroy,
};

/* ------------------------------------------------------------ MPIX test API */

static int fake_ready(const char *fn)
{
    int rc = accel_base_ensure_init();
    if (rc != MPI_SUCCESS)
        return rc;
    if (accel_base_index("fake") < 0) {
        rail_warn_once("fake-inactive", "%s: the fake accel component is not active (set "
                       "RAIL_ACCEL=host,fake)", fn);
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    return MPI_SUCCESS;
}

RAIL_EXPORT int MPIX_Fake_device_malloc(size_t size, void **ptr)
{
    int rc = fake_ready(__func__);
    if (ptr == NULL)
        return MPI_ERR_ARG;
    *ptr = NULL;
    return rc != MPI_SUCCESS ? rc : fake_malloc(size, ptr);
}

RAIL_EXPORT int MPIX_Fake_device_free(void *ptr)
{
    accel_range_t r;
    int rc = fake_ready(__func__);
    if (rc != MPI_SUCCESS || ptr == NULL)
        return rc;
    if (!accel_memtab_find((uintptr_t)ptr, &r) || r.component != accel_fake.index ||
        r.base != (uintptr_t)ptr) {
        rail_warn("MPIX_Fake_device_free: %p is not the start of a fake device allocation", ptr);
        return MPI_ERR_ARG;
    }
    return fake_free(ptr, &r);
}

RAIL_EXPORT int MPIX_Fake_device_memcpy(void *dst, const void *src, size_t len)
{
    int rc = fake_ready(__func__);
    if (rc != MPI_SUCCESS)
        return rc;
    if (len > 0 && (dst == NULL || src == NULL))
        return MPI_ERR_ARG;
    return accel_copy(dst, src, len, NULL);
}
