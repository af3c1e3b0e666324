/* MPI environment: init state, version, processor name, timers, thread
 * queries, predefined attributes. */
#define CHECK_MPI 1
#include "test/check.h"
#include <string.h>

int main(int argc, char **argv)
{
    int flag, version, subversion, len, rank, size;
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "initialized before MPI_Init");
    MPI_OK(MPI_Finalized(&flag));
    CHECK(!flag, "finalized before MPI_Init");
    /* Allowed before MPI_Init. */
    MPI_OK(MPI_Get_version(&version, &subversion));
    CHECK(version == 4 && subversion == 1, "version %d.%d", version, subversion);
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "Rail MPI") && len == (int)strlen(lib), "library version '%s'", lib);

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "not initialized after MPI_Init");
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &flag));
    CHECK(rank == 0 && flag == 1, "COMM_SELF rank %d size %d", rank, flag);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

    MPI_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len == (int)strlen(name), "processor name '%s' len %d", name, len);

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 0.01, "wtick %g", tick);
    double t1 = MPI_Wtime();
    CHECK(t1 >= t0, "time went back");

    int provided;
    MPI_OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "main thread is not main");

    int *val;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
    CHECK(flag && *val >= 32767, "TAG_UB");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag));
    CHECK(flag && *val == MPI_PROC_NULL, "HOST");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &flag));
    CHECK(flag && (*val == MPI_ANY_SOURCE || (*val >= 0 && *val < size)), "IO");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
    CHECK(flag && (*val == 0 || *val == 1), "WTIME_IS_GLOBAL");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag));
    CHECK(flag && *val == 0, "APPNUM %d", flag ? *val : -1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag));
    CHECK(flag && *val >= size, "UNIVERSE_SIZE");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &val, &flag));
    CHECK(flag && *val >= MPI_ERR_LASTCODE, "LASTUSEDCODE");

    char cname[MPI_MAX_OBJECT_NAME];
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, cname, &len));
    CHECK(strcmp(cname, "MPI_COMM_WORLD") == 0, "name '%s'", cname);
    MPI_OK(MPI_Pcontrol(1));

    MPI_OK(MPI_Finalize());
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag, "not finalized after MPI_Finalize");
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized must stay true after MPI_Finalize");
    return 0;
}
