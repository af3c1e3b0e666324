/*
 * Reduction kernels: the public entry points over the per-ISA tables of
 * base/op_generic.c and base/op_avx2.c (semantics in base/op_kernels.h).
 */
#include <string.h>
#include "base/rail.h"
#include "base/op.h"
#include "base/op_impl.h"
#if RAIL_OP_HAVE_AVX2
#include <cpuid.h>
#endif

/* The table in use; NULL until the first reduction picks one.  Tables are
 * constant data, so a relaxed load is enough. */
static const rail_op_table_t *op_active;

static bool op_cpu_has_avx2(void)
{
#if RAIL_OP_HAVE_AVX2
    unsigned eax, ebx, ecx = 0, edx;

    __builtin_cpu_init();   /* "avx2" also means the OS saves the ymm state */
    if (!__builtin_cpu_supports("avx2"))
        return false;
    /* F16C: CPUID.1:ECX bit 29 (clang's __builtin_cpu_supports lacks "f16c") */
    __get_cpuid(1, &eax, &ebx, &ecx, &edx);
    return (ecx & (1u << 29)) != 0;
#else
    return false;
#endif
}

static const rail_op_table_t *op_best(void)
{
#if RAIL_OP_HAVE_AVX2
    if (op_cpu_has_avx2())
        return &rail_op_table_avx2;
#endif
    return &rail_op_table_generic;
}

static inline const rail_op_table_t *op_table(void)
{
    const rail_op_table_t *t = __atomic_load_n(&op_active, __ATOMIC_RELAXED);
    if (RAIL_UNLIKELY(t == NULL)) {
        t = op_best();   /* racing first callers all store the same table */
        __atomic_store_n(&op_active, t, __ATOMIC_RELAXED);
    }
    return t;
}

static inline bool op_valid(rail_op_t op, rail_typekind_t tk)
{
    return (unsigned)op < RAIL_OP_COUNT && (unsigned)tk < RAIL_TK_COUNT;
}

rail_op_kernel_t rail_op_kernel(rail_op_t op, rail_typekind_t tk)
{
    return op_valid(op, tk) ? op_table()->k2[op][tk] : NULL;
}

int rail_op_reduce(rail_op_t op, rail_typekind_t tk, const void *in, void *inout, size_t count)
{
    rail_op_kernel_t k = rail_op_kernel(op, tk);

    if (RAIL_UNLIKELY(k == NULL))
        return MPI_ERR_OP;
    k(in, inout, count);
    return MPI_SUCCESS;
}

int rail_op_reduce3(rail_op_t op, rail_typekind_t tk, const void *a, const void *b, void *out,
                    size_t count)
{
    rail_op_kernel3_t k;

    if (out == b)   /* in place: the two-buffer kernel, whose restrict holds */
        return rail_op_reduce(op, tk, a, out, count);
    k = op_valid(op, tk) ? op_table()->k3[op][tk] : NULL;
    if (RAIL_UNLIKELY(k == NULL))
        return MPI_ERR_OP;
    k(a, b, out, count);
    return MPI_SUCCESS;
}

const char *rail_op_name(rail_op_t op)
{
    static const char *const names[RAIL_OP_COUNT] = {
        [RAIL_OP_NONE] = "none",     [RAIL_OP_SUM] = "sum",       [RAIL_OP_PROD] = "prod",
        [RAIL_OP_MAX] = "max",       [RAIL_OP_MIN] = "min",       [RAIL_OP_LAND] = "land",
        [RAIL_OP_LOR] = "lor",       [RAIL_OP_LXOR] = "lxor",     [RAIL_OP_BAND] = "band",
        [RAIL_OP_BOR] = "bor",       [RAIL_OP_BXOR] = "bxor",     [RAIL_OP_MAXLOC] = "maxloc",
        [RAIL_OP_MINLOC] = "minloc", [RAIL_OP_REPLACE] = "replace", [RAIL_OP_NO_OP] = "no_op",
    };
    return (unsigned)op < RAIL_OP_COUNT ? names[op] : "invalid";
}

const char *rail_op_isa(void)
{
    return op_table()->isa;
}

int rail_op_isa_set(const char *name)
{
    const rail_op_table_t *t = NULL;

    if (strcmp(name, "auto") == 0)
        t = op_best();
    else if (strcmp(name, "generic") == 0)
        t = &rail_op_table_generic;
#if RAIL_OP_HAVE_AVX2
    else if (strcmp(name, "avx2") == 0 && op_cpu_has_avx2())
        t = &rail_op_table_avx2;
#endif
    if (t == NULL)
        return MPI_ERR_ARG;
    __atomic_store_n(&op_active, t, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}
