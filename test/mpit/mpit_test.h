/* Helpers for the MPI_T tests: MPI_T functions return codes, never call
 * errhandlers, so each call is checked against the code it must return. */
#ifndef TEST_MPIT_TEST_H
#define TEST_MPIT_TEST_H

#include "../env/tcheck.h"
#include <stdbool.h>
#include <string.h>

/* An MPI_T call that must return the given code. */
#define T_EXPECT(call, code)                                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (code)) {                                                                       \
            char s_[MPI_MAX_ERROR_STRING] = "?";                                                   \
            int l_;                                                                                \
            MPI_Error_string(rc_, s_, &l_);                                                        \
            CHECK(0, "%s returned %d (%s), expected %s (%d)", #call, rc_, s_, #code, (code));      \
        }                                                                                          \
    } while (0)

#define T_OK(call) T_EXPECT(call, MPI_SUCCESS)

/* Index of a cvar / pvar / category that must exist. */
static inline int t_cvar(const char *name)
{
    int i = -1;
    T_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static inline int t_category(const char *name)
{
    int i = -1;
    T_OK(MPI_T_category_get_index(name, &i));
    return i;
}

static inline int t_pvar(const char *name, int var_class)
{
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, var_class, &i));
    return i;
}

/* Name of cvar i (static buffer). */
static inline const char *t_cvar_name(int i)
{
    static char name[256];
    int len = sizeof(name);
    T_OK(MPI_T_cvar_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    return name;
}

#endif
