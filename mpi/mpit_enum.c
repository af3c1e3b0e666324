/* MPI_T enumerations: "bool" (false = 0, true = 1) for the boolean
 * parameters, and one per string parameter with fixed choices ("a|b|c"),
 * named like the parameter, whose items are the choices numbered from 0.
 * An enum handle encodes what it describes, so there is no table:
 *     ENUM_BOOL           the boolean enum
 *     ENUM_BASE + i       the choices of parameter i
 */
#include "mpi/mpit.h"
#include "base/param.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <string.h>

#define ENUM_BOOL ((uintptr_t)0x3fffffff)
#define ENUM_BASE ((uintptr_t)0x40000000)

/* ------------------------------------------------------------ choices */

bool mpit_choice_at(const char *choices, int k, const char **start, int *len)
{
    const char *c = choices;
    for (int i = 0; c; i++) {
        const char *bar = strchr(c, '|');
        if (i == k) {
            *start = c;
            *len = bar ? (int)(bar - c) : (int)strlen(c);
            return true;
        }
        c = bar ? bar + 1 : NULL;
    }
    return false;
}

int mpit_choice_count(const char *choices)
{
    int n = 0;
    const char *s;
    int len;
    while (choices && mpit_choice_at(choices, n, &s, &len))
        n++;
    return n;
}

int mpit_choice_find(const char *choices, const char *value)
{
    const char *s;
    int len;
    for (int k = 0; value && mpit_choice_at(choices, k, &s, &len); k++)
        if ((size_t)len == strlen(value) && strncmp(s, value, (size_t)len) == 0)
            return k;
    return -1;
}

/* ------------------------------------------------------------ enum handles */

MPI_T_enum mpit_enum_of_param(int param_index)
{
    const rail_param_t *p = rail_param_at(param_index);
    if (!p)
        return MPI_T_ENUM_NULL;
    if (p->type == RAIL_PARAM_BOOL)
        return (MPI_T_enum)ENUM_BOOL;
    if (p->type == RAIL_PARAM_STRING && p->choices)
        return (MPI_T_enum)(ENUM_BASE + (uintptr_t)param_index);
    return MPI_T_ENUM_NULL;
}

/* The parameter of a choices enum (NULL for the boolean enum); false when
 * the handle is no enum. */
static bool enum_lookup(MPI_T_enum e, const rail_param_t **param)
{
    uintptr_t v = (uintptr_t)e;
    *param = NULL;
    if (v == ENUM_BOOL)
        return true;
    if (v < ENUM_BASE || v - ENUM_BASE >= (uintptr_t)rail_param_count())
        return false;
    *param = rail_param_at((int)(v - ENUM_BASE));
    return *param && (*param)->type == RAIL_PARAM_STRING && (*param)->choices;
}

static int enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    const rail_param_t *p;
    if (!enum_lookup(enumtype, &p))
        return MPI_T_ERR_INVALID_HANDLE;
    if (num)
        *num = p ? mpit_choice_count(p->choices) : 2;
    mpit_copy_string(p ? p->name : "bool", name, name_len);
    return MPI_SUCCESS;
}

static int enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    const rail_param_t *p;
    if (!enum_lookup(enumtype, &p))
        return MPI_T_ERR_INVALID_HANDLE;
    char item[256];
    if (!p) {
        if (index != 0 && index != 1)
            return MPI_T_ERR_INVALID_ITEM;
        strcpy(item, index ? "true" : "false");
    } else {
        const char *s;
        int len;
        if (index < 0 || !mpit_choice_at(p->choices, index, &s, &len))
            return MPI_T_ERR_INVALID_ITEM;
        len = RAIL_MIN(len, (int)sizeof(item) - 1);
        memcpy(item, s, (size_t)len);
        item[len] = '\0';
    }
    if (value)
        *value = index;
    mpit_copy_string(item, name, name_len);
    return MPI_SUCCESS;
}

int mpii_t_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPIT_LOCKED(enum_get_info(enumtype, num, name, name_len));
}

int mpii_t_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    MPIT_LOCKED(enum_get_item(enumtype, index, value, name, name_len));
}
