/*
 * accel cuda reductions: the kernels of cuda_reduce_kernels.cu, embedded as
 * a fatbin (SASS for each of NVCC_ARCHS plus PTX of the newest), loaded
 * with cuModuleLoadData in a context the first time it reduces, and
 * launched with cuLaunchKernel on the work's queue.
 *
 * Placement: inout on the device: the kernel runs there; a host `in` is
 * first staged into stream-ordered device memory.  inout on the host: `in`
 * is copied to the host and the base/op kernel runs there, where the result
 * lives.  Both operands on the device must be on the same device.
 */
#include "accel/cuda/accel_cuda.h"
#include "accel/cuda/cuda_reduce_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef ACCEL_CUDA_ARCHS
#define ACCEL_CUDA_ARCHS "?"
#endif

#define CUDA_REDUCE_BLOCK 256u
#define CUDA_REDUCE_MAX_GRID 65536u     /* kernels loop over the rest */

static const char *const cuda_kernel_names[2][RAIL_OP_COUNT][RAIL_TK_COUNT] = {
#define ACCEL_CUDA_NAME(OP, op, TK, tk) [RAIL_OP_##OP][RAIL_TK_##TK] = "rail_reduce_" #op "_" #tk,
    { ACCEL_CUDA_REDUCE_LIST(ACCEL_CUDA_NAME) },
#undef ACCEL_CUDA_NAME
#define ACCEL_CUDA_NAME(OP, op, TK, tk) [RAIL_OP_##OP][RAIL_TK_##TK] = "rail_reduce_n_" #op "_" #tk,
    { ACCEL_CUDA_REDUCE_LIST(ACCEL_CUDA_NAME) },
#undef ACCEL_CUDA_NAME
};

static pthread_mutex_t cuda_reduce_lock = PTHREAD_MUTEX_INITIALIZER;

const char *accel_cuda_kernel_name(rail_op_t op, rail_typekind_t tk)
{
    if ((unsigned)op >= RAIL_OP_COUNT || (unsigned)tk >= RAIL_TK_COUNT)
        return NULL;
    return cuda_kernel_names[0][op][tk];
}

const char *accel_cuda_kernel_n_name(rail_op_t op, rail_typekind_t tk)
{
    if ((unsigned)op >= RAIL_OP_COUNT || (unsigned)tk >= RAIL_TK_COUNT)
        return NULL;
    return cuda_kernel_names[1][op][tk];
}

/* Load cx's module on first use (cx current, cuda_reduce_lock held). */
static int cuda_module(accel_cuda_ctx_t *cx)
{
    char buf[96];
    if (cx->module == NULL && cx->module_rc == MPI_SUCCESS) {
        CUresult crc = CU(cuModuleLoadData)(&cx->module, accel_cuda_fatbin);
        if (crc != CUDA_SUCCESS) {
            cx->module = NULL;
            cx->module_rc = MPI_ERR_UNSUPPORTED_OPERATION;
            rail_warn("accel: cuda: cannot load the device reduction kernels: %s (built for "
                      "sm_{%s} and PTX of the newest, CUDA %d.%d; rebuild with this GPU in "
                      "NVCC_ARCHS or update the driver)", accel_cuda_strerror(crc, buf, sizeof(buf)),
                      ACCEL_CUDA_ARCHS, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        }
    }
    return cx->module_rc;
}

/* The function `name` of cx's module into *fn (cached there). */
static int cuda_function(accel_cuda_ctx_t *cx, const char *name, CUfunction *fn)
{
    pthread_mutex_lock(&cuda_reduce_lock);
    int rc = cuda_module(cx);
    if (rc == MPI_SUCCESS && *fn == NULL) {
        CUresult crc = CU(cuModuleGetFunction)(fn, cx->module, name);
        if (crc != CUDA_SUCCESS) {
            *fn = NULL;
            rc = accel_cuda_error(name, crc);
        }
    }
    pthread_mutex_unlock(&cuda_reduce_lock);
    return rc;
}

/* The kernel for (op, tk) in cx (many: its n-input form), loading the
 * module on first use (cx current). */
static int cuda_kernel(accel_cuda_ctx_t *cx, int many, rail_op_t op, rail_typekind_t tk,
                       CUfunction *fn)
{
    int rc = cuda_function(cx, cuda_kernel_names[many][op][tk], &cx->fn[many][op][tk]);
    *fn = cx->fn[many][op][tk];
    return rc;
}

void accel_cuda_reduce_ctx_fini(accel_cuda_ctx_t *cx)
{
    if (cx->module != NULL)
        CU(cuModuleUnload)(cx->module);
    cx->module = NULL;
    cx->module_rc = MPI_SUCCESS;
    memset(cx->fn, 0, sizeof(cx->fn));
    cx->copy_fn = NULL;
}

static int cuda_launch_args(CUfunction fn, void **args, size_t count, CUstream q)
{
    size_t blocks = (count + CUDA_REDUCE_BLOCK - 1) / CUDA_REDUCE_BLOCK;
    blocks = RAIL_MIN(blocks, (size_t)CUDA_REDUCE_MAX_GRID);
    CUresult crc = CU(cuLaunchKernel)(fn, (unsigned)blocks, 1, 1, CUDA_REDUCE_BLOCK, 1, 1, 0, q,
                                      args, NULL);
    return crc == CUDA_SUCCESS ? MPI_SUCCESS : accel_cuda_error("cuLaunchKernel", crc);
}

static int cuda_launch(CUfunction fn, CUdeviceptr in, CUdeviceptr inout, size_t count, CUstream q)
{
    void *args[] = { &in, &inout, &count };
    return cuda_launch_args(fn, args, count, q);
}

/* inout on the device (cx current). */
static int reduce_on_device(accel_cuda_ctx_t *cx, rail_op_t op, rail_typekind_t tk,
                            const void *in, bool in_host, void *inout, size_t count, size_t len,
                            accel_cuda_stream_t *stream)
{
    int rc;
    CUfunction fn;
    CUstream q = NULL;
    CUdeviceptr staged = 0;
    bool pooled = true, sync = false;
    RAIL_CHECK(cuda_kernel(cx, 0, op, tk, &fn));
    RAIL_CHECK(accel_cuda_queue(stream, cx, &q));
    sync = stream == NULL || q != stream->stream;
    CUdeviceptr din = (CUdeviceptr)in;
    if (in_host) {
        CUresult crc = CU(cuMemAllocAsync)(&staged, len, q);
        if (crc == CUDA_ERROR_NOT_SUPPORTED) {      /* no memory pools on this device */
            pooled = false;
            sync = true;
            ACCEL_CUDA_CALL(cuStreamSynchronize, (q));
            crc = CU(cuMemAlloc)(&staged, len);
        }
        if (crc != CUDA_SUCCESS) {
            staged = 0;
            rc = accel_cuda_error("cuMemAllocAsync", crc);
            goto fail;
        }
        ACCEL_CUDA_CALL(cuMemcpyAsync, (staged, din, len, q));
        din = staged;
    }
    RAIL_CHECK(cuda_launch(fn, din, (CUdeviceptr)inout, count, q));
    rc = MPI_SUCCESS;
fail:
    if (staged != 0 && pooled)
        CU(cuMemFreeAsync)(staged, q);
    if (sync) {
        CUresult crc = CU(cuStreamSynchronize)(q);
        if (rc == MPI_SUCCESS && crc != CUDA_SUCCESS)
            rc = accel_cuda_error("cuStreamSynchronize", crc);
    }
    if (staged != 0 && !pooled)
        CU(cuMemFree)(staged);
    return rc;
}

/* inout on the host: the result lives there, so the host kernel runs there. */
static int reduce_into_host(rail_op_t op, rail_typekind_t tk, const void *in,
                            const accel_range_t *ir, void *inout, size_t count, size_t len,
                            void *stream)
{
    void *tmp = malloc(len);
    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    int rc = accel_cuda_copy(tmp, NULL, in, ir, len, stream);
    if (rc == MPI_SUCCESS && stream != NULL && ((accel_cuda_stream_t *)stream)->stream != NULL) {
        CUresult crc = CU(cuStreamSynchronize)(((accel_cuda_stream_t *)stream)->stream);
        if (crc != CUDA_SUCCESS)
            rc = accel_cuda_error("cuStreamSynchronize", crc);
    }
    if (rc == MPI_SUCCESS)
        rc = rail_op_reduce(op, tk, tmp, inout, count);
    free(tmp);
    return rc;
}

int accel_cuda_reduce(rail_op_t op, rail_typekind_t tk, const void *in, const accel_range_t *ir,
                      void *inout, const accel_range_t *or_, size_t count, void *stream)
{
    if (op == RAIL_OP_NO_OP)
        return MPI_SUCCESS;
    if (accel_cuda_kernel_name(op, tk) == NULL) {
        ACCEL_VERBOSE(2, "cuda: no device kernel for %s on %s", rail_op_name(op),
                      rail_typekind_name(tk));
        return MPI_ERR_OP;
    }
    size_t len = count * rail_typekind_size(tk);
    if (count == 0)
        return MPI_SUCCESS;
    if (or_ == NULL)
        return reduce_into_host(op, tk, in, ir, inout, count, len, stream);
    accel_cuda_ctx_t *cx;
    int rc = accel_cuda_enter(or_, &cx);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = reduce_on_device(cx, op, tk, in, ir == NULL, inout, count, len, stream);
    accel_cuda_leave();
    return rc;
}

/* The end of work queued on q (cx entered): waited for where q is not the
 * caller's stream (synchronous work, or the context's own queue). */
static int cuda_done(int rc, void *stream, CUstream q)
{
    if (rc == MPI_SUCCESS && (stream == NULL || q != ((accel_cuda_stream_t *)stream)->stream)) {
        CUresult crc = CU(cuStreamSynchronize)(q);
        if (crc != CUDA_SUCCESS)
            rc = accel_cuda_error("cuStreamSynchronize", crc);
    }
    accel_cuda_leave();
    return rc;
}

/* The n-input kernels' parameters: the inputs and the outputs by value
 * (as in the .cu). */
typedef struct cuda_inputs {
    CUdeviceptr p[ACCEL_CUDA_REDUCE_MAX_IN];
} cuda_inputs_t;
typedef struct cuda_outputs {
    CUdeviceptr p[ACCEL_CUDA_REDUCE_MAX_OUT];
} cuda_outputs_t;

/* Every input and output on the device of one context (the base checked
 * it): out[j] = in[nin - 1] op (... op in[0]) for j < nout,
 * ACCEL_CUDA_REDUCE_MAX_IN inputs per launch (later launches take the
 * partial result in out[0] as their first input; only the last writes the
 * other outputs, which may be inputs of earlier launches), then
 * ACCEL_CUDA_REDUCE_MAX_OUT outputs per launch (the one-input form copies
 * out[0] to the rest). */
int accel_cuda_reduce_many(rail_op_t op, rail_typekind_t tk, const void *const *in,
                           const accel_range_t *ir, int nin, void *const *out, int nout,
                           const accel_range_t *or_, size_t count, void *stream)
{
    (void)ir;
    if (accel_cuda_kernel_n_name(op, tk) == NULL)
        return MPI_ERR_OP;
    if (count == 0 || nout < 1)
        return MPI_SUCCESS;
    accel_cuda_ctx_t *cx;
    int rc = accel_cuda_enter(or_, &cx);
    if (rc != MPI_SUCCESS)
        return rc;
    CUfunction fn;
    CUstream q = NULL;
    RAIL_CHECK(cuda_kernel(cx, 1, op, tk, &fn));
    RAIL_CHECK(accel_cuda_queue(stream, cx, &q));
    CUdeviceptr d0 = (CUdeviceptr)out[0];
    for (int at = 0, done = 0; (at < nin || done < nout) && rc == MPI_SUCCESS;) {
        cuda_inputs_t p = { { 0 } };
        cuda_outputs_t o = { { 0 } };
        int k = 0, m = 0;
        if (at > 0)
            p.p[k++] = d0;    /* the partial result so far, or the result */
        while (k < ACCEL_CUDA_REDUCE_MAX_IN && at < nin)
            p.p[k++] = (CUdeviceptr)in[at++];
        if (at < nin)
            o.p[m++] = d0;    /* not the last inputs: the partial result */
        else
            while (m < ACCEL_CUDA_REDUCE_MAX_OUT && done < nout)
                o.p[m++] = (CUdeviceptr)out[done++];
        void *args[] = { &p, &k, &o, &m, &count };
        rc = cuda_launch_args(fn, args, count, q);
    }
fail:
    return cuda_done(rc, stream, q);
}

/* rail_copy_many's parameter (as in the .cu). */
typedef struct cuda_copies {
    CUdeviceptr dst[ACCEL_CUDA_COPY_MAX];
    CUdeviceptr src[ACCEL_CUDA_COPY_MAX];
    unsigned long long len[ACCEL_CUDA_COPY_MAX];
} cuda_copies_t;

size_t accel_cuda_copy_kernel_max = (size_t)64 << 20;

/* Every buffer on the device of r's context (the base checked it): up to
 * ACCEL_CUDA_COPY_MAX copies per launch of rail_copy_many, blockIdx.y
 * choosing the copy; more than accel_cuda_copy_kernel_max bytes in all go
 * to the base (one cuMemcpyAsync each). */
int accel_cuda_copy_many(void *const *dst, const void *const *src, const size_t *len, int n,
                         const accel_range_t *r, void *stream)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += len[i];
    if (total > accel_cuda_copy_kernel_max)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    accel_cuda_ctx_t *cx;
    int rc = accel_cuda_enter(r, &cx);
    if (rc != MPI_SUCCESS)
        return rc;
    CUstream q = NULL;
    RAIL_CHECK(cuda_function(cx, "rail_copy_many", &cx->copy_fn));
    RAIL_CHECK(accel_cuda_queue(stream, cx, &q));
    for (int at = 0; at < n && rc == MPI_SUCCESS;) {
        cuda_copies_t c;
        int k = 0;
        size_t most = 0;
        for (; at < n && k < ACCEL_CUDA_COPY_MAX; at++) {
            if (len[at] == 0)
                continue;
            c.dst[k] = (CUdeviceptr)dst[at];
            c.src[k] = (CUdeviceptr)src[at];
            c.len[k] = len[at];
            most = RAIL_MAX(most, len[at]);
            k++;
        }
        if (k == 0)
            break;
        /* 16 bytes per thread and pass; at most ~2048 blocks in all */
        size_t bx = (most + 16 * CUDA_REDUCE_BLOCK - 1) / (16 * CUDA_REDUCE_BLOCK);
        bx = RAIL_MAX((size_t)1, RAIL_MIN(bx, (size_t)(2048 / k)));
        void *args[] = { &c, &k };
        CUresult crc = CU(cuLaunchKernel)(cx->copy_fn, (unsigned)bx, (unsigned)k, 1,
                                          CUDA_REDUCE_BLOCK, 1, 1, 0, q, args, NULL);
        if (crc != CUDA_SUCCESS)
            rc = accel_cuda_error("cuLaunchKernel", crc);
    }
fail:
    return cuda_done(rc, stream, q);
}
