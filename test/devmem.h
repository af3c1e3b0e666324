/*
 * Device memory for the tests that put user buffers on a device.
 *
 *   TEST_DEVMEM unset or "fake"  the fake device (MPIX_Fake_device_*; the
 *                                library must run with RAIL_ACCEL=host,fake);
 *   TEST_DEVMEM=cuda             real CUDA memory (cuMemAlloc), through the
 *                                driver API of libcuda.so.1, dlopen()ed here
 *                                so that the tests build without the CUDA
 *                                toolkit; the library runs with its default
 *                                RAIL_ACCEL (host,cuda).
 *
 * devmem_malloc / devmem_free / devmem_memcpy answer like the MPIX_Fake_
 * calls (MPI_SUCCESS or an MPI error code).  Without a usable GPU the first
 * devmem_malloc fails and devmem_why() says why, so that a test skips with
 * a clear reason.  Both kinds fault on any host access to what they hand
 * out (device memory is not mapped for the host), so a library path that
 * touches a user buffer with the CPU cannot pass.
 */
#ifndef TEST_DEVMEM_H
#define TEST_DEVMEM_H

#include <mpi.h>
#include <mpi-ext.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few driver API types and calls used here (cuda.h is not needed). */
typedef int devmem_cu_rc;
typedef unsigned long long devmem_cu_ptr;

static struct {
    int kind;         /* 0 undecided, 1 fake, 2 cuda, -1 cuda unusable */
    char why[256];
    void *ctx;
    devmem_cu_rc (*init)(unsigned);
    devmem_cu_rc (*count)(int *);
    devmem_cu_rc (*get)(int *, int);
    devmem_cu_rc (*retain)(void **, int);
    devmem_cu_rc (*set_current)(void *);
    devmem_cu_rc (*alloc)(devmem_cu_ptr *, size_t);
    devmem_cu_rc (*release)(devmem_cu_ptr);
    devmem_cu_rc (*copy)(devmem_cu_ptr, devmem_cu_ptr, size_t);
    devmem_cu_rc (*sync)(void);
    devmem_cu_rc (*errstr)(devmem_cu_rc, const char **);
} devmem_s;

static const char *devmem_cu_err(devmem_cu_rc rc)
{
    const char *s = NULL;
    if (devmem_s.errstr == NULL || devmem_s.errstr(rc, &s) != 0 || s == NULL)
        s = "unknown error";
    return s;
}

static __attribute__((unused)) const char *devmem_why(void)
{
    return devmem_s.why;
}

static __attribute__((unused)) int devmem_is_cuda(void)
{
    const char *k = getenv("TEST_DEVMEM");
    return k != NULL && strcmp(k, "cuda") == 0;
}

/* Bind to the GPU of this process (local rank modulo the devices). */
static int devmem_cuda_open(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        snprintf(devmem_s.why, sizeof(devmem_s.why), "no CUDA driver (libcuda.so.1: %s)",
                 dlerror());
        return -1;
    }
#define DEVMEM_SYM(field, name)                                                                    \
    do {                                                                                           \
        *(void **)&devmem_s.field = dlsym(h, name);                                                \
        if (devmem_s.field == NULL) {                                                              \
            snprintf(devmem_s.why, sizeof(devmem_s.why), "libcuda.so.1 lacks %s", name);          \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)
    DEVMEM_SYM(errstr, "cuGetErrorString");
    DEVMEM_SYM(init, "cuInit");
    DEVMEM_SYM(count, "cuDeviceGetCount");
    DEVMEM_SYM(get, "cuDeviceGet");
    DEVMEM_SYM(retain, "cuDevicePrimaryCtxRetain");
    DEVMEM_SYM(set_current, "cuCtxSetCurrent");
    DEVMEM_SYM(alloc, "cuMemAlloc_v2");
    DEVMEM_SYM(release, "cuMemFree_v2");
    DEVMEM_SYM(copy, "cuMemcpy");
    DEVMEM_SYM(sync, "cuCtxSynchronize");
#undef DEVMEM_SYM
    devmem_cu_rc rc;
    int n = 0, dev = 0;
    if ((rc = devmem_s.init(0)) != 0 || (rc = devmem_s.count(&n)) != 0) {
        snprintf(devmem_s.why, sizeof(devmem_s.why), "no usable CUDA driver (cuInit: %s)",
                 devmem_cu_err(rc));
        return -1;
    }
    if (n < 1) {
        snprintf(devmem_s.why, sizeof(devmem_s.why), "no CUDA device");
        return -1;
    }
    const char *lr = getenv("PMIX_LOCAL_RANK");
    int ordinal = (lr != NULL ? atoi(lr) : 0) % n;
    if ((rc = devmem_s.get(&dev, ordinal)) != 0 || (rc = devmem_s.retain(&devmem_s.ctx, dev)) != 0 ||
        (rc = devmem_s.set_current(devmem_s.ctx)) != 0) {
        snprintf(devmem_s.why, sizeof(devmem_s.why), "CUDA device %d unusable: %s", ordinal,
                 devmem_cu_err(rc));
        return -1;
    }
    return 0;
}

static int devmem_kind(void)
{
    if (devmem_s.kind == 0) {
        if (!devmem_is_cuda()) {
            devmem_s.kind = 1;
            snprintf(devmem_s.why, sizeof(devmem_s.why),
                     "the fake device is not active (set RAIL_ACCEL=host,fake)");
        } else {
            devmem_s.kind = devmem_cuda_open() == 0 ? 2 : -1;
        }
    }
    return devmem_s.kind;
}

static __attribute__((unused)) int devmem_malloc(size_t size, void **ptr)
{
    int k = devmem_kind();
    if (k == 1)
        return MPIX_Fake_device_malloc(size, ptr);
    if (k < 0)
        return MPI_ERR_OTHER;
    devmem_cu_ptr p = 0;
    devmem_cu_rc rc = devmem_s.alloc(&p, size ? size : 1);
    if (rc != 0) {
        fprintf(stderr, "devmem: cuMemAlloc(%zu): %s\n", size, devmem_cu_err(rc));
        return MPI_ERR_NO_MEM;
    }
    *ptr = (void *)(uintptr_t)p;
    return MPI_SUCCESS;
}

static __attribute__((unused)) int devmem_free(void *ptr)
{
    int k = devmem_kind();
    if (k == 1)
        return MPIX_Fake_device_free(ptr);
    if (k < 0 || ptr == NULL)
        return k < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
    devmem_cu_rc rc = devmem_s.release((devmem_cu_ptr)(uintptr_t)ptr);
    if (rc != 0) {
        fprintf(stderr, "devmem: cuMemFree(%p): %s\n", ptr, devmem_cu_err(rc));
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* A thread other than the one that made the first devmem call binds the
 * device's context (CUDA's current context is per thread) before its own. */
static __attribute__((unused)) int devmem_thread_enter(void)
{
    int k = devmem_kind();
    if (k == 2 && devmem_s.set_current(devmem_s.ctx) != 0)
        return MPI_ERR_OTHER;
    return k < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Any direction (unified addressing); complete when it returns. */
static __attribute__((unused)) int devmem_memcpy(void *dst, const void *src, size_t len)
{
    int k = devmem_kind();
    if (k == 1)
        return MPIX_Fake_device_memcpy(dst, src, len);
    if (k < 0)
        return MPI_ERR_OTHER;
    if (len == 0)
        return MPI_SUCCESS;
    devmem_cu_rc rc = devmem_s.copy((devmem_cu_ptr)(uintptr_t)dst, (devmem_cu_ptr)(uintptr_t)src,
                                    len);
    if (rc == 0)
        rc = devmem_s.sync();
    if (rc != 0) {
        fprintf(stderr, "devmem: cuMemcpy(%p, %p, %zu): %s\n", dst, src, len, devmem_cu_err(rc));
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

#endif
