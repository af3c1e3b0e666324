/* Keyvals and attributes (see obj/attr.h), plus the predefined attributes
 * of communicators (MPI_TAG_UB, MPI_HOST, ...). */
#include "obj/attr.h"
#include "obj/err.h"
#include "obj/comm.h"
#include "obj/errcode.h"
#include "runtime/rte.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct keyval {
    obj_attr_kind_t kind;
    bool in_use;
    bool freed;               /* MPI_*_free_keyval called; kept while attributes use it */
    int refs;                 /* attributes holding it + 1 while not freed */
    void (*copy_fn)(void);    /* kind-specific function, or the 0/1 sentinels */
    void (*delete_fn)(void);
    void *extra_state;
} keyval_t;

typedef struct obj_attr {
    int keyval;
    void *value;
    struct obj_attr *next;
} obj_attr_t;

struct obj_attr_list {
    obj_attr_t *head;
};

#define KEYVAL_BASE 30000
static keyval_t *keyvals;
static int n_keyvals, cap_keyvals, live_keyvals;
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;

#define FN_NULL ((void (*)(void))0)
#define FN_DUP ((void (*)(void))1)

static keyval_t *keyval_get(int id, obj_attr_kind_t kind)
{
    int i = id - KEYVAL_BASE;
    if (i < 0 || i >= n_keyvals || !keyvals[i].in_use || keyvals[i].kind != kind)
        return NULL;
    return &keyvals[i];
}

static void keyval_unref(int id)
{
    keyval_t *k = &keyvals[id - KEYVAL_BASE];
    if (--k->refs == 0) {
        k->in_use = false;
        live_keyvals--;
    }
}

int obj_attr_keyval_create(obj_attr_kind_t kind, void (*copy)(void), void (*del)(void), void *extra,
                         int *out)
{
    pthread_mutex_lock(&attr_lock);
    if (n_keyvals == cap_keyvals) {
        int ncap = cap_keyvals ? 2 * cap_keyvals : 16;
        keyval_t *n = realloc(keyvals, (size_t)ncap * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&attr_lock);
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        }
        keyvals = n;
        cap_keyvals = ncap;
    }
    keyvals[n_keyvals] = (keyval_t){kind, true, false, 1, copy, del, extra};
    *out = KEYVAL_BASE + n_keyvals++;
    live_keyvals++;
    pthread_mutex_unlock(&attr_lock);
    return MPI_SUCCESS;
}

int obj_attr_keyval_free(obj_attr_kind_t kind, int *id)
{
    pthread_mutex_lock(&attr_lock);
    keyval_t *k = keyval_get(*id, kind);
    if (!k || k->freed) {
        pthread_mutex_unlock(&attr_lock);
        return obj_errf(MPI_ERR_KEYVAL, "invalid or predefined keyval %d", *id);
    }
    k->freed = true;
    keyval_unref(*id);
    pthread_mutex_unlock(&attr_lock);
    *id = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int obj_attr_live_keyvals(void)
{
    return live_keyvals;
}

/* Call a keyval's delete callback for the attribute value. */
static int call_delete(obj_attr_kind_t kind, keyval_t *k, void *handle, int id, void *value)
{
    if (k->delete_fn == FN_NULL)
        return MPI_SUCCESS;
    int rc;
    switch (kind) {
    case OBJ_ATTR_COMM:
        rc = ((MPI_Comm_delete_attr_function *)k->delete_fn)((MPI_Comm)handle, id, value,
                                                              k->extra_state);
        break;
    case OBJ_ATTR_TYPE:
        rc = ((MPI_Type_delete_attr_function *)k->delete_fn)((MPI_Datatype)handle, id, value,
                                                              k->extra_state);
        break;
    default:
        rc = ((MPI_Win_delete_attr_function *)k->delete_fn)((MPI_Win)handle, id, value,
                                                             k->extra_state);
        break;
    }
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : obj_errf(rc, "attribute delete callback for keyval %d failed", id);
}

static int call_copy(obj_attr_kind_t kind, keyval_t *k, void *handle, int id, void *in,
                     void **out, int *flag)
{
    *flag = 0;
    if (k->copy_fn == FN_NULL)
        return MPI_SUCCESS;
    if (k->copy_fn == FN_DUP) {
        *out = in;
        *flag = 1;
        return MPI_SUCCESS;
    }
    int rc;
    switch (kind) {
    case OBJ_ATTR_COMM:
        rc = ((MPI_Comm_copy_attr_function *)k->copy_fn)((MPI_Comm)handle, id, k->extra_state, in,
                                                          out, flag);
        break;
    case OBJ_ATTR_TYPE:
        rc = ((MPI_Type_copy_attr_function *)k->copy_fn)((MPI_Datatype)handle, id, k->extra_state,
                                                          in, out, flag);
        break;
    default:
        rc = ((MPI_Win_copy_attr_function *)k->copy_fn)((MPI_Win)handle, id, k->extra_state, in,
                                                         out, flag);
        break;
    }
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : obj_errf(rc, "attribute copy callback for keyval %d failed", id);
}

static obj_attr_t **find(struct obj_attr_list *list, int keyval)
{
    obj_attr_t **p = &list->head;
    while (*p && (*p)->keyval != keyval)
        p = &(*p)->next;
    return p;
}

static int ensure_list(struct obj_attr_list **list)
{
    if (!*list && !(*list = calloc(1, sizeof(**list))))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

/* Callbacks run without the lock held: they may call MPI. */
int obj_attr_set(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list, int keyval,
                 void *value)
{
    pthread_mutex_lock(&attr_lock);
    keyval_t *k = keyval_get(keyval, kind);
    pthread_mutex_unlock(&attr_lock);
    if (!k)
        return obj_errf(MPI_ERR_KEYVAL, "invalid keyval %d for this kind of object", keyval);
    int rc = ensure_list(list);
    if (rc)
        return rc;
    obj_attr_t **p = find(*list, keyval);
    if (*p) {
        keyval_t kcopy = *k;
        if ((rc = call_delete(kind, &kcopy, handle, keyval, (*p)->value)))
            return rc;
        (*p)->value = value;
        return MPI_SUCCESS;
    }
    obj_attr_t *a = malloc(sizeof(*a));
    if (!a)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    *a = (obj_attr_t){keyval, value, NULL};
    *p = a;
    pthread_mutex_lock(&attr_lock);
    k->refs++;
    pthread_mutex_unlock(&attr_lock);
    return MPI_SUCCESS;
}

int obj_attr_get(obj_attr_kind_t kind, struct obj_attr_list *list, int keyval, void *value_out,
                 int *flag)
{
    pthread_mutex_lock(&attr_lock);
    keyval_t *k = keyval_get(keyval, kind);
    pthread_mutex_unlock(&attr_lock);
    if (!k)
        return obj_errf(MPI_ERR_KEYVAL, "invalid keyval %d for this kind of object", keyval);
    obj_attr_t **p = list ? find(list, keyval) : NULL;
    *flag = p && *p;
    if (*flag)
        *(void **)value_out = (*p)->value;
    return MPI_SUCCESS;
}

int obj_attr_delete(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list, int keyval)
{
    pthread_mutex_lock(&attr_lock);
    keyval_t *k = keyval_get(keyval, kind);
    pthread_mutex_unlock(&attr_lock);
    if (!k)
        return obj_errf(MPI_ERR_KEYVAL, "invalid keyval %d for this kind of object", keyval);
    obj_attr_t **p = *list ? find(*list, keyval) : NULL;
    if (!p || !*p)
        return obj_errf(MPI_ERR_KEYVAL, "no attribute is set for keyval %d", keyval);
    keyval_t kcopy = *k;
    int rc = call_delete(kind, &kcopy, handle, keyval, (*p)->value);
    if (rc)
        return rc;
    obj_attr_t *a = *p;
    *p = a->next;
    free(a);
    pthread_mutex_lock(&attr_lock);
    keyval_unref(keyval);
    pthread_mutex_unlock(&attr_lock);
    return MPI_SUCCESS;
}

int obj_attr_delete_all(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list)
{
    int rc = MPI_SUCCESS;
    /* Delete in reverse order of setting is not required; MPI-4 asks for
     * COMM_SELF attributes at finalize to go in LIFO order: the list is
     * kept in insertion order, so walk it backwards through recursion-free
     * repeated removal of the last element. */
    while (*list && (*list)->head) {
        obj_attr_t **p = &(*list)->head;
        while ((*p)->next)
            p = &(*p)->next;
        int id = (*p)->keyval;
        if ((rc = obj_attr_delete(kind, handle, list, id)))
            break;
    }
    if (rc == MPI_SUCCESS) {
        free(*list);
        *list = NULL;
    }
    return rc;
}

int obj_attr_copy_all(obj_attr_kind_t kind, void *old_handle, struct obj_attr_list *src,
                      struct obj_attr_list **dst)
{
    *dst = NULL;
    for (obj_attr_t *a = src ? src->head : NULL; a; a = a->next) {
        pthread_mutex_lock(&attr_lock);
        keyval_t kcopy = *keyval_get(a->keyval, kind);
        pthread_mutex_unlock(&attr_lock);
        void *out = NULL;
        int flag, rc = call_copy(kind, &kcopy, old_handle, a->keyval, a->value, &out, &flag);
        if (rc == MPI_SUCCESS && flag) {
            /* No delete callback may run on the partial copy: set directly. */
            if ((rc = ensure_list(dst)) == MPI_SUCCESS) {
                obj_attr_t *n = malloc(sizeof(*n));
                if (!n)
                    rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
                else {
                    *n = (obj_attr_t){a->keyval, out, NULL};
                    *find(*dst, a->keyval) = n;
                    pthread_mutex_lock(&attr_lock);
                    keyvals[a->keyval - KEYVAL_BASE].refs++;
                    pthread_mutex_unlock(&attr_lock);
                }
            }
        }
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------- predefined */

static int attr_tag_ub = OBJ_TAG_UB, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE,
           attr_wtime_global = 0, attr_appnum, attr_universe, attr_lastused;

bool obj_attr_comm_predef(int keyval, void *value_out, int *flag)
{
    void *v;
    *flag = 1;
    switch (keyval) {
    case MPI_TAG_UB: v = &attr_tag_ub; break;
    case MPI_HOST: v = &attr_host; break;
    case MPI_IO: v = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
    case MPI_APPNUM:
        attr_appnum = rte_info.appnum;
        v = &attr_appnum;
        break;
    case MPI_UNIVERSE_SIZE:
        attr_universe = rte_info.universe_size;
        v = &attr_universe;
        break;
    case MPI_LASTUSEDCODE:
        attr_lastused = obj_errcode_lastused;
        v = &attr_lastused;
        break;
    default: *flag = 0; return false;
    }
    *(void **)value_out = v;
    return true;
}

bool obj_attr_is_predef(int keyval)
{
    static const int predef[] = {MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
                                 MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_WIN_BASE,
                                 MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR,
                                 MPI_WIN_MODEL};
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(predef); i++)
        if (keyval == predef[i])
            return true;
    return false;
}
