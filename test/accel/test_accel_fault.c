/*
 * A host dereference of fake device memory must fault at once: a forked
 * child reads, writes, or memcpy()s from a fake pointer and must die of
 * SIGSEGV, while accel copies of the same memory work.
 */
#include "config.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

static volatile int sink;

static int in_child(void (*fn)(char *), char *p)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        fn(p);
        _exit(0);   /* not reached when it faults */
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status) - 1;
}

static void do_read(char *p)
{
    sink = p[0];
}

static void do_read_middle(char *p)
{
    sink = p[5000];
}

static void do_write(char *p)
{
    p[10] = 1;
}

static void do_memcpy(char *p)
{
    char buf[64];
    memcpy(buf, p + 100, sizeof(buf));
    sink = buf[3];
}

int main(void)
{
    test_select("host,fake");
    CHECK_OK(accel_init());
    char *p;
    CHECK_OK(MPIX_Fake_device_malloc(10000, (void **)&p));
    char host[10000];
    test_pattern(host, sizeof(host), 3);
    CHECK_OK(MPIX_Fake_device_memcpy(p, host, sizeof(host)));
    CHECK(in_child(do_read, p) == SIGSEGV);
    CHECK(in_child(do_read_middle, p) == SIGSEGV);
    CHECK(in_child(do_write, p) == SIGSEGV);
    CHECK(in_child(do_memcpy, p) == SIGSEGV);
    /* The data is intact and reachable through accel. */
    memset(host, 0, sizeof(host));
    CHECK_OK(MPIX_Fake_device_memcpy(host, p, sizeof(host)));
    CHECK(test_pattern_check(host, sizeof(host), 3) == (size_t)-1);
    CHECK_OK(MPIX_Fake_device_free(p));
    CHECK_OK(accel_finalize());
    printf("fault: ok\n");
    return 0;
}
