/* Info objects and MPI_INFO_ENV. */
#define CHECK_MPI 1
#include "test/check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Info info, dup;
    char key[MPI_MAX_INFO_KEY], val[64];
    int flag, n, len;

    /* Info functions work before MPI_Init. */
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "color", "blue"));
    /* MPI_Info_create_env says the same before MPI_Init as after it. */
    MPI_Info early;
    MPI_OK(MPI_Info_create_env(argc, argv, &early));
    MPI_OK(MPI_Init(&argc, &argv));
    {
        MPI_Info late;
        MPI_OK(MPI_Info_create_env(argc, argv, &late));
        const char *keys[] = {"maxprocs", "host", "command", "wdir", "arch"};
        for (int k = 0; k < 5; k++) {
            char v1[256], v2[256];
            int l1 = sizeof(v1), l2 = sizeof(v2), f1, f2;
            MPI_OK(MPI_Info_get_string(early, keys[k], &l1, v1, &f1));
            MPI_OK(MPI_Info_get_string(late, keys[k], &l2, v2, &f2));
            CHECK(f1 && f2 && strcmp(v1, v2) == 0, "create_env %s: '%s' before MPI_Init, '%s' after",
                  keys[k], f1 ? v1 : "(none)", f2 ? v2 : "(none)");
        }
        int size, l = sizeof(val);
        MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        MPI_OK(MPI_Info_get_string(early, "maxprocs", &l, val, &flag));
        CHECK(flag && atoi(val) == size, "maxprocs '%s', size %d", flag ? val : "(none)", size);
        MPI_OK(MPI_Info_free(&late));
        MPI_OK(MPI_Info_free(&early));
    }
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_OK(MPI_Info_set(info, "shape", "round"));
    MPI_OK(MPI_Info_set(info, "color", "red"));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    MPI_OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "color") == 0, "key 0 '%s'", key);
    MPI_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "shape") == 0, "key 1 '%s'", key);
    MPI_OK(MPI_Info_get_valuelen(info, "color", &len, &flag));
    CHECK(flag && len == 3, "valuelen %d", len);
    len = sizeof(val);
    MPI_OK(MPI_Info_get_string(info, "color", &len, val, &flag));
    CHECK(flag && strcmp(val, "red") == 0 && len == 4, "get_string '%s' %d", val, len);
    len = 2;
    MPI_OK(MPI_Info_get_string(info, "shape", &len, val, &flag));
    CHECK(flag && len == 6 && strcmp(val, "r") == 0, "truncated get_string '%s' %d", val, len);
    MPI_OK(MPI_Info_get_string(info, "size", &len, val, &flag));
    CHECK(!flag, "missing key found");

    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_delete(info, "color"));
    MPI_FAILS(MPI_Info_delete(info, "color"), MPI_ERR_INFO_NOKEY);
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 2, "dup has %d keys", n);
    MPI_FAILS(MPI_Info_get_nthkey(dup, 2, key), MPI_ERR_ARG);

    char longkey[MPI_MAX_INFO_KEY + 10];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    MPI_FAILS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Info_free(&dup));
    CHECK(info == MPI_INFO_NULL && dup == MPI_INFO_NULL, "free did not reset handles");
    MPI_FAILS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);

    /* MPI_INFO_ENV knows the command and is read-only. */
    len = sizeof(val);
    char cmd[4096];
    len = sizeof(cmd);
    MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, "command", &len, cmd, &flag));
    CHECK(flag && strstr(cmd, "info"), "command '%s'", flag ? cmd : "(none)");
    MPI_FAILS(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO);
    MPI_Info env;
    MPI_OK(MPI_Info_create_env(argc, argv, &env));
    len = sizeof(val);
    MPI_OK(MPI_Info_get_string(env, "thread_level", &len, val, &flag));
    CHECK(flag && strncmp(val, "MPI_THREAD_", 11) == 0, "thread_level '%s'", val);
    MPI_OK(MPI_Info_free(&env));

    /* MPI_Alloc_mem honours the alignment hint; bad hints are refused. */
    MPI_Info hint;
    double *mem;
    MPI_OK(MPI_Info_create(&hint));
    MPI_OK(MPI_Info_set(hint, "mpi_minimum_memory_alignment", "4096"));
    MPI_OK(MPI_Alloc_mem(1000 * sizeof(double), hint, &mem));
    CHECK(((unsigned long)mem & 4095) == 0, "alignment %p", (void *)mem);
    for (int i = 0; i < 1000; i++)
        mem[i] = i;
    MPI_OK(MPI_Free_mem(mem));
    MPI_OK(MPI_Info_set(hint, "mpi_minimum_memory_alignment", "3"));
    MPI_FAILS(MPI_Alloc_mem(64, hint, &mem), MPI_ERR_INFO_VALUE);
    MPI_OK(MPI_Info_free(&hint));

    /* MPI_Get_hw_resource_info: the machine at least, each listed type with
     * "<index>/<count>", and every type accepted by MPI_Comm_split_type. */
    MPI_Info hw;
    char types[512], *save = NULL;
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    len = sizeof(types);
    MPI_OK(MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, types, &flag));
    CHECK(flag && strncmp(types, "hwloc://Machine", 15) == 0, "mpi_hw_resource_type '%s'",
          flag ? types : "(none)");
    for (char *t = strtok_r(types, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned idx, cnt;
        len = sizeof(val);
        MPI_OK(MPI_Info_get_string(hw, t, &len, val, &flag));
        CHECK(flag && sscanf(val, "%u/%u", &idx, &cnt) == 2 && idx < cnt, "%s = '%s'", t, val);
        MPI_Info how;
        MPI_Comm part;
        MPI_OK(MPI_Info_create(&how));
        MPI_OK(MPI_Info_set(how, "mpi_hw_resource_type", t));
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, how, &part));
        CHECK(part != MPI_COMM_NULL, "split by %s gave MPI_COMM_NULL", t);
        MPI_OK(MPI_Comm_free(&part));
        MPI_OK(MPI_Info_free(&how));
    }
    MPI_OK(MPI_Info_free(&hw));
    MPI_FAILS(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);

    MPI_OK(MPI_Finalize());
    return 0;
}
