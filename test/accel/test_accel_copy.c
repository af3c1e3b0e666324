/*
 * accel_copy in every direction between host and fake memory, at offsets
 * inside allocations, within one allocation, with and without streams and
 * events; overruns are refused; fork keeps fake memory usable.
 */
#include "config.h"
#include "accel/accel_internal.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <unistd.h>
#include <sys/wait.h>

#define SZ 100000

static char h1[SZ], h2[SZ];

static void test_directions(accel_stream_t *s)
{
    char *d1, *d2;
    CHECK_OK(MPIX_Fake_device_malloc(SZ, (void **)&d1));
    CHECK_OK(MPIX_Fake_device_malloc(SZ + 77, (void **)&d2));
    size_t offs[] = { 0, 1, 7, 4095, 4096, 4097, 50000 };
    size_t lens[] = { 1, 3, 64, 4096, 12345, SZ - 50000 };
    for (size_t a = 0; a < sizeof(offs) / sizeof(offs[0]); a++)
        for (size_t b = 0; b < sizeof(lens) / sizeof(lens[0]); b++) {
            size_t off = offs[a], len = lens[b], off2 = (off * 3) % 1000;
            if (off + len > SZ)
                continue;
            unsigned seed = (unsigned)(a * 10 + b);
            test_pattern(h1, SZ, seed);
            memset(h2, 0, SZ);
            CHECK_OK(accel_copy(d1 + off, h1 + off, len, s));          /* h -> d */
            CHECK_OK(accel_copy(d2 + off2, d1 + off, len, s));         /* d -> d */
            CHECK_OK(accel_copy(h2, d2 + off2, len, s));               /* d -> h */
            if (s != NULL)
                CHECK_OK(accel_stream_sync(s));
            CHECK(memcmp(h2, h1 + off, len) == 0);
            CHECK_OK(accel_copy(h2 + 1, h2, 0, s));                     /* nothing */
        }
    /* Within one allocation (non-overlapping halves), and host to host. */
    test_pattern(h1, SZ, 99);
    CHECK_OK(accel_copy(d1, h1, SZ / 2, s));
    CHECK_OK(accel_copy(d1 + SZ / 2, d1, SZ / 2, s));
    CHECK_OK(accel_copy(h2, d1 + SZ / 2, SZ / 2, s));
    CHECK(memcmp(h2, h1, SZ / 2) == 0);
    CHECK_OK(accel_copy(h2, h1, SZ, s));
    CHECK(memcmp(h2, h1, SZ) == 0);
    /* Overruns of the allocation are refused, nothing is touched. */
    CHECK_RC(accel_copy(d1 + SZ - 10, h1, 11, s), MPI_ERR_ARG);
    CHECK_RC(accel_copy(h2, d1 + 1, SZ, s), MPI_ERR_ARG);
    CHECK_OK(accel_copy(d1 + SZ - 10, h1, 10, s));
    CHECK_OK(MPIX_Fake_device_free(d1));
    CHECK_OK(MPIX_Fake_device_free(d2));
}

static void test_events(void)
{
    accel_stream_t *s;
    accel_event_t *e;
    char *d;
    CHECK_OK(accel_stream_create(&s));
    CHECK_OK(accel_event_record(&e, s));         /* nothing queued yet */
    CHECK_OK(accel_event_query(e));
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(MPIX_Fake_device_malloc(1000, (void **)&d));
    CHECK_OK(accel_copy(d, h1, 1000, s));
    CHECK_OK(accel_event_record(&e, s));
    CHECK_OK(accel_event_query(e));              /* the fake device is synchronous */
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(accel_event_record(&e, NULL));
    CHECK_OK(accel_event_query(e));
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(accel_stream_destroy(s));
    CHECK_OK(MPIX_Fake_device_free(d));
}

static void test_fork(void)
{
    char *d;
    CHECK_OK(MPIX_Fake_device_malloc(SZ, (void **)&d));
    test_pattern(h1, SZ, 5);
    CHECK_OK(accel_copy(d, h1, SZ, NULL));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {     /* the child reads the parent's memory and makes its own */
        char *c;
        memset(h2, 0, SZ);
        if (accel_copy(h2, d, SZ, NULL) != MPI_SUCCESS || memcmp(h1, h2, SZ) != 0)
            _exit(2);
        if (MPIX_Fake_device_malloc(SZ, (void **)&c) != MPI_SUCCESS || !accel_is_device(c))
            _exit(3);
        if (accel_copy(c, d, SZ, NULL) != MPI_SUCCESS || accel_copy(h2, c, SZ, NULL) != 0 ||
            memcmp(h1, h2, SZ) != 0)
            _exit(4);
        if (MPIX_Fake_device_free(c) != MPI_SUCCESS)
            _exit(5);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(accel_is_device(d));
    CHECK_OK(MPIX_Fake_device_free(d));
}

int main(void)
{
    test_select("host,fake");
    CHECK_OK(accel_init());
    test_directions(NULL);
    accel_stream_t *s;
    CHECK_OK(accel_stream_create(&s));
    test_directions(s);
    CHECK_OK(accel_stream_destroy(s));
    test_events();
    test_fork();
    CHECK_OK(accel_finalize());
    printf("copy: ok\n");
    return 0;
}
