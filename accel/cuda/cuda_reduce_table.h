/*
 * The device reduction kernels: one list of (op, kind) pairs, read both by
 * cuda_reduce_kernels.cu (which defines a kernel for each) and by
 * cuda_reduce.c (which names them), so the two cannot drift apart.
 *
 * X(OP, op, TK, tk): RAIL_OP_<OP> on RAIL_TK_<TK>, kernels rail_reduce_<op>_<tk>
 * and (up to ACCEL_CUDA_REDUCE_MAX_IN inputs) rail_reduce_n_<op>_<tk>.
 * The lower-case names must not be macros in C or C++ (C's bool is one,
 * hence c_bool): they are expanded on the way through these lists.
 * Kinds a GPU has no arithmetic for (128-bit integers, long double with its
 * complex and pair kinds, float128) are absent: accel_reduce answers MPI_ERR_OP
 * for them on cuda memory.  NO_OP needs no kernel.  This header is plain
 * preprocessor text so that both C and CUDA C++ can include it.
 */
#ifndef ACCEL_CUDA_CUDA_REDUCE_TABLE_H
#define ACCEL_CUDA_CUDA_REDUCE_TABLE_H

/* Inputs of one n-input kernel launch (its parameters hold the pointers). */
#define ACCEL_CUDA_REDUCE_MAX_IN 8
/* Outputs of one n-input kernel launch (each gets the same result). */
#define ACCEL_CUDA_REDUCE_MAX_OUT 8
/* Copies of one rail_copy_many launch (its parameters hold them: 1.5 KiB
 * of the 4 KiB a launch's parameters may take; 64, the n * n blocks of an
 * allgather of 8 processes by one of them, coll_sm_device_blocks_one_max). */
#define ACCEL_CUDA_COPY_MAX 64

#define ACCEL_CUDA_REDUCE_INTEGER(X, TK, tk)                                                       \
    X(SUM, sum, TK, tk) X(PROD, prod, TK, tk) X(MAX, max, TK, tk) X(MIN, min, TK, tk)              \
    X(LAND, land, TK, tk) X(LOR, lor, TK, tk) X(LXOR, lxor, TK, tk)                                \
    X(BAND, band, TK, tk) X(BOR, bor, TK, tk) X(BXOR, bxor, TK, tk) X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_FLOATING(X, TK, tk)                                                      \
    X(SUM, sum, TK, tk) X(PROD, prod, TK, tk) X(MAX, max, TK, tk) X(MIN, min, TK, tk)              \
    X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_COMPLEX(X, TK, tk)                                                       \
    X(SUM, sum, TK, tk) X(PROD, prod, TK, tk) X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_LOGICAL(X, TK, tk)                                                       \
    X(LAND, land, TK, tk) X(LOR, lor, TK, tk) X(LXOR, lxor, TK, tk) X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_BYTES(X, TK, tk)                                                         \
    X(BAND, band, TK, tk) X(BOR, bor, TK, tk) X(BXOR, bxor, TK, tk) X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_PAIR(X, TK, tk)                                                          \
    X(MAXLOC, maxloc, TK, tk) X(MINLOC, minloc, TK, tk) X(REPLACE, replace, TK, tk)

#define ACCEL_CUDA_REDUCE_LIST(X)                                                                  \
    ACCEL_CUDA_REDUCE_INTEGER(X, INT8, int8)                                                       \
    ACCEL_CUDA_REDUCE_INTEGER(X, UINT8, uint8)                                                     \
    ACCEL_CUDA_REDUCE_INTEGER(X, INT16, int16)                                                     \
    ACCEL_CUDA_REDUCE_INTEGER(X, UINT16, uint16)                                                   \
    ACCEL_CUDA_REDUCE_INTEGER(X, INT32, int32)                                                     \
    ACCEL_CUDA_REDUCE_INTEGER(X, UINT32, uint32)                                                   \
    ACCEL_CUDA_REDUCE_INTEGER(X, INT64, int64)                                                     \
    ACCEL_CUDA_REDUCE_INTEGER(X, UINT64, uint64)                                                   \
    ACCEL_CUDA_REDUCE_FLOATING(X, FLOAT16, float16)                                                \
    ACCEL_CUDA_REDUCE_FLOATING(X, FLOAT, float)                                                    \
    ACCEL_CUDA_REDUCE_FLOATING(X, DOUBLE, double)                                                  \
    ACCEL_CUDA_REDUCE_COMPLEX(X, C_FLOAT_COMPLEX, c_float_complex)                                 \
    ACCEL_CUDA_REDUCE_COMPLEX(X, C_DOUBLE_COMPLEX, c_double_complex)                               \
    ACCEL_CUDA_REDUCE_LOGICAL(X, BOOL, c_bool)                                                     \
    ACCEL_CUDA_REDUCE_LOGICAL(X, LOGICAL1, logical1)                                               \
    ACCEL_CUDA_REDUCE_LOGICAL(X, LOGICAL2, logical2)                                               \
    ACCEL_CUDA_REDUCE_LOGICAL(X, LOGICAL4, logical4)                                               \
    ACCEL_CUDA_REDUCE_LOGICAL(X, LOGICAL8, logical8)                                               \
    ACCEL_CUDA_REDUCE_BYTES(X, BYTE, byte)                                                         \
    ACCEL_CUDA_REDUCE_PAIR(X, FLOAT_INT, float_int)                                                \
    ACCEL_CUDA_REDUCE_PAIR(X, DOUBLE_INT, double_int)                                              \
    ACCEL_CUDA_REDUCE_PAIR(X, LONG_INT, long_int)                                                  \
    ACCEL_CUDA_REDUCE_PAIR(X, 2INT, 2int)                                                          \
    ACCEL_CUDA_REDUCE_PAIR(X, SHORT_INT, short_int)                                                \
    ACCEL_CUDA_REDUCE_PAIR(X, 2FLOAT, 2float)                                                      \
    ACCEL_CUDA_REDUCE_PAIR(X, 2DOUBLE, 2double)                                                    \
    ACCEL_CUDA_REDUCE_PAIR(X, 2INT64, 2int64)

#endif
