/*
 * The device kernels cover the same (op, kind) pairs as the host kernels of
 * base/op for every kind the GPU handles: a pair only the host has would
 * make a device reduction fail with MPI_ERR_OP where a host one works, and
 * a pair only the GPU has would reduce device buffers by other rules.
 */
#include "config.h"
#include "test/accel/accel_test.h"

#ifdef RAIL_HAVE_CUDA
#include "accel/cuda/accel_cuda.h"

int main(void)
{
    int mismatches = 0, pairs = 0;
    for (int tk = 1; tk < RAIL_TK_COUNT; tk++) {
        bool gpu_kind = false;
        for (int op = 1; op < RAIL_OP_COUNT; op++)
            gpu_kind |= accel_cuda_kernel_name((rail_op_t)op, (rail_typekind_t)tk) != NULL;
        if (!gpu_kind) {
            printf("kind %s: host only (no GPU arithmetic for it)\n",
                   rail_typekind_name((rail_typekind_t)tk));
            continue;
        }
        for (int op = 1; op < RAIL_OP_COUNT; op++) {
            if (op == RAIL_OP_NO_OP)
                continue;       /* the device needs no kernel to do nothing */
            bool host = rail_op_kernel((rail_op_t)op, (rail_typekind_t)tk) != NULL;
            bool gpu = accel_cuda_kernel_name((rail_op_t)op, (rail_typekind_t)tk) != NULL;
            pairs += gpu;
            if (host != gpu) {
                printf("MISMATCH %s on %s: host kernel %s, device kernel %s\n",
                       rail_op_name((rail_op_t)op), rail_typekind_name((rail_typekind_t)tk),
                       host ? "yes" : "no", gpu ? "yes" : "no");
                mismatches++;
            }
        }
    }
    printf("cuda table: %d device kernels, %d mismatches with base/op\n", pairs, mismatches);
    return mismatches == 0 ? 0 : 1;
}
#else
int main(void)
{
    check_skip("built without CUDA: no device kernel table");
}
#endif
