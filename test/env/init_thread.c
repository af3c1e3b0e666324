/* MPI_Init_thread at every level; MPI_Is_thread_main from another thread. */
#define CHECK_MPI 1
#include "test/check.h"
#include <pthread.h>
#include <string.h>

static void *other(void *arg)
{
    int flag = -1;
    MPI_Is_thread_main(&flag);
    *(int *)arg = flag;
    return NULL;
}

int main(int argc, char **argv)
{
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    int rank, provided, flag;
    /* The level comes from the rank so that every level runs across ranks. */
    const char *r = getenv("PMIX_RANK");
    rank = r ? atoi(r) : 0;
    int required = levels[rank % 4];
    MPI_OK(MPI_Init_thread(&argc, &argv, required, &provided));
    CHECK(provided == required, "required %d provided %d", required, provided);
    MPI_OK(MPI_Query_thread(&flag));
    CHECK(flag == provided, "query %d", flag);
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "main");
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t t;
        int f = -1;
        pthread_create(&t, NULL, other, &f);
        pthread_join(t, NULL);
        CHECK(f == 0, "other thread reported main=%d", f);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
