/* MPI_Info_*: the info objects of obj/info.c. */
#include "mpi/mpi_err.h"
#include "mpi/mpi_env.h"
#include "obj/info.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <string.h>

static int check_key(const char *key)
{
    size_t n = strlen(key);
    if (n == 0)
        return obj_errf(MPI_ERR_INFO_KEY, "empty info key");
    if (n >= MPI_MAX_INFO_KEY)
        return obj_errf(MPI_ERR_INFO_KEY, "info key of %zu characters (MPI_MAX_INFO_KEY is %d)",
                        n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int writable(const obj_info_t *info)
{
    if (info == &obj_info_env)
        return obj_errf(MPI_ERR_INFO, "MPI_INFO_ENV cannot be modified");
    return MPI_SUCCESS;
}

int mpii_info_create(MPI_Info *info)
{
    obj_info_t *i = obj_info_new();
    if (!i)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    *info = obj_info_handle(i);
    return MPI_SUCCESS;
}

int mpii_info_set(obj_info_t *info, const char *key, const char *value)
{
    int rc = writable(info);
    if (rc || (rc = check_key(key)))
        return rc;
    if (strlen(value) >= MPI_MAX_INFO_VAL)
        return obj_errf(MPI_ERR_INFO_VALUE, "info value of %zu characters (MPI_MAX_INFO_VAL is %d)",
                        strlen(value), MPI_MAX_INFO_VAL);
    if (obj_info_set_value(info, key, value))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int mpii_info_delete(obj_info_t *info, const char *key)
{
    int rc = writable(info);
    if (rc || (rc = check_key(key)))
        return rc;
    return obj_info_delete(info, key);
}

int mpii_info_get(obj_info_t *info, const char *key, int valuelen, char *value, int *flag)
{
    int rc = check_key(key);
    if (rc)
        return rc;
    if (valuelen < 0)
        return obj_errf(MPI_ERR_ARG, "negative valuelen %d", valuelen);
    const char *v = obj_info_value(info, key);
    *flag = v != NULL;
    if (v) {
        /* Copies at most valuelen characters plus the terminator. */
        snprintf(value, (size_t)valuelen + 1, "%s", v);
    }
    return MPI_SUCCESS;
}

int mpii_info_get_string(obj_info_t *info, const char *key, int *buflen, char *value, int *flag)
{
    int rc = check_key(key);
    if (rc)
        return rc;
    const char *v = obj_info_value(info, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    int need = (int)strlen(v) + 1;
    if (*buflen > 0)
        snprintf(value, (size_t)*buflen, "%s", v);
    *buflen = need;
    return MPI_SUCCESS;
}

int mpii_info_get_valuelen(obj_info_t *info, const char *key, int *valuelen, int *flag)
{
    int rc = check_key(key);
    if (rc)
        return rc;
    const char *v = obj_info_value(info, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int mpii_info_get_nkeys(obj_info_t *info, int *nkeys)
{
    *nkeys = info->n;
    return MPI_SUCCESS;
}

int mpii_info_get_nthkey(obj_info_t *info, int n, char *key)
{
    if (n < 0 || n >= info->n)
        return obj_errf(MPI_ERR_ARG, "key index %d out of range (the info object has %d keys)", n,
                        info->n);
    snprintf(key, MPI_MAX_INFO_KEY, "%s", info->keys[n]);
    return MPI_SUCCESS;
}

int mpii_info_dup(obj_info_t *info, MPI_Info *newinfo)
{
    obj_info_t *copy;
    int rc = obj_info_copy(info, &copy);
    if (rc)
        return rc;
    *newinfo = obj_info_handle(copy);
    return MPI_SUCCESS;
}

int mpii_info_free(MPI_Info *info)
{
    obj_info_t *i = NULL;
    int rc = obj_info_lookup(*info, &i);
    if (rc)
        return rc;
    if ((rc = writable(i)))
        return rc;
    obj_info_release(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int mpii_info_create_env(int argc, char *argv[], MPI_Info *info)
{
    obj_info_t *i = obj_info_new();
    if (!i)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_info_fill_env(i, argc, argv, mpi_env.thread_level);
    *info = obj_info_handle(i);
    return MPI_SUCCESS;
}
