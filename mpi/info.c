/* MPI_Info: ordered key/value pairs, and MPI_INFO_ENV. */
#include "mpi/mpi_err.h"
#include "obj/info.h"
#include "mpi/mpi_env.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

obj_info_t obj_info_env;

obj_info_t *obj_info_new(void)
{
    obj_info_t *info = calloc(1, sizeof(*info));
    if (info)
        obj_init(&info->obj, OBJ_INFO);
    return info;
}

static void clear(obj_info_t *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->keys[i]);
        free(info->values[i]);
    }
    free(info->keys);
    free(info->values);
    info->keys = info->values = NULL;
    info->n = info->cap = 0;
}

void obj_info_release(obj_info_t *info)
{
    if (!info || info == &obj_info_env)
        return;
    clear(info);
    obj_fini(&info->obj);
    free(info);
}

static int find(const obj_info_t *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0)
            return i;
    return -1;
}

const char *obj_info_value(const obj_info_t *info, const char *key)
{
    if (!info)
        return NULL;
    int i = find(info, key);
    return i < 0 ? NULL : info->values[i];
}

int obj_info_set_value(obj_info_t *info, const char *key, const char *value)
{
    int i = find(info, key);
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    if (i >= 0) {
        free(info->values[i]);
        info->values[i] = v;
        return MPI_SUCCESS;
    }
    if (info->n == info->cap) {
        int ncap = info->cap ? 2 * info->cap : 8;
        char **k = realloc(info->keys, (size_t)ncap * sizeof(*k));
        if (k)
            info->keys = k;
        char **vv = realloc(info->values, (size_t)ncap * sizeof(*vv));
        if (vv)
            info->values = vv;
        if (!k || !vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        info->cap = ncap;
    }
    info->keys[info->n] = strdup(key);
    info->values[info->n] = v;
    if (!info->keys[info->n]) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    info->n++;
    return MPI_SUCCESS;
}

int obj_info_copy(const obj_info_t *src, obj_info_t **out)
{
    obj_info_t *info = obj_info_new();
    if (!info)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; src && i < src->n; i++) {
        if (obj_info_set_value(info, src->keys[i], src->values[i]) != MPI_SUCCESS) {
            obj_info_release(info);
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        }
    }
    *out = info;
    return MPI_SUCCESS;
}

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
    int i = find(info, key);
    if (i < 0)
        return obj_errf(MPI_ERR_INFO_NOKEY, "info key \"%s\" is not set", key);
    free(info->keys[i]);
    free(info->values[i]);
    memmove(&info->keys[i], &info->keys[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    memmove(&info->values[i], &info->values[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    info->n--;
    return MPI_SUCCESS;
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

/* MPI_Info_create_env: the same keys as MPI_INFO_ENV, from argc/argv. */
static void fill_env(obj_info_t *info, int argc, char **argv)
{
    char buf[4096];
    if (argc > 0 && argv && argv[0])
        obj_info_set_value(info, "command", argv[0]);
    if (argc > 1 && argv) {
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 1; i < argc && off < sizeof(buf); i++)
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i > 1 ? " " : "",
                                    argv[i]);
        obj_info_set_value(info, "argv", buf);
    }
    /* The same before MPI_Init as after it (MPI_Info_create_env may be
     * called first): the launcher's word where the runtime is not up yet
     * (ours sets RAILRT_JOB_SIZE; Slurm's and Open MPI's their own), 1
     * without a launcher (a singleton). */
    const char *size = NULL, *host = NULL;
    if (mpi_env.rte_up) {
        snprintf(buf, sizeof(buf), "%d", rte_info.size);
        size = buf;
        host = rte_info.hostname;
    } else {
        static const char *const size_vars[] = {"RAILRT_JOB_SIZE", "OMPI_COMM_WORLD_SIZE",
                                                "SLURM_NTASKS"};
        for (size_t k = 0; k < RAIL_ARRAY_SIZE(size_vars) && !size; k++)
            size = getenv(size_vars[k]);
        if (!size && !getenv("PMIX_RANK"))
            size = "1";
        host = getenv("PMIX_HOSTNAME");
        if (!host && gethostname(buf, sizeof(buf)) == 0) {
            buf[sizeof(buf) - 1] = '\0';
            host = buf;
        }
    }
    if (size)
        obj_info_set_value(info, "maxprocs", size);
    if (host)
        obj_info_set_value(info, "host", host);
    struct utsname u;
    if (uname(&u) == 0)
        obj_info_set_value(info, "arch", u.machine);
    if (getcwd(buf, sizeof(buf)))
        obj_info_set_value(info, "wdir", buf);
    static const char *levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                   "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int lvl = mpi_env.thread_level == MPI_THREAD_MULTIPLE ? 3
              : mpi_env.thread_level == MPI_THREAD_SERIALIZED ? 2
              : mpi_env.thread_level == MPI_THREAD_FUNNELED ? 1 : 0;
    obj_info_set_value(info, "thread_level", levels[lvl]);
}

int mpii_info_create_env(int argc, char *argv[], MPI_Info *info)
{
    obj_info_t *i = obj_info_new();
    if (!i)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    fill_env(i, argc, argv);
    *info = obj_info_handle(i);
    return MPI_SUCCESS;
}

int obj_info_predef_init(void)
{
    clear(&obj_info_env);
    obj_init_predef(&obj_info_env.obj, OBJ_INFO, MPI_INFO_ENV);
    fill_env(&obj_info_env, mpi_env.argc, mpi_env.argv);
    return MPI_SUCCESS;
}
