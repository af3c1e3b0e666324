/*
 * Fortran callbacks: user reduction operations, communicator errhandlers
 * and communicator attribute keyvals.  Fortran passes every argument by
 * reference, and the mpi and mpi_f08 forms of these callbacks have the same
 * calling sequence (a handle is one integer either way), so one trampoline
 * serves both bindings.
 *
 * Not bound yet (listed in fortran/gen/fort_bound.txt): file, window and
 * session errhandlers, type and window keyvals, MPI_Keyval_create,
 * generalized requests, MPI_Register_datarep.
 */
#include "fortran/fort_glue.h"

#include <pthread.h>

typedef void (*fort_user_fn)(void *in, void *inout, MPI_Fint *len, MPI_Fint *type);
typedef void (*fort_errh_fn)(MPI_Fint *comm, MPI_Fint *code);
typedef void (*fort_copy_fn)(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                             MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void (*fort_delete_fn)(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,
                               MPI_Aint *extra, MPI_Fint *ierr);

static pthread_mutex_t fort_cb_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------- operations */

/* The C user function gets no state, so each Fortran operation gets one of
 * a fixed set of trampolines (one per slot). */
#define FORT_OP_SLOTS 64
static fort_user_fn fort_ops[FORT_OP_SLOTS];

static void fort_op_call(int slot, void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Fint flen = *len, ftype = PMPI_Type_c2f(*type);
    fort_ops[slot](in, inout, &flen, &ftype);
}

#define FORT_OP_T(i, j) \
    static void fort_op_t##i##j(void *a, void *b, int *l, MPI_Datatype *t) \
    { fort_op_call((i) * 8 + (j), a, b, l, t); }
#define FORT_OP_T8(i) FORT_OP_T(i, 0) FORT_OP_T(i, 1) FORT_OP_T(i, 2) FORT_OP_T(i, 3) \
    FORT_OP_T(i, 4) FORT_OP_T(i, 5) FORT_OP_T(i, 6) FORT_OP_T(i, 7)
FORT_OP_T8(0) FORT_OP_T8(1) FORT_OP_T8(2) FORT_OP_T8(3)
FORT_OP_T8(4) FORT_OP_T8(5) FORT_OP_T8(6) FORT_OP_T8(7)
#define FORT_OP_N8(i) fort_op_t##i##0, fort_op_t##i##1, fort_op_t##i##2, fort_op_t##i##3, \
    fort_op_t##i##4, fort_op_t##i##5, fort_op_t##i##6, fort_op_t##i##7
static MPI_User_function *const fort_op_tramps[FORT_OP_SLOTS] = {
    FORT_OP_N8(0), FORT_OP_N8(1), FORT_OP_N8(2), FORT_OP_N8(3),
    FORT_OP_N8(4), FORT_OP_N8(5), FORT_OP_N8(6), FORT_OP_N8(7)};

static void fort_op_create(fort_user_fn fn, const MPI_Fint *commute, MPI_Fint *op,
                           MPI_Fint *ierror)
{
    int slot = -1, rc;
    pthread_mutex_lock(&fort_cb_lock);
    for (int i = 0; i < FORT_OP_SLOTS && slot < 0; i++)
        if (!fort_ops[i] || fort_ops[i] == fn)
            slot = i;
    if (slot >= 0)
        fort_ops[slot] = fn;
    pthread_mutex_unlock(&fort_cb_lock);
    if (slot < 0) {
        rc = fort_raise(MPI_ERR_NO_MEM);   /* more distinct Fortran functions than slots */
    } else {
        MPI_Op c_op = MPI_OP_NULL;
        rc = PMPI_Op_create(fort_op_tramps[slot], *commute != 0, &c_op);
        if (rc == MPI_SUCCESS)
            *op = PMPI_Op_c2f(c_op);
    }
    if (ierror)
        *ierror = rc;
}

void mpi_op_create_(fort_user_fn fn, const MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    fort_op_create(fn, commute, op, ierror);
}

void mpi_op_create_f08_(fort_user_fn fn, const MPI_Fint *commute, MPI_Fint *op,
                        MPI_Fint *ierror)
{
    fort_op_create(fn, commute, op, ierror);
}

/* ---------------------------------------------------------- errhandlers */

/* The communicator's errhandler names the Fortran function. */
#define FORT_ERRH_MAX 64
static struct { MPI_Fint errh; fort_errh_fn fn; } fort_errhs[FORT_ERRH_MAX];
static int fort_nerrhs;

static void fort_errh_tramp(MPI_Comm *comm, int *code, ...)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    fort_errh_fn fn = NULL;
    if (PMPI_Comm_get_errhandler(*comm, &eh) != MPI_SUCCESS)
        return;
    MPI_Fint f = PMPI_Errhandler_c2f(eh);
    pthread_mutex_lock(&fort_cb_lock);
    for (int i = 0; i < fort_nerrhs; i++)
        if (fort_errhs[i].errh == f)
            fn = fort_errhs[i].fn;
    pthread_mutex_unlock(&fort_cb_lock);
    PMPI_Errhandler_free(&eh);
    MPI_Fint fcomm = PMPI_Comm_c2f(*comm), fcode = *code;
    if (fn)
        fn(&fcomm, &fcode);
}

static void fort_errh_create(fort_errh_fn fn, MPI_Fint *errh, MPI_Fint *ierror)
{
    MPI_Errhandler c = MPI_ERRHANDLER_NULL;
    int rc = fort_nerrhs < FORT_ERRH_MAX ? PMPI_Comm_create_errhandler(fort_errh_tramp, &c)
                                         : fort_raise(MPI_ERR_NO_MEM);
    if (rc == MPI_SUCCESS) {
        *errh = PMPI_Errhandler_c2f(c);
        pthread_mutex_lock(&fort_cb_lock);
        fort_errhs[fort_nerrhs].errh = *errh;
        fort_errhs[fort_nerrhs++].fn = fn;
        pthread_mutex_unlock(&fort_cb_lock);
    }
    if (ierror)
        *ierror = rc;
}

void mpi_comm_create_errhandler_(fort_errh_fn fn, MPI_Fint *errh, MPI_Fint *ierror)
{
    fort_errh_create(fn, errh, ierror);
}

void mpi_comm_create_errhandler_f08_(fort_errh_fn fn, MPI_Fint *errh, MPI_Fint *ierror)
{
    fort_errh_create(fn, errh, ierror);
}

/* ---------------------------------------------------------- keyvals */

typedef struct fort_keyval {
    fort_copy_fn copy;
    fort_delete_fn del;
    MPI_Aint extra;
} fort_keyval_t;

static int fort_copy_tramp(MPI_Comm old, int keyval, void *extra, void *in, void *out,
                           int *flag)
{
    fort_keyval_t *k = extra;
    MPI_Fint fcomm = PMPI_Comm_c2f(old), fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
    MPI_Aint fin = (MPI_Aint)in, fout = 0;
    k->copy(&fcomm, &fkey, &k->extra, &fin, &fout, &fflag, &ierr);
    *flag = fflag != 0;
    *(void **)out = (void *)fout;
    return ierr;
}

static int fort_delete_tramp(MPI_Comm comm, int keyval, void *val, void *extra)
{
    fort_keyval_t *k = extra;
    MPI_Fint fcomm = PMPI_Comm_c2f(comm), fkey = keyval, ierr = MPI_SUCCESS;
    MPI_Aint fval = (MPI_Aint)val;
    k->del(&fcomm, &fkey, &fval, &k->extra, &ierr);
    return ierr;
}

static void fort_keyval_create(fort_copy_fn copy, fort_delete_fn del, MPI_Fint *keyval,
                               const MPI_Aint *extra, MPI_Fint *ierror)
{
    /* One small record per keyval, kept for the life of the process. */
    fort_keyval_t *k = malloc(sizeof(*k));
    int rc = k ? MPI_SUCCESS : fort_raise(MPI_ERR_NO_MEM);
    if (k) {
        *k = (fort_keyval_t){copy, del, *extra};
        rc = PMPI_Comm_create_keyval(fort_copy_tramp, fort_delete_tramp, keyval, k);
    }
    if (ierror)
        *ierror = rc;
}

void mpi_comm_create_keyval_(fort_copy_fn copy, fort_delete_fn del, MPI_Fint *keyval,
                             const MPI_Aint *extra, MPI_Fint *ierror)
{
    fort_keyval_create(copy, del, keyval, extra, ierror);
}

void mpi_comm_create_keyval_f08_(fort_copy_fn copy, fort_delete_fn del, MPI_Fint *keyval,
                                 const MPI_Aint *extra, MPI_Fint *ierror)
{
    fort_keyval_create(copy, del, keyval, extra, ierror);
}

/* The predefined Fortran copy and delete functions. */
void mpi_comm_null_copy_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                            MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierr = MPI_SUCCESS;
}

void mpi_comm_dup_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)comm, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}

void mpi_comm_null_delete_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,
                              MPI_Fint *ierr)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    *ierr = MPI_SUCCESS;
}
