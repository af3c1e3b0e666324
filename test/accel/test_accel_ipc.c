/*
 * Fake-device IPC: a process exports an allocation, another process (fork +
 * exec of this program, so nothing is inherited) opens the handle, reads
 * the data at the exported offset, writes its own, and closes; the owner
 * sees the writes.  Run with each fetch mechanism (/proc, pidfd_getfd, auto),
 * and as an unprivileged user when started as root.  Stale handles (freed
 * allocation, fd number reused, owner gone) are refused without a crash.
 */
#include "config.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <unistd.h>
#include <sys/wait.h>

#define SZ (3 * 4096 + 100)
#define OFF 5000

static const char *self;

static void to_hex(const accel_ipc_handle_t *h, char *out)
{
    for (int i = 0; i < ACCEL_IPC_HANDLE_SIZE; i++)
        sprintf(out + 2 * i, "%02x", h->bytes[i]);
}

static int from_hex(const char *s, accel_ipc_handle_t *h)
{
    if (s == NULL || strlen(s) != 2 * ACCEL_IPC_HANDLE_SIZE)
        return -1;
    for (int i = 0; i < ACCEL_IPC_HANDLE_SIZE; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        h->bytes[i] = (uint8_t)v;
    }
    return 0;
}

/* The peer: open, check, write, close. */
static int peer(void)
{
    accel_ipc_handle_t h;
    void *base;
    char buf[SZ];
    CHECK(from_hex(getenv("TEST_IPC_HANDLE"), &h) == 0);
    size_t off = (size_t)atol(getenv("TEST_IPC_OFFSET"));
    CHECK_OK(accel_init());
    CHECK_OK(accel_ipc_handle_open(&h, &base));
    CHECK(accel_is_device(base));
    accel_mem_info_t info;
    CHECK_OK(accel_memory_info((char *)base + 1, &info));
    CHECK(info.base == base && info.size == SZ);
    CHECK_OK(accel_copy(buf, (char *)base + off, SZ - off, NULL));
    CHECK(test_pattern_check(buf, SZ - off, 11) == (size_t)-1);
    test_pattern(buf, 100, 12);
    CHECK_OK(accel_copy(base, buf, 100, NULL));
    CHECK_RC(MPIX_Fake_device_free(base), MPI_ERR_ARG);    /* not ours to free */
    CHECK_OK(accel_ipc_handle_close(base));
    CHECK(!accel_is_device(base));
    CHECK_OK(accel_finalize());
    return 0;
}

static int run_peer(char *d, const char *how)
{
    accel_ipc_handle_t h;
    size_t off;
    char hex[2 * ACCEL_IPC_HANDLE_SIZE + 32], ofs[64], mech[64];
    CHECK_OK(accel_ipc_handle_get(d + OFF, &h, &off));
    CHECK(off == OFF);
    snprintf(hex, sizeof(hex), "TEST_IPC_HANDLE=");
    to_hex(&h, hex + strlen(hex));
    snprintf(ofs, sizeof(ofs), "TEST_IPC_OFFSET=%zu", off);
    snprintf(mech, sizeof(mech), "RAIL_ACCEL_FAKE_IPC=%s", how);
    const char *env[] = { hex, ofs, mech, NULL };
    return test_run_self(self, "peer", env, NULL);
}

static void exchange(const char *how)
{
    char *d, buf[SZ];
    CHECK_OK(MPIX_Fake_device_malloc(SZ, (void **)&d));
    test_pattern(buf, SZ - OFF, 11);
    CHECK_OK(accel_copy(d + OFF, buf, SZ - OFF, NULL));
    int rc = run_peer(d, how);
    if (rc != 0) {
        fprintf(stderr, "peer (%s) exited with %d\n", how, rc);
        exit(1);
    }
    CHECK_OK(accel_copy(buf, d, 100, NULL));
    CHECK(test_pattern_check(buf, 100, 12) == (size_t)-1);
    CHECK_OK(MPIX_Fake_device_free(d));
    printf("ipc via %s: ok\n", how);
}

static void same_process(void)
{
    char *d, *d2;
    accel_ipc_handle_t h;
    size_t off;
    int32_t x = 42, y = 0;
    CHECK_OK(MPIX_Fake_device_malloc(64, (void **)&d));
    CHECK_OK(accel_ipc_handle_get(d, &h, &off));
    CHECK_OK(accel_ipc_handle_open(&h, (void **)&d2));
    CHECK(d2 != d && accel_is_device(d2));
    CHECK_OK(accel_copy(d + 8, &x, 4, NULL));
    CHECK_OK(accel_copy(&y, d2 + 8, 4, NULL));      /* one memory, two mappings */
    CHECK(y == 42);
    CHECK_RC(accel_ipc_handle_close(d), MPI_ERR_ARG);   /* not opened from a handle */
    CHECK_OK(accel_ipc_handle_close(d2));
    /* Stale: freed, and the fd number reused by a new allocation. */
    CHECK_OK(MPIX_Fake_device_free(d));
    CHECK_OK(MPIX_Fake_device_malloc(64, (void **)&d));
    CHECK(accel_ipc_handle_open(&h, (void **)&d2) != MPI_SUCCESS);
    CHECK_OK(MPIX_Fake_device_free(d));
    /* Garbage, and a host pointer. */
    accel_ipc_handle_t junk;
    memset(&junk, 0x5a, sizeof(junk));
    CHECK_RC(accel_ipc_handle_open(&junk, (void **)&d2), MPI_ERR_ARG);
    CHECK_RC(accel_ipc_handle_get(&x, &h, &off), MPI_ERR_ARG);
}

static void owner_gone(void)
{
    int fds[2];
    accel_ipc_handle_t h;
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *d;
        size_t off;
        if (MPIX_Fake_device_malloc(64, (void **)&d) != MPI_SUCCESS ||
            accel_ipc_handle_get(d, &h, &off) != MPI_SUCCESS)
            _exit(1);
        _exit(write(fds[1], &h, sizeof(h)) == sizeof(h) ? 0 : 1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(read(fds[0], &h, sizeof(h)) == sizeof(h));
    void *base;
    CHECK(accel_ipc_handle_open(&h, &base) != MPI_SUCCESS);
    close(fds[0]);
    close(fds[1]);
}

/* As root, run the exchanges again as an unprivileged user (both sides). */
static void as_user(void)
{
    if (geteuid() != 0)
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(TEST_SKIP);
        execl(self, self, "user", (char *)NULL);
        _exit(TEST_SKIP);      /* the build tree is not readable by nobody */
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WEXITSTATUS(status) == TEST_SKIP)
        check_skip_part("ipc as uid 65534: cannot execute %s as that user", self);
    else
        CHECK(WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
    self = argv[0];
    test_select("host,fake");
    unsetenv("RAIL_ACCEL_FAKE_IPC");
    if (argc > 1 && strcmp(argv[1], "peer") == 0)
        return peer();
    CHECK_OK(accel_init());
    exchange("proc");
    exchange("pidfd");
    exchange("auto");
    same_process();
    owner_gone();
    if (argc > 1 && strcmp(argv[1], "user") == 0) {
        printf("ipc as uid %d: ok\n", (int)getuid());
        return 0;
    }
    as_user();
    CHECK_OK(accel_finalize());
    printf("ipc: ok\n");
    return 0;
}
