/*
 * accel cuda: shared between the cuda component's files.  libcuda is opened
 * with dlopen and every entry point is called through accel_cuda_drv; nothing
 * links against libcuda.
 */
#ifndef ACCEL_CUDA_ACCEL_CUDA_H
#define ACCEL_CUDA_ACCEL_CUDA_H

#include "accel/accel_internal.h"

#include <cuda.h>

/* The driver entry points we use.  cuda.h maps some names to versioned
 * symbols (cuMemAlloc -> cuMemAlloc_v2); the members and the dlsym names
 * follow that mapping, since both are spelled through the same macros. */
#define ACCEL_CUDA_SYMBOLS(X)                                                                      \
    X(cuGetErrorName) X(cuDriverGetVersion) X(cuInit) X(cuPointerGetAttributes)                    \
    X(cuCtxGetCurrent) X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuDeviceGet)                       \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                                       \
    X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)                                \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemcpyAsync)                                            \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                                    \
    X(cuEventCreate) X(cuEventRecord) X(cuEventQuery) X(cuEventDestroy)                            \
    X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle)                              \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel)

typedef struct accel_cuda_driver {
#define ACCEL_CUDA_MEMBER(name) __typeof__(name) *name;
    ACCEL_CUDA_SYMBOLS(ACCEL_CUDA_MEMBER)
#undef ACCEL_CUDA_MEMBER
} accel_cuda_driver_t;

extern accel_cuda_driver_t accel_cuda_drv RAIL_HIDDEN;
#define CU(fn) (accel_cuda_drv.fn)

/* Per-context state: an internal stream for synchronous work and the
 * reduction kernels (a module belongs to one context). */
typedef struct accel_cuda_ctx {
    CUcontext ctx;
    CUstream stream;
    CUmodule module;
    int module_rc;              /* MPI_SUCCESS, or why the module cannot load */
    CUfunction fn[2][RAIL_OP_COUNT][RAIL_TK_COUNT];   /* [1]: the n-input kernels */
    CUfunction copy_fn;         /* rail_copy_many */
} accel_cuda_ctx_t;

/* A stream of the accel API: created on first use, in that work's context. */
typedef struct accel_cuda_stream {
    CUcontext ctx;
    CUstream stream;
} accel_cuda_stream_t;

/* "CUDA_ERROR_X (n)" for messages. */
const char *accel_cuda_strerror(CUresult rc, char *buf, size_t len);
/* MPI error class for a driver error, with one warning naming the call. */
int accel_cuda_error(const char *call, CUresult rc);
#define ACCEL_CUDA_CALL(call, args)                                                                \
    do {                                                                                           \
        CUresult cu_rc_ = CU(call) args;                                                           \
        if (RAIL_UNLIKELY(cu_rc_ != CUDA_SUCCESS)) {                                               \
            rc = accel_cuda_error(#call, cu_rc_);                                                  \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Make the context owning r (or, for NULL, the current or device 0's primary
 * context) current; accel_cuda_leave undoes it. */
int accel_cuda_enter(const accel_range_t *r, accel_cuda_ctx_t **cx);
void accel_cuda_leave(void);
/* The queue to use for work in cx: the user's stream, or cx's own. */
int accel_cuda_queue(accel_cuda_stream_t *s, accel_cuda_ctx_t *cx, CUstream *out);
/* Forget cached host pages (device memory may have appeared). */
void accel_cuda_host_cache_flush(void);

/* Reductions (cuda_reduce.c). */
const char *accel_cuda_kernel_name(rail_op_t op, rail_typekind_t tk);
const char *accel_cuda_kernel_n_name(rail_op_t op, rail_typekind_t tk);
int accel_cuda_reduce(rail_op_t op, rail_typekind_t tk, const void *in, const accel_range_t *ir,
                      void *inout, const accel_range_t *or_, size_t count, void *stream);
int accel_cuda_reduce_many(rail_op_t op, rail_typekind_t tk, const void *const *in,
                           const accel_range_t *ir, int nin, void *const *out, int nout,
                           const accel_range_t *or_, size_t count, void *stream);
void accel_cuda_reduce_ctx_fini(accel_cuda_ctx_t *cx);
int accel_cuda_copy(void *dst, const accel_range_t *dr, const void *src, const accel_range_t *sr,
                    size_t len, void *stream);
/* Several copies in one kernel launch (cuda_reduce.c). */
int accel_cuda_copy_many(void *const *dst, const void *const *src, const size_t *len, int n,
                         const accel_range_t *r, void *stream);
extern size_t accel_cuda_copy_kernel_max RAIL_HIDDEN;

/* The embedded fatbin (generated from cuda_reduce_kernels.cu). */
extern const unsigned char accel_cuda_fatbin[] RAIL_HIDDEN;
extern const size_t accel_cuda_fatbin_size RAIL_HIDDEN;

#endif
