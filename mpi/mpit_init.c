/* MPI_T_init_thread / MPI_T_finalize, the interface lock, and the helpers
 * every MPI_T file uses: string return, verbosity, handle tables. */
#include "mpi/mpit.h"
#include "mpi/mpi_env.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mpit_mutex = PTHREAD_MUTEX_INITIALIZER;
static int mpit_refs;   /* MPI_T_init_thread calls not yet finalized */

int mpit_enter(void)
{
    pthread_mutex_lock(&mpit_mutex);
    if (mpit_refs > 0)
        return MPI_SUCCESS;
    pthread_mutex_unlock(&mpit_mutex);
    return MPI_T_ERR_NOT_INITIALIZED;
}

void mpit_exit(void)
{
    pthread_mutex_unlock(&mpit_mutex);
}

/* ------------------------------------------------------------ init, finalize */

static bool valid_thread_level(int level)
{
    return level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED ||
           level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE;
}

int mpii_t_init_thread(int required, int *provided)
{
    if (!valid_thread_level(required) || !provided)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&mpit_mutex);
    int rc = MPI_SUCCESS;
    /* Before MPI_Init the registry may be empty: register every framework's
     * parameters now (MPI_Init registers them again and keeps the values,
     * so a cvar written now takes effect there).  Once the core is up they
     * are all registered; registering again would only race with it. */
    if (mpit_refs == 0 && !mpi_env.core_up && mpi_params_register_all() != MPI_SUCCESS)
        rc = MPI_T_ERR_CANNOT_INIT;
    if (rc == MPI_SUCCESS) {
        mpit_refs++;
        /* Everything is behind mpit_mutex: any level can be provided. */
        *provided = required;
    }
    pthread_mutex_unlock(&mpit_mutex);
    return rc;
}

int mpii_t_finalize(void)
{
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (--mpit_refs == 0) {
        /* Handles and sessions do not outlive the interface. */
        mpit_cvar_release_all();
        mpit_pvar_release_all();
    }
    mpit_exit();
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ helpers */

void mpit_copy_string(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    size_t need = strlen(s ? s : "") + 1;
    if (buf && *len > 0) {
        size_t n = RAIL_MIN(need - 1, (size_t)*len - 1);
        memcpy(buf, s, n);
        buf[n] = '\0';
    }
    *len = need > (size_t)INT32_MAX ? INT32_MAX : (int)need;
}

int mpit_verbosity(int level)
{
    static const int map[9] = {
        MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,   MPI_T_VERBOSITY_USER_ALL,
        MPI_T_VERBOSITY_TUNER_BASIC,  MPI_T_VERBOSITY_TUNER_DETAIL,  MPI_T_VERBOSITY_TUNER_ALL,
        MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL,
    };
    int i = RAIL_MIN(RAIL_MAX(level, 1), 9) - 1;
    return map[i];
}

/* ------------------------------------------------------------ handle tables */

#define SLOT_BITS 20
#define SLOT_MAX ((1 << SLOT_BITS) - 2)
#define GEN_MASK 0x7ff   /* 11 bits: handles stay below 2^31 */

static uintptr_t make_handle(int slot, uint16_t gen)
{
    return ((uintptr_t)gen << SLOT_BITS) | (uintptr_t)(slot + 1);
}

void *mpit_table_new(mpit_table_t *t, size_t size, int full_rc, uintptr_t *handle, int *rc)
{
    void *obj = calloc(1, size);
    *rc = MPI_T_ERR_MEMORY;
    if (!obj)
        return NULL;
    *handle = mpit_table_add(t, obj);
    if (!*handle) {
        free(obj);
        *rc = full_rc;
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return obj;
}

uintptr_t mpit_table_add(mpit_table_t *t, void *obj)
{
    int slot = 0;
    while (slot < t->n && t->obj[slot])
        slot++;
    if (slot == t->n) {
        if (t->n == SLOT_MAX)
            return 0;
        if (t->n == t->cap) {
            int ncap = t->cap ? 2 * t->cap : 16;
            void **no = realloc(t->obj, (size_t)ncap * sizeof(*no));
            if (!no)
                return 0;
            t->obj = no;
            uint16_t *ng = realloc(t->gen, (size_t)ncap * sizeof(*ng));
            if (!ng)
                return 0;
            t->gen = ng;
            t->cap = ncap;
        }
        t->obj[slot] = NULL;
        t->gen[slot] = 0;
        t->n++;
    }
    /* A new generation for every use of the slot; never 0, so that no
     * handle is 0 or 1. */
    t->gen[slot] = (uint16_t)((t->gen[slot] % GEN_MASK) + 1);
    t->obj[slot] = obj;
    return make_handle(slot, t->gen[slot]);
}

static int slot_of(const mpit_table_t *t, uintptr_t h)
{
    uintptr_t s = h & (((uintptr_t)1 << SLOT_BITS) - 1);
    uintptr_t g = h >> SLOT_BITS;
    if (s == 0 || s > (uintptr_t)t->n)
        return -1;
    int slot = (int)s - 1;
    return t->obj[slot] && t->gen[slot] == g ? slot : -1;
}

void *mpit_table_get(const mpit_table_t *t, uintptr_t h)
{
    int slot = slot_of(t, h);
    return slot >= 0 ? t->obj[slot] : NULL;
}

void mpit_table_remove(mpit_table_t *t, uintptr_t h)
{
    int slot = slot_of(t, h);
    if (slot >= 0)
        t->obj[slot] = NULL;
}

uintptr_t mpit_table_handle_at(const mpit_table_t *t, int i)
{
    return i >= 0 && i < t->n && t->obj[i] ? make_handle(i, t->gen[i]) : 0;
}
