/*
 * accel base: the component table, selection, memory-type lookup and the
 * dispatch of every operation to the component that owns the memory.
 *
 * Lookup order for a pointer: the memtab (every fake allocation, every cuda
 * allocation seen before), then the classify hook of each active device
 * component that has one (cuda asks the driver), else host.  With no device
 * component active, accel_memory_type() in accel.h answers HOST inline.
 */
#include "accel/accel_internal.h"
#include "accel/accel_dt.h"
#include "base/param.h"
#include "base/pvar.h"
#include "base/atomic.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int accel_any_device_active = 0;
int accel_verbose = 0;
static const char *accel_setting;       /* parameter accel */
static size_t accel_scratch_max;        /* parameter accel_scratch_cache */
/* MPI_T counters: device allocations made through a component, requests
 * served by a kept buffer; accel_count_ipc_reopened is in accel.h. */
static uint64_t accel_count_device_allocs, accel_count_scratch_reused;
uint64_t accel_count_ipc_reopened;

static const accel_component_t *const accel_components[] = {
    &accel_host_component,
    &accel_fake_component,
#ifdef RAIL_HAVE_CUDA
    &accel_cuda_component,
#endif
};
#define NCOMP ((int)RAIL_ARRAY_SIZE(accel_components))

static bool accel_active[ACCEL_MAX_COMPONENTS];
static int accel_classifiers[ACCEL_MAX_COMPONENTS];   /* active components with classify */
static int accel_nclassifiers;
static int accel_refcount;
static pthread_mutex_t accel_init_lock = PTHREAD_MUTEX_INITIALIZER;

struct accel_stream {
    void *queue[ACCEL_MAX_COMPONENTS];      /* each component's own stream, lazily */
};

struct accel_event {
    void *ev[ACCEL_MAX_COMPONENTS];
};

static void scratch_drain(void);
static void ipc_cache_drain(void);

/* ------------------------------------------------------------ parameters */

static const char accel_default[] = "host,cuda";

static const rail_pvar_counter_t accel_pvars[] = {
    {"accel_device_allocs",
     "Device memory allocations this process made for the library's own temporaries "
     "(reductions and collectives on device buffers)",
     &accel_count_device_allocs},
    {"accel_scratch_reused",
     "Requests for device temporaries served by memory an earlier operation freed "
     "(accel_scratch_cache)",
     &accel_count_scratch_reused},
    {"accel_ipc_reopened",
     "Times a peer's device allocation was already open here under another IPC handle, "
     "so the cached mappings were closed and it was opened again",
     &accel_count_ipc_reopened},
};

/* Also called by the info tool; registering again keeps the values. */
int accel_register_params(void)
{
    rail_param_register_string("accel", accel_default, NULL,
                               "Accelerator components allowed (comma-separated; host is always "
                               "on; fake emulates a device for tests; ^name excludes from the "
                               "default; empty: the default)", RAIL_PARAM_LEVEL_USER, &accel_setting);
    rail_param_register_size("accel_scratch_cache", (size_t)256 << 20,
                             "Bytes of device memory the library keeps, after an operation "
                             "freed it, for the temporaries of later operations (0: allocate "
                             "and free every time)", RAIL_PARAM_LEVEL_TUNER, &accel_scratch_max);
    rail_param_register_int("accel_verbose", 0,
                            "Verbosity of accel: 1 = which components are active and why not",
                            RAIL_PARAM_LEVEL_USER, &accel_verbose);
    for (int i = 0; i < NCOMP; i++)
        if (accel_components[i]->register_params != NULL)
            accel_components[i]->register_params();
    return rail_pvar_register_counters(accel_pvars, RAIL_ARRAY_SIZE(accel_pvars));
}

/* ------------------------------------------------------------ components */

int accel_component_count(void)
{
    return NCOMP;
}

const char *accel_component_name(int component)
{
    return component >= 0 && component < NCOMP ? accel_components[component]->name : "?";
}

bool accel_component_active(int component)
{
    return component >= 0 && component < NCOMP && accel_active[component];
}

int accel_component_index(const char *name)
{
    for (int i = 0; i < NCOMP; i++)
        if (strcmp(accel_components[i]->name, name) == 0)
            return i;
    return -1;
}

int accel_base_index(const char *name)
{
    int i = accel_component_index(name);
    return i >= 0 && accel_active[i] ? i : -1;
}

/* Is `name` in the comma-separated list? */
static bool list_has(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0)
            return true;
        p += n + (comma != NULL);
    }
    return false;
}

/* Warn about names in the user's list that are not components here. */
static void check_list(const char *list, bool exclusions)
{
    char buf[64];
    for (const char *p = list; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
        if (n > 0 && accel_component_index(buf) < 0) {
            if (strcmp(buf, "cuda") == 0 && !exclusions)
                rail_warn("accel: component cuda was requested but is not built (configure "
                          "found no CUDA toolkit)");
            else if (strcmp(buf, "cuda") != 0)
                rail_warn("accel: unknown component '%s' in RAIL_ACCEL (known: host, fake, cuda)",
                          buf);
        }
        p += n + (comma != NULL);
    }
}

/* Does the accel parameter allow the component?  *explicit_: the user named it. */
static bool accel_allowed(const char *setting, bool user_set, const char *name, bool *explicit_)
{
    *explicit_ = false;
    if (strcmp(name, "host") == 0)
        return true;        /* always there */
    if (setting[0] == '^')  /* exclusions apply to the default set */
        return list_has(accel_default, name) && !list_has(setting + 1, name);
    *explicit_ = user_set && list_has(setting, name);
    return list_has(setting, name);
}

static void accel_select(void)
{
    accel_register_params();
    /* an empty list (RAIL_ACCEL= in a script) means the default */
    bool empty = accel_setting == NULL || !*accel_setting;
    const char *setting = empty ? accel_default : accel_setting;
    const rail_param_t *p = rail_param_find("accel");
    bool user_set = p != NULL && p->source != RAIL_PARAM_SRC_DEFAULT && !empty;
    if (user_set)
        check_list(setting[0] == '^' ? setting + 1 : setting, setting[0] == '^');
    accel_nclassifiers = 0;
    int ndevice = 0;
    for (int i = 0; i < NCOMP; i++) {
        const accel_component_t *c = accel_components[i];
        bool explicit_;
        accel_active[i] = false;
        if (!accel_allowed(setting, user_set, c->name, &explicit_)) {
            ACCEL_VERBOSE(2, "component %s not selected (RAIL_ACCEL=%s)", c->name, setting);
            continue;
        }
        const char *why = "unknown reason";
        if (c->query(i, &why) != MPI_SUCCESS) {
            if (explicit_)
                rail_warn("accel: component %s was requested but is not available: %s", c->name,
                          why);
            else
                ACCEL_VERBOSE(1, "component %s not available: %s", c->name, why);
            continue;
        }
        accel_active[i] = true;
        ndevice += c->is_device;
        if (c->classify != NULL)
            accel_classifiers[accel_nclassifiers++] = i;
        ACCEL_VERBOSE(1, "component %s active", c->name);
    }
    __atomic_store_n(&accel_any_device_active, ndevice > 0, __ATOMIC_RELEASE);
}

static void accel_atfork_prepare(void)
{
    accel_memtab_atfork_prepare();
}

static void accel_atfork_parent(void)
{
    accel_memtab_atfork_parent();
}

static void accel_atfork_child(void)
{
    accel_memtab_atfork_child();
}

static void accel_register_atfork(void)
{
    pthread_atfork(accel_atfork_prepare, accel_atfork_parent, accel_atfork_child);
}

int accel_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, accel_register_atfork);
    pthread_mutex_lock(&accel_init_lock);
    if (accel_refcount++ == 0)
        accel_select();
    pthread_mutex_unlock(&accel_init_lock);
    return MPI_SUCCESS;
}

int accel_base_ensure_init(void)
{
    if (__atomic_load_n(&accel_refcount, __ATOMIC_ACQUIRE) > 0)
        return MPI_SUCCESS;
    pthread_mutex_lock(&accel_init_lock);
    bool need = accel_refcount == 0;
    pthread_mutex_unlock(&accel_init_lock);
    return need ? accel_init() : MPI_SUCCESS;
}

int accel_finalize(void)
{
    pthread_mutex_lock(&accel_init_lock);
    if (accel_refcount > 0 && --accel_refcount == 0) {
        accel_dt_fini();
        ipc_cache_drain();
        scratch_drain();
        __atomic_store_n(&accel_any_device_active, 0, __ATOMIC_RELEASE);
        for (int i = NCOMP - 1; i >= 0; i--) {
            if (accel_active[i] && accel_components[i]->finalize != NULL)
                accel_components[i]->finalize();
            accel_active[i] = false;
        }
        accel_nclassifiers = 0;
        accel_memtab_fini();
    }
    pthread_mutex_unlock(&accel_init_lock);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ lookup */

/* The memtab entry or classification of ptr; false for unknown (host) memory. */
static bool accel_lookup(const void *ptr, accel_range_t *r)
{
    if (accel_memtab_find((uintptr_t)ptr, r))
        return true;
    for (int k = 0; k < accel_nclassifiers; k++) {
        const accel_component_t *c = accel_components[accel_classifiers[k]];
        if (c->classify(ptr, r))
            return true;
    }
    return false;
}

/* Like accel_lookup, but true only for device (or managed) memory. */
static inline bool accel_lookup_device(const void *ptr, accel_range_t *r)
{
    if (RAIL_LIKELY(!accel_any_device_active))
        return false;
    return accel_lookup(ptr, r) && r->type != ACCEL_MEM_HOST;
}

accel_mem_type_t accel_memory_type_lookup(const void *ptr)
{
    accel_range_t r;
    return accel_lookup(ptr, &r) ? (accel_mem_type_t)r.type : ACCEL_MEM_HOST;
}

int accel_memory_info(const void *ptr, accel_mem_info_t *info)
{
    accel_range_t r;
    if (!accel_any_device_active || !accel_lookup(ptr, &r)) {
        *info = (accel_mem_info_t){ .type = ACCEL_MEM_HOST, .component = 0, .device = -1 };
        return MPI_SUCCESS;
    }
    const accel_component_t *c = accel_components[r.component];
    if (c->revalidate != NULL) {
        int rc = c->revalidate(ptr, &r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *info = (accel_mem_info_t){ .type = (accel_mem_type_t)r.type, .component = r.component,
                                .device = r.device, .base = (void *)r.base, .size = r.size,
                                .id = r.id };
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ dispatch */

/* The component's own queue for `stream` (NULL stream: NULL, synchronous). */
static int stream_queue(accel_stream_t *stream, int comp, void **queue)
{
    *queue = NULL;
    if (stream == NULL)
        return MPI_SUCCESS;
    if (stream->queue[comp] == NULL) {
        int rc = accel_components[comp]->stream_create(&stream->queue[comp]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *queue = stream->queue[comp];
    return MPI_SUCCESS;
}

/* The single device component that owns the device operands; -1 on a mix. */
static int owner(bool da, const accel_range_t *a, bool db, const accel_range_t *b)
{
    if (da && db && a->component != b->component) {
        rail_warn_once("accel-mix", "accel: an operation between memory of %s and %s is not "
                       "supported", accel_component_name(a->component),
                       accel_component_name(b->component));
        return -1;
    }
    return da ? a->component : b->component;
}

int accel_copy(void *dst, const void *src, size_t len, accel_stream_t *stream)
{
    accel_range_t dr, sr;
    if (len == 0)
        return MPI_SUCCESS;
    bool dd = accel_lookup_device(dst, &dr);
    bool sd = accel_lookup_device(src, &sr);
    if (RAIL_LIKELY(!dd && !sd)) {
        memcpy(dst, src, len);
        return MPI_SUCCESS;
    }
    int comp = owner(dd, &dr, sd, &sr);
    if (comp < 0)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    void *q;
    int rc = stream_queue(stream, comp, &q);
    if (rc != MPI_SUCCESS)
        return rc;
    return accel_components[comp]->copy(dst, dd ? &dr : NULL, src, sd ? &sr : NULL, len, q);
}

int accel_reduce(rail_op_t op, rail_typekind_t tk, const void *in, void *inout, size_t count,
                 accel_stream_t *stream)
{
    accel_range_t ir, orr;
    bool id = accel_lookup_device(in, &ir);
    bool od = accel_lookup_device(inout, &orr);
    if (RAIL_LIKELY(!id && !od))
        return rail_op_reduce(op, tk, in, inout, count);
    int comp = owner(id, &ir, od, &orr);
    if (comp < 0)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    void *q;
    int rc = stream_queue(stream, comp, &q);
    if (rc != MPI_SUCCESS)
        return rc;
    return accel_components[comp]->reduce(op, tk, in, id ? &ir : NULL, inout, od ? &orr : NULL,
                                          count, q);
}

#define REDUCE_MANY_FAST 16   /* inputs checked for the component's one-pass form */

int accel_reduce_many_to(rail_op_t op, rail_typekind_t tk, const void *const *in, int nin,
                         void *const *out, int nout, size_t count, accel_stream_t *stream)
{
    if (nin < 1 || nout < 1)
        return MPI_ERR_ARG;
    if (op == RAIL_OP_NO_OP)
        nin = 1;
    accel_range_t orr, ir[REDUCE_MANY_FAST], xr;
    bool od = accel_lookup_device(out[0], &orr);
    /* one pass where the owner of out[0] has one and every input and
     * output is device memory of out[0]'s context (cuda: the cookie; a
     * peer's buffer opened by IPC is mapped in the context that opened it,
     * whichever device holds it) */
    bool fast = od && (nin > 1 || nout > 1) && nin <= REDUCE_MANY_FAST && count > 0 &&
                accel_components[orr.component]->reduce_many != NULL;
    for (int i = 0; i < nin && fast; i++)
        fast = accel_lookup_device(in[i], &ir[i]) && ir[i].component == orr.component &&
               ir[i].cookie == orr.cookie;
    for (int j = 1; j < nout && fast; j++)
        fast = accel_lookup_device(out[j], &xr) && xr.component == orr.component &&
               xr.cookie == orr.cookie;
    if (fast) {
        void *q;
        int rc = stream_queue(stream, orr.component, &q);
        if (rc == MPI_SUCCESS)
            rc = accel_components[orr.component]->reduce_many(op, tk, in, ir, nin, out, nout,
                                                              &orr, count, q);
        if (rc != MPI_ERR_OP)
            return rc;
    }
    /* out[0] first (it may be in[0]: the copy is skipped), the others from
     * it once every input has been read (out[j] may be in[j]) */
    size_t esz = rail_typekind_size(tk);
    int rc = in[0] == out[0] ? MPI_SUCCESS : accel_copy(out[0], in[0], count * esz, stream);
    for (int i = 1; i < nin && rc == MPI_SUCCESS; i++)
        rc = accel_reduce(op, tk, in[i], out[0], count, stream);
    for (int j = 1; j < nout && rc == MPI_SUCCESS; j++)
        if (out[j] != out[0])
            rc = accel_copy(out[j], out[0], count * esz, stream);
    return rc;
}

int accel_reduce_many(rail_op_t op, rail_typekind_t tk, const void *const *in, int nin,
                      void *out, size_t count, accel_stream_t *stream)
{
    return accel_reduce_many_to(op, tk, in, nin, &out, 1, count, stream);
}

int accel_copy_many(void *const *dst, const void *const *src, const size_t *len, int n,
                    accel_stream_t *stream)
{
    if (n < 0)
        return MPI_ERR_ARG;
    /* one launch where the owner has one and every buffer is device memory
     * of one context (the first destination's; peers' buffers opened by
     * IPC are mapped in the context that opened them) */
    accel_range_t r0, dr, sr;
    int k = 0, first = 0;
    while (first < n && len[first] == 0)
        first++;
    bool fast = first < n && accel_lookup_device(dst[first], &r0) &&
                accel_components[r0.component]->copy_many != NULL;
    for (int i = first; i < n && fast; i++) {
        if (len[i] == 0)
            continue;
        fast = accel_lookup_device(dst[i], &dr) && accel_lookup_device(src[i], &sr) &&
               dr.component == r0.component && dr.cookie == r0.cookie &&
               sr.component == r0.component && sr.cookie == r0.cookie;
        k++;
    }
    if (fast && k > 1) {
        void *q;
        int rc = stream_queue(stream, r0.component, &q);
        if (rc == MPI_SUCCESS)
            rc = accel_components[r0.component]->copy_many(dst, src, len, n, &r0, q);
        if (rc != MPI_ERR_UNSUPPORTED_OPERATION)
            return rc;
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = accel_copy(dst[i], src[i], len[i], stream);
    return rc;
}

/* ------------------------------------------------------------ memory */

void *accel_alloc_host_pinned(size_t len)
{
    for (int i = NCOMP - 1; i > 0 && accel_any_device_active; i--) {
        if (accel_active[i] && accel_components[i]->alloc_host_pinned != NULL) {
            void *p = accel_components[i]->alloc_host_pinned(len);
            if (p != NULL)
                return p;
        }
    }
    return malloc(len);
}

void accel_free_host_pinned(void *ptr)
{
    accel_range_t r;
    if (ptr != NULL && accel_any_device_active && accel_memtab_find((uintptr_t)ptr, &r) &&
        r.base == (uintptr_t)ptr && r.type == ACCEL_MEM_HOST) {
        accel_components[r.component]->free(ptr, &r);
        return;
    }
    free(ptr);
}

/* The highest-priority active device component. */
static int first_device_component(void)
{
    int best = -1;
    for (int i = 0; i < NCOMP; i++)
        if (accel_active[i] && accel_components[i]->is_device &&
            (best < 0 || accel_components[i]->priority > accel_components[best]->priority))
            best = i;
    return best;
}

/*
 * Device temporaries (reduction staging, the collectives' scratch) are kept
 * for reuse once freed, up to accel_scratch_cache bytes: a cuMemAlloc costs
 * tens of microseconds or more and a cuMemFree waits for the whole device,
 * where a collective on device buffers would otherwise pay both every call.
 * A kept buffer serves a request of its component and device (context) that
 * it can hold; the smallest such one is taken.  All go back at finalize.
 */
#define SCRATCH_SLOTS 8

typedef struct scratch_entry {
    void *ptr;
    accel_range_t r;
} scratch_entry_t;

static scratch_entry_t scratch[SCRATCH_SLOTS];
static int scratch_n;
static size_t scratch_bytes;
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;

static void *scratch_take(int comp, const accel_range_t *like, size_t len)
{
    void *p = NULL;
    pthread_mutex_lock(&scratch_lock);
    int best = -1;
    for (int i = 0; i < scratch_n; i++) {
        const accel_range_t *e = &scratch[i].r;
        if (e->component != comp || e->size < len ||
            (like != NULL && (e->device != like->device ||
                              (accel_components[comp]->cookie_is_context &&
                               e->cookie != like->cookie))))
            continue;
        if (best < 0 || e->size < scratch[best].r.size)
            best = i;
    }
    if (best >= 0) {
        p = scratch[best].ptr;
        scratch_bytes -= scratch[best].r.size;
        scratch[best] = scratch[--scratch_n];
        rail_atomic_add_fetch(&accel_count_scratch_reused, 1);
    }
    pthread_mutex_unlock(&scratch_lock);
    return p;
}

/* Keep (true) or let the caller free it.  A full cache makes room by
 * freeing its smallest buffers when they are smaller than this one, so the
 * kept set tends to the largest sizes, which serve every smaller request. */
static bool scratch_keep(void *ptr, const accel_range_t *r)
{
    scratch_entry_t drop[SCRATCH_SLOTS];
    int ndrop = 0;
    bool kept = false;
    pthread_mutex_lock(&scratch_lock);
    while (r->size <= accel_scratch_max &&
           (scratch_n == SCRATCH_SLOTS || scratch_bytes + r->size > accel_scratch_max)) {
        int small = -1;
        for (int i = 0; i < scratch_n; i++)
            if (small < 0 || scratch[i].r.size < scratch[small].r.size)
                small = i;
        if (small < 0 || scratch[small].r.size >= r->size)
            break;
        drop[ndrop++] = scratch[small];
        scratch_bytes -= scratch[small].r.size;
        scratch[small] = scratch[--scratch_n];
    }
    if (scratch_n < SCRATCH_SLOTS && scratch_bytes + r->size <= accel_scratch_max) {
        scratch[scratch_n++] = (scratch_entry_t){ .ptr = ptr, .r = *r };
        scratch_bytes += r->size;
        kept = true;
    }
    pthread_mutex_unlock(&scratch_lock);
    for (int i = 0; i < ndrop; i++)
        accel_components[drop[i].r.component]->free(drop[i].ptr, &drop[i].r);
    return kept;
}

static void scratch_drain(void)
{
    pthread_mutex_lock(&scratch_lock);
    for (int i = 0; i < scratch_n; i++)
        accel_components[scratch[i].r.component]->free(scratch[i].ptr, &scratch[i].r);
    scratch_n = 0;
    scratch_bytes = 0;
    pthread_mutex_unlock(&scratch_lock);
}

void *accel_alloc_device(size_t len, const void *like)
{
    accel_range_t r;
    bool known = like != NULL && accel_lookup_device(like, &r);
    int comp = known ? r.component : first_device_component();
    if (comp < 0)
        return NULL;
    void *p = scratch_take(comp, known ? &r : NULL, len ? len : 1);
    if (p != NULL)
        return p;
    p = accel_components[comp]->alloc(len, known ? &r : NULL);
    if (p != NULL)
        rail_atomic_add_fetch(&accel_count_device_allocs, 1);
    return p;
}

void accel_free_device(void *ptr)
{
    accel_range_t r;
    if (ptr == NULL)
        return;
    if (!accel_lookup_device(ptr, &r) || r.base != (uintptr_t)ptr) {
        rail_warn("accel: accel_free_device(%p): not the start of a device allocation", ptr);
        return;
    }
    if (!scratch_keep(ptr, &r))
        accel_components[r.component]->free(ptr, &r);
}

/* ------------------------------------------------------------ ipc */

int accel_ipc_handle_get(const void *ptr, accel_ipc_handle_t *handle, size_t *offset)
{
    accel_range_t r;
    if (!accel_lookup_device(ptr, &r))
        return MPI_ERR_ARG;
    const accel_component_t *c = accel_components[r.component];
    if (c->ipc_get == NULL)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    /* The handle names the allocation by its base and size: a cached entry
     * of memory the application freed and allocated anew around ptr would
     * export the wrong allocation, or the right one at the wrong offset. */
    if (c->revalidate != NULL) {
        int rc = c->revalidate(ptr, &r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    memset(handle, 0, sizeof(*handle));
    memcpy(handle->bytes, c->tag, sizeof(c->tag));
    return c->ipc_get(ptr, &r, handle, offset);
}

int accel_ipc_handle_open(const accel_ipc_handle_t *handle, void **base)
{
    for (int i = 0; i < NCOMP; i++) {
        const accel_component_t *c = accel_components[i];
        if (c->ipc_open != NULL && memcmp(handle->bytes, c->tag, sizeof(c->tag)) == 0) {
            if (!accel_active[i]) {
                rail_warn("accel: IPC handle of component %s, which is not active here", c->name);
                return MPI_ERR_UNSUPPORTED_OPERATION;
            }
            return c->ipc_open(handle, base);
        }
    }
    return MPI_ERR_ARG;
}

int accel_ipc_handle_close(void *base)
{
    accel_range_t r;
    if (!accel_lookup_device(base, &r) || r.base != (uintptr_t)base)
        return MPI_ERR_ARG;
    return accel_components[r.component]->ipc_close(base, &r);
}

/*
 * Peers' allocations opened from their handles stay open for later
 * messages (opening costs a driver round trip or more: cuIpcOpenMemHandle
 * maps the peer's memory).  A handle names one allocation (cuda: a unique
 * id; fake: pid, fd and inode), so a peer's new allocation at a recycled
 * address is a new entry.  The cost: a peer's freed allocation stays mapped
 * here until it is evicted.
 *
 * Each open holds its entry until accel_ipc_handle_release: a held mapping
 * is never closed, so one thread's open cannot unmap what another thread
 * (or an earlier open of the same operation) is copying from.  Up to
 * IPC_CACHE entries are kept; beyond that the least recently used idle one
 * is closed, and when every entry is held the table grows and shrinks back
 * as they are released.  All are closed at accel_finalize.
 */
#define IPC_CACHE 64

typedef struct ipc_entry {
    accel_ipc_handle_t h;
    void *base;
    uint64_t used;
    int holds;
} ipc_entry_t;

static ipc_entry_t *ipc_cache;
static int ipc_n, ipc_cap;
static uint64_t ipc_clock;
static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;
int accel_ipc_cache_max = IPC_CACHE;    /* tests lower it */

static void ipc_drop(int i)
{
    accel_ipc_handle_close(ipc_cache[i].base);
    ipc_cache[i] = ipc_cache[--ipc_n];
}

/* close every idle mapping */
static int ipc_drop_idle(void)
{
    int closed = 0;
    for (int i = ipc_n - 1; i >= 0; i--)
        if (ipc_cache[i].holds == 0) {
            ipc_drop(i);
            closed++;
        }
    return closed;
}

int accel_ipc_handle_open_cached(const accel_ipc_handle_t *handle, void **base)
{
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < ipc_n; i++)
        if (memcmp(&ipc_cache[i].h, handle, sizeof(*handle)) == 0) {
            ipc_cache[i].used = ++ipc_clock;
            ipc_cache[i].holds++;
            *base = ipc_cache[i].base;
            pthread_mutex_unlock(&ipc_lock);
            return MPI_SUCCESS;
        }
    void *b = NULL;
    int rc = MPI_SUCCESS;
    if (ipc_n == ipc_cap) {
        int cap = ipc_cap ? 2 * ipc_cap : 16;
        ipc_entry_t *t = realloc(ipc_cache, (size_t)cap * sizeof(*t));
        if (t == NULL)
            rc = MPI_ERR_NO_MEM;
        else
            ipc_cache = t, ipc_cap = cap;
    }
    if (rc == MPI_SUCCESS)
        rc = accel_ipc_handle_open(handle, &b);
    if (rc == ACCEL_IPC_MAPPED) {
        /* This process has the allocation open under another handle (a CUDA
         * allocation may be exported under handles that differ; a peer's
         * freed allocation stays mapped here while cached): close the idle
         * mappings and try once more.  Still mapped: a held entry maps it,
         * and the caller takes another way this time. */
        ACCEL_VERBOSE(1, "an IPC handle's allocation is open already; closing the idle ones "
                      "of %d cached mappings and opening it again", ipc_n);
        if (ipc_drop_idle() > 0) {
            accel_count_ipc_reopened++;
            rc = accel_ipc_handle_open(handle, &b);
        }
    }
    if (rc == MPI_SUCCESS) {
        if (ipc_n >= accel_ipc_cache_max) {
            int lru = -1;
            for (int i = 0; i < ipc_n; i++)
                if (ipc_cache[i].holds == 0 && (lru < 0 || ipc_cache[i].used < ipc_cache[lru].used))
                    lru = i;
            if (lru >= 0)
                ipc_drop(lru);
        }
        ipc_cache[ipc_n++] = (ipc_entry_t){ *handle, b, ++ipc_clock, 1 };
        *base = b;
    }
    pthread_mutex_unlock(&ipc_lock);
    return rc;
}

void accel_ipc_handle_release(void *base)
{
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < ipc_n; i++)
        if (ipc_cache[i].base == base && ipc_cache[i].holds > 0) {
            /* over the limit (every entry was held when it came): close it */
            if (--ipc_cache[i].holds == 0 && ipc_n > accel_ipc_cache_max)
                ipc_drop(i);
            break;
        }
    pthread_mutex_unlock(&ipc_lock);
}

int accel_ipc_cache_state(int *held)
{
    pthread_mutex_lock(&ipc_lock);
    int n = ipc_n, h = 0;
    for (int i = 0; i < ipc_n; i++)
        h += ipc_cache[i].holds > 0;
    pthread_mutex_unlock(&ipc_lock);
    if (held != NULL)
        *held = h;
    return n;
}

static void ipc_cache_drain(void)
{
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < ipc_n; i++) {
        if (ipc_cache[i].holds > 0)
            ACCEL_VERBOSE(1, "an IPC mapping is still held at finalize (%d holds)",
                          ipc_cache[i].holds);
        accel_ipc_handle_close(ipc_cache[i].base);
    }
    ipc_n = ipc_cap = 0;
    free(ipc_cache);
    ipc_cache = NULL;
    pthread_mutex_unlock(&ipc_lock);
}

/* ------------------------------------------------------------ streams */

int accel_stream_create(accel_stream_t **stream)
{
    *stream = calloc(1, sizeof(**stream));
    return *stream != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int accel_stream_destroy(accel_stream_t *stream)
{
    int rc = MPI_SUCCESS;
    if (stream == NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < NCOMP; i++)
        if (stream->queue[i] != NULL) {
            int rc2 = accel_components[i]->stream_destroy(stream->queue[i]);
            rc = rc != MPI_SUCCESS ? rc : rc2;
        }
    free(stream);
    return rc;
}

int accel_stream_sync(accel_stream_t *stream)
{
    if (stream == NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < NCOMP; i++)
        if (stream->queue[i] != NULL) {
            int rc = accel_components[i]->stream_sync(stream->queue[i]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

int accel_event_record(accel_event_t **event, accel_stream_t *stream)
{
    int rc = MPI_SUCCESS;
    accel_event_t *e = calloc(1, sizeof(*e));
    RAIL_CHECK_ALLOC(e);
    for (int i = 0; stream != NULL && i < NCOMP; i++)
        if (stream->queue[i] != NULL)
            RAIL_CHECK(accel_components[i]->event_record(&e->ev[i], stream->queue[i]));
    *event = e;
    return MPI_SUCCESS;
fail:
    if (e != NULL)
        accel_event_destroy(e);
    *event = NULL;
    return rc;
}

int accel_event_query(accel_event_t *event)
{
    for (int i = 0; i < NCOMP; i++)
        if (event->ev[i] != NULL) {
            int rc = accel_components[i]->event_query(event->ev[i]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

int accel_event_destroy(accel_event_t *event)
{
    if (event == NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < NCOMP; i++)
        if (event->ev[i] != NULL)
            accel_components[i]->event_destroy(event->ev[i]);
    free(event);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ MPIX */

RAIL_EXPORT int MPIX_Query_cuda_support(void)
{
    if (accel_base_ensure_init() != MPI_SUCCESS)
        return 0;
    return accel_base_index("cuda") >= 0;
}
