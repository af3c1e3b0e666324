/* Info objects: ordered key/value pairs, and MPI_INFO_ENV. */
#include "obj/info.h"
#include "obj/err.h"
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

int obj_info_delete(obj_info_t *info, const char *key)
{
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

void obj_info_fill_env(obj_info_t *info, int argc, char **argv, int thread_level)
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
    if (rte_info.size > 0) {   /* the runtime is up */
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
    int lvl = thread_level == MPI_THREAD_MULTIPLE ? 3
              : thread_level == MPI_THREAD_SERIALIZED ? 2
              : thread_level == MPI_THREAD_FUNNELED ? 1 : 0;
    obj_info_set_value(info, "thread_level", levels[lvl]);
}

int obj_info_predef_init(int argc, char **argv, int thread_level)
{
    clear(&obj_info_env);
    obj_init_predef(&obj_info_env.obj, OBJ_INFO, MPI_INFO_ENV);
    obj_info_fill_env(&obj_info_env, argc, argv, thread_level);
    return MPI_SUCCESS;
}
