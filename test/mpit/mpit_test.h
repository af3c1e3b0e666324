/* Helpers for the MPI_T tests: MPI_T functions return codes, never call
 * errhandlers, so each call is checked against the code it must return
 * (MPI_OK, MPI_RETURNS of test/check.h). */
#ifndef TEST_MPIT_TEST_H
#define TEST_MPIT_TEST_H

#define CHECK_MPI 1
#include "test/check.h"

#include <mpi.h>
#include <stdbool.h>
#include <string.h>

/* Index of a cvar / pvar / category that must exist. */
static inline int t_cvar(const char *name)
{
    int i = -1;
    MPI_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static inline int t_category(const char *name)
{
    int i = -1;
    MPI_OK(MPI_T_category_get_index(name, &i));
    return i;
}

static inline int t_pvar(const char *name, int var_class)
{
    int i = -1;
    MPI_OK(MPI_T_pvar_get_index(name, var_class, &i));
    return i;
}

/* Name of cvar i (static buffer). */
static inline const char *t_cvar_name(int i)
{
    static char name[256];
    int len = sizeof(name);
    MPI_OK(MPI_T_cvar_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    return name;
}

/* Index of a choice of an enum cvar. */
static inline int t_cvar_choice(const char *cvar, const char *item)
{
    MPI_T_enum e;
    int num;
    MPI_OK(MPI_T_cvar_get_info(t_cvar(cvar), NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL));
    MPI_OK(MPI_T_enum_get_info(e, &num, NULL, NULL));
    for (int k = 0; k < num; k++) {
        char name[64];
        int len = sizeof(name), value;
        MPI_OK(MPI_T_enum_get_item(e, k, &value, name, &len));
        if (strcmp(name, item) == 0)
            return value;
    }
    CHECK(0, "%s has no choice %s", cvar, item);
    return -1;
}

#endif
