/*
 * Fortran values of handles (MPI_<Kind>_c2f / MPI_<Kind>_f2c in
 * mpi/handles.c).
 *
 * C handles are pointers; a Fortran handle is an MPI_Fint.  Predefined
 * handles (the ABI constants, below OBJ_PREDEF_MAX) are their own Fortran
 * value.  A handle the library made gets an index in a per-kind table the
 * first time it is converted; its Fortran value is OBJ_PREDEF_MAX + index,
 * and converting it again gives the same value.  f2c of a value that names
 * nothing of the kind gives the kind's null handle.
 *
 * obj_fini drops an object's entry (obj_handle_forget), so a new object
 * at the same address gets a new value, and f2c of a freed object's value
 * gives the kind's null handle.
 */
#include "obj/obj.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ tables */

typedef struct f2c_table {
    obj_kind_t kind;
    uintptr_t null_handle;
    void **objs;          /* index -> handle (NULL: free) */
    int n, cap;           /* used prefix, capacity */
    int first_free;       /* no free slot below it */
    uintptr_t *hkeys;     /* open addressing: handle -> index (0: empty) */
    int *hvals;
    int hcap, hcount;
} f2c_table_t;

enum { T_COMM, T_TYPE, T_GROUP, T_OP, T_INFO, T_ERRH, T_REQ, T_MSG, T_WIN, T_FILE, T_SESSION,
       T_COUNT };

static f2c_table_t tables[T_COUNT] = {
    [T_COMM] = {OBJ_COMM, (uintptr_t)MPI_COMM_NULL},
    [T_TYPE] = {OBJ_DATATYPE, (uintptr_t)MPI_DATATYPE_NULL},
    [T_GROUP] = {OBJ_GROUP, (uintptr_t)MPI_GROUP_NULL},
    [T_OP] = {OBJ_OP, (uintptr_t)MPI_OP_NULL},
    [T_INFO] = {OBJ_INFO, (uintptr_t)MPI_INFO_NULL},
    [T_ERRH] = {OBJ_ERRHANDLER, (uintptr_t)MPI_ERRHANDLER_NULL},
    [T_REQ] = {OBJ_REQUEST, (uintptr_t)MPI_REQUEST_NULL},
    [T_MSG] = {OBJ_MESSAGE, (uintptr_t)MPI_MESSAGE_NULL},
    [T_WIN] = {OBJ_WIN, (uintptr_t)MPI_WIN_NULL},
    [T_FILE] = {OBJ_FILE, (uintptr_t)MPI_FILE_NULL},
    [T_SESSION] = {OBJ_SESSION, (uintptr_t)MPI_SESSION_NULL},
};
static pthread_mutex_t f2c_lock = PTHREAD_MUTEX_INITIALIZER;
static int total_entries;

static unsigned hslot(const f2c_table_t *t, uintptr_t key)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 32) & (unsigned)(t->hcap - 1);
}

static int *hfind(f2c_table_t *t, uintptr_t key)
{
    if (!t->hcap)
        return NULL;
    for (unsigned i = hslot(t, key);; i = (i + 1) & (unsigned)(t->hcap - 1)) {
        if (t->hkeys[i] == key)
            return &t->hvals[i];
        if (!t->hkeys[i])
            return NULL;
    }
}

static void hput(f2c_table_t *t, uintptr_t key, int val)
{
    unsigned i = hslot(t, key);
    while (t->hkeys[i])
        i = (i + 1) & (unsigned)(t->hcap - 1);
    t->hkeys[i] = key;
    t->hvals[i] = val;
    t->hcount++;
}

static bool hgrow(f2c_table_t *t)
{
    if (2 * (t->hcount + 1) <= t->hcap)
        return true;
    int ncap = t->hcap ? 2 * t->hcap : 64;
    uintptr_t *ok = t->hkeys;
    int *ov = t->hvals, ocap = t->hcap;
    t->hkeys = calloc((size_t)ncap, sizeof(*t->hkeys));
    t->hvals = calloc((size_t)ncap, sizeof(*t->hvals));
    if (!t->hkeys || !t->hvals) {
        free(t->hkeys);
        free(t->hvals);
        t->hkeys = ok;
        t->hvals = ov;
        return false;
    }
    t->hcap = ncap;
    t->hcount = 0;
    for (int i = 0; i < ocap; i++)
        if (ok[i])
            hput(t, ok[i], ov[i]);
    free(ok);
    free(ov);
    return true;
}

/* Remove key, shifting later entries of its probe run back. */
static void hdel(f2c_table_t *t, uintptr_t key)
{
    int *v = hfind(t, key);
    if (!v)
        return;
    unsigned mask = (unsigned)(t->hcap - 1), i = (unsigned)(v - t->hvals);
    t->hkeys[i] = 0;
    t->hcount--;
    for (unsigned j = (i + 1) & mask; t->hkeys[j]; j = (j + 1) & mask) {
        uintptr_t k = t->hkeys[j];
        int val = t->hvals[j];
        t->hkeys[j] = 0;
        t->hcount--;
        hput(t, k, val);
    }
}

static int slot_alloc(f2c_table_t *t)
{
    while (t->first_free < t->n && t->objs[t->first_free])
        t->first_free++;
    if (t->first_free < t->n)
        return t->first_free;
    if (t->n == t->cap) {
        int ncap = t->cap ? 2 * t->cap : 64;
        if (ncap > INT32_MAX / 2 - OBJ_PREDEF_MAX)
            return -1;
        void **o = realloc(t->objs, (size_t)ncap * sizeof(*o));
        if (!o)
            return -1;
        t->objs = o;
        t->cap = ncap;
    }
    t->objs[t->n] = NULL;
    return t->n++;
}

static int table_of(obj_kind_t kind)
{
    for (int k = 0; k < T_COUNT; k++)
        if (tables[k].kind == kind)
            return k;
    return -1;
}

MPI_Fint obj_handle_c2f(obj_kind_t kind, const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    if (h < OBJ_PREDEF_MAX)
        return (MPI_Fint)h;
    f2c_table_t *t = &tables[table_of(kind)];
    MPI_Fint f = (MPI_Fint)t->null_handle;
    pthread_mutex_lock(&f2c_lock);
    int *v = hfind(t, h);
    if (v) {
        f = OBJ_PREDEF_MAX + *v;
    } else if (hgrow(t)) {
        int idx = slot_alloc(t);
        if (idx >= 0) {
            t->objs[idx] = (void *)handle;
            hput(t, h, idx);
            total_entries++;
            f = OBJ_PREDEF_MAX + idx;
        }
    }
    pthread_mutex_unlock(&f2c_lock);
    return f;
}

void *obj_handle_f2c(obj_kind_t kind, MPI_Fint f)
{
    int k = table_of(kind);
    f2c_table_t *t = &tables[k];
    if (f >= 0 && f < OBJ_PREDEF_MAX) {
        const obj_t *o = obj_predef_table[f];
        bool special = k == T_MSG && f == (MPI_Fint)(uintptr_t)MPI_MESSAGE_NO_PROC;
        return (o && o->kind == t->kind) || special ? (void *)(uintptr_t)f
                                                    : (void *)t->null_handle;
    }
    void *h = (void *)t->null_handle;
    if (f < OBJ_PREDEF_MAX)
        return h;
    pthread_mutex_lock(&f2c_lock);
    int idx = f - OBJ_PREDEF_MAX;
    if (idx < t->n && t->objs[idx])
        h = t->objs[idx];
    pthread_mutex_unlock(&f2c_lock);
    return h;
}


/* Drop obj's entry (call before the object's memory is released). */
void obj_handle_forget(obj_t *obj)
{
    if (__atomic_load_n(&total_entries, __ATOMIC_RELAXED) == 0)
        return;
    pthread_mutex_lock(&f2c_lock);
    for (int k = 0; k < T_COUNT; k++) {
        f2c_table_t *t = &tables[k];
        if (t->kind != (obj_kind_t)obj->kind)
            continue;
        int *v = hfind(t, (uintptr_t)obj);
        if (v) {
            int idx = *v;
            t->objs[idx] = NULL;
            if (idx < t->first_free)
                t->first_free = idx;
            hdel(t, (uintptr_t)obj);
            total_entries--;
        }
    }
    pthread_mutex_unlock(&f2c_lock);
}

