/*
 * An MPI_T counter's value, for tests (include after test/check.h with
 * CHECK_MPI defined, whose MPI_OK it uses; MPI_T must be initialised).
 */
#ifndef TEST_PVAR_H
#define TEST_PVAR_H

#include <mpi.h>

/* The value of MPI_T counter `name` (a continuous, readonly pvar). */
static inline unsigned long long pvar_count(const char *name)
{
    int idx, count;
    unsigned long long v = 0;
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    MPI_OK(MPI_T_pvar_session_create(&ses));
    MPI_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_OK(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &count));
    MPI_OK(MPI_T_pvar_read(ses, h, &v));
    MPI_OK(MPI_T_pvar_handle_free(ses, &h));
    MPI_OK(MPI_T_pvar_session_free(&ses));
    return v;
}

#endif
