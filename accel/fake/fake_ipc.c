/*
 * accel fake IPC: the handle names the owner's memfd (pid, fd number) and
 * its identity (device and inode numbers).  The opener gets its own file
 * descriptor for it by opening /proc/<pid>/fd/<n> or, failing that, with
 * pidfd_open + pidfd_getfd; then it checks the identity (a recycled pid or
 * fd number is refused) and maps both views.
 *
 * /proc first: it needs only the "read" ptrace check, which Yama's
 * ptrace_scope=1 (Ubuntu's default) leaves alone between sibling ranks,
 * whereas pidfd_getfd needs the "attach" check.  pidfd_getfd helps where /proc
 * is mounted with hidepid.  Both need the owner alive, of the same user, and
 * dumpable.  The parameter accel_fake_ipc (auto | proc | pidfd) forces one of
 * them, for tests.
 */
#include "accel/fake/accel_fake.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define FAKE_IPC_VERSION 1

typedef struct fake_ipc_handle {
    char tag[4];                /* "FAKE", written by the base */
    uint32_t version;
    int32_t pid;
    int32_t fd;
    uint64_t size, maplen;
    uint64_t dev, ino;
} fake_ipc_handle_t;

_Static_assert(sizeof(fake_ipc_handle_t) <= ACCEL_IPC_HANDLE_SIZE, "fake IPC handle too big");

int accel_fake_ipc_get(const void *ptr, const accel_range_t *r, accel_ipc_handle_t *h,
                       size_t *off)
{
    const fake_alloc_t *a = r->cookie;
    fake_ipc_handle_t fh;
    memcpy(&fh, h->bytes, sizeof(fh));      /* keeps the tag */
    fh.version = FAKE_IPC_VERSION;
    fh.pid = (int32_t)getpid();
    fh.fd = a->fd;
    fh.size = a->size;
    fh.maplen = a->maplen;
    fh.dev = a->dev;
    fh.ino = a->ino;
    memcpy(h->bytes, &fh, sizeof(fh));
    *off = (uintptr_t)ptr - r->base;
    return MPI_SUCCESS;
}

static int fetch_by_proc(const fake_ipc_handle_t *fh)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)fh->pid, (int)fh->fd);
    return open(path, O_RDWR | O_CLOEXEC);
}

static int fetch_by_pidfd(const fake_ipc_handle_t *fh)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)fh->pid, 0);
    if (pidfd < 0)
        return -1;
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, fh->fd, 0);
    int err = errno;
    close(pidfd);
    errno = err;
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* A file descriptor for the owner's memfd, or -1 with a message. */
static int fake_ipc_fetch(const fake_ipc_handle_t *fh)
{
    const char *how = accel_fake.ipc_how != NULL ? accel_fake.ipc_how : "auto";
    bool proc = strcmp(how, "pidfd") != 0, pidfd = strcmp(how, "proc") != 0;
    int fd = -1, proc_err = 0, pidfd_err = 0;
    if (proc && (fd = fetch_by_proc(fh)) < 0)
        proc_err = errno;
    if (fd < 0 && pidfd && (fd = fetch_by_pidfd(fh)) < 0)
        pidfd_err = errno;
    if (fd < 0)
        rail_warn("accel: fake: cannot open the IPC handle of pid %d (fd %d): %s%s%s%s%s",
                  (int)fh->pid, (int)fh->fd, proc ? "/proc: " : "",
                  proc ? strerror(proc_err) : "", proc && pidfd ? "; " : "",
                  pidfd ? "pidfd_getfd: " : "", pidfd ? strerror(pidfd_err) : "");
    return fd;
}

int accel_fake_ipc_open(const accel_ipc_handle_t *h, void **base)
{
    fake_ipc_handle_t fh;
    struct stat st;
    memcpy(&fh, h->bytes, sizeof(fh));
    *base = NULL;
    if (fh.version != FAKE_IPC_VERSION || fh.pid <= 0 || fh.fd < 0 || fh.size > fh.maplen)
        return MPI_ERR_ARG;
    int fd = fake_ipc_fetch(&fh);
    if (fd < 0)
        return MPI_ERR_OTHER;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != fh.dev || (uint64_t)st.st_ino != fh.ino ||
        (uint64_t)st.st_size < fh.maplen) {
        rail_warn("accel: fake: stale IPC handle: fd %d of pid %d is no longer that allocation "
                  "(freed, or the process is gone)", (int)fh.fd, (int)fh.pid);
        close(fd);
        return MPI_ERR_ARG;
    }
    fake_alloc_t *a;
    int rc = accel_fake_map(fd, fh.size, fh.maplen, true, &a);
    if (rc == MPI_SUCCESS)
        *base = (void *)a->user;
    return rc;
}

int accel_fake_ipc_close(void *base, const accel_range_t *r)
{
    fake_alloc_t *a = r->cookie;
    if (!a->imported) {
        rail_warn("accel: fake: %p was not opened from an IPC handle", base);
        return MPI_ERR_ARG;
    }
    return accel_fake_unmap(a);
}
