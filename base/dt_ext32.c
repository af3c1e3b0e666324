/*
 * Datatype engine: the external32 representation (MPI-4.1, "External Data
 * Representation: external32"): big-endian, IEEE floating point, sizes
 * from the standard's table.  Data is packed natively into a staging
 * buffer through an ordinary cursor, then converted run by run following
 * the type signature (and the reverse for unpack).
 */
#include "base/dt_impl.h"
#include <float.h>
#include <stdlib.h>
#include <string.h>

#define DT_X32_STAGE 16384
#define DT_X32_RUNS 256

#if LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113
#define DT_X32_LDOUBLE 16
#else
#define DT_X32_LDOUBLE 0 /* double or double-double long double: no conversion */
#endif

static const unsigned char dt_x32_size[RAIL_TK_COUNT] = {
    [RAIL_TK_INT8] = 1, [RAIL_TK_UINT8] = 1, [RAIL_TK_INT16] = 2, [RAIL_TK_UINT16] = 2,
    [RAIL_TK_INT32] = 4, [RAIL_TK_UINT32] = 4, [RAIL_TK_INT64] = 8, [RAIL_TK_UINT64] = 8,
    [RAIL_TK_INT128] = 16, [RAIL_TK_UINT128] = 16, [RAIL_TK_FLOAT16] = 2, [RAIL_TK_FLOAT] = 4,
    [RAIL_TK_DOUBLE] = 8, [RAIL_TK_LONG_DOUBLE] = DT_X32_LDOUBLE, [RAIL_TK_FLOAT128] = 16,
    [RAIL_TK_C_FLOAT_COMPLEX] = 8, [RAIL_TK_C_DOUBLE_COMPLEX] = 16,
    [RAIL_TK_C_LONG_DOUBLE_COMPLEX] = 2 * DT_X32_LDOUBLE, [RAIL_TK_BOOL] = 1,
    [RAIL_TK_LOGICAL1] = 1, [RAIL_TK_LOGICAL2] = 2, [RAIL_TK_LOGICAL4] = 4,
    [RAIL_TK_LOGICAL8] = 8, [RAIL_TK_BYTE] = 1,
};

int64_t rail_dt_ext32_kind_size(rail_typekind_t tk)
{
    if ((unsigned)tk >= RAIL_TK_COUNT || rail_typekind_size(tk) == 0)
        return 0;
    return dt_x32_size[tk];
}

/* ------------------------------------------------------------ byte order */

static uint64_t dt_get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void dt_put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

/* n items of size bytes, byte order reversed on little-endian hosts. */
static void dt_swap_copy(unsigned char *dst, const unsigned char *src, size_t size, int64_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (size > 1) {
        for (int64_t i = 0; i < n; i++, dst += size, src += size)
            for (size_t b = 0; b < size; b++)
                dst[b] = src[size - 1 - b];
        return;
    }
#endif
    memcpy(dst, src, size * (size_t)n);
}

/* -------------------------------------------------- long double <-> quad */

#if LDBL_MANT_DIG == 64
/* x87 80-bit extended (explicit integer bit) to big-endian binary128. */
static void dt_ld_encode(unsigned char *out, const unsigned char *in)
{
    uint64_t m;
    uint16_t se;
    memcpy(&m, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t sign = se >> 15, exp = se & 0x7fff, frac = m & 0x7fffffffffffffffull;
    if (exp == 0 && (m >> 63))
        exp = 1;                               /* pseudo-denormal */
    else if (exp != 0 && exp != 0x7fff && !(m >> 63))
        exp = 0x7fff, frac = 1ull << 62;       /* unnormal: invalid, a NaN */
    dt_put_be64(out, sign << 63 | exp << 48 | frac >> 15);
    dt_put_be64(out + 8, frac << 49);
}

/* Big-endian binary128 to x87, rounding the 49 extra bits to nearest even. */
static void dt_ld_decode(unsigned char *out, const unsigned char *in)
{
    uint64_t hi = dt_get_be64(in), lo = dt_get_be64(in + 8);
    uint64_t sign = hi >> 63, exp = (hi >> 48) & 0x7fff;
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49, rest = lo & ((1ull << 49) - 1);
    const uint64_t half = 1ull << 48;
    if (exp == 0x7fff) {
        if (!frac && rest)
            frac = 1ull << 62;                 /* NaN whose payload we cannot keep */
    } else if (rest > half || (rest == half && (frac & 1))) {
        if (++frac >> 63) {                    /* carry: next binade (or infinity) */
            frac = 0;
            exp++;
        }
    }
    uint64_t m = frac | (uint64_t)(exp != 0) << 63;
    uint16_t se = (uint16_t)(sign << 15 | exp);
    memset(out, 0, sizeof(long double));
    memcpy(out, &m, 8);
    memcpy(out + 8, &se, 2);
}
#else
static void dt_ld_encode(unsigned char *out, const unsigned char *in)
{
    dt_swap_copy(out, in, 16, 1);
}
static void dt_ld_decode(unsigned char *out, const unsigned char *in)
{
    dt_swap_copy(out, in, 16, 1);
}
#endif

/* -------------------------------------------------------- kind conversion */

static bool dt_is_narrow(const struct rail_dt *leaf)
{
    return leaf->ext32_size < leaf->size;    /* 8-byte long as 4 bytes */
}

static int64_t dt_x32_parts(const struct rail_dt *leaf)
{
    switch (leaf->tk) {
    case RAIL_TK_C_FLOAT_COMPLEX:
    case RAIL_TK_C_DOUBLE_COMPLEX:
    case RAIL_TK_C_LONG_DOUBLE_COMPLEX:
        return 2;
    default:
        return 1;
    }
}

static bool dt_is_ldouble(const struct rail_dt *leaf)
{
    return leaf->tk == RAIL_TK_LONG_DOUBLE || leaf->tk == RAIL_TK_C_LONG_DOUBLE_COMPLEX;
}

static void dt_x32_encode(const struct rail_dt *leaf, unsigned char *ext,
                          const unsigned char *nat, int64_t n)
{
    int64_t parts = dt_x32_parts(leaf) * n;
    size_t nsize = (size_t)(leaf->size / dt_x32_parts(leaf));
    if (dt_is_ldouble(leaf)) {
        for (int64_t i = 0; i < parts; i++)
            dt_ld_encode(ext + 16 * i, nat + nsize * (size_t)i);
    } else if (dt_is_narrow(leaf)) {
        for (int64_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, nat + 8 * i, 8);
            for (int b = 3; b >= 0; b--, v >>= 8)
                ext[4 * i + b] = (unsigned char)v;
        }
    } else {
        dt_swap_copy(ext, nat, nsize, parts);
    }
}

static void dt_x32_decode(const struct rail_dt *leaf, unsigned char *nat,
                          const unsigned char *ext, int64_t n)
{
    int64_t parts = dt_x32_parts(leaf) * n;
    size_t nsize = (size_t)(leaf->size / dt_x32_parts(leaf));
    if (dt_is_ldouble(leaf)) {
        for (int64_t i = 0; i < parts; i++)
            dt_ld_decode(nat + nsize * (size_t)i, ext + 16 * i);
    } else if (dt_is_narrow(leaf)) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t w = (uint32_t)ext[4 * i] << 24 | (uint32_t)ext[4 * i + 1] << 16 |
                         (uint32_t)ext[4 * i + 2] << 8 | ext[4 * i + 3];
            uint64_t v = leaf->tk == RAIL_TK_INT64 ? (uint64_t)(int64_t)(int32_t)w : w;
            memcpy(nat + 8 * i, &v, 8);
        }
    } else {
        dt_swap_copy(nat, ext, nsize, parts);
    }
}

/* ------------------------------------------------------------ pack/unpack */

struct dt_x32 {
    struct rail_dt_cursor cur;
    struct rail_dt_sig_iter sig;
    const struct rail_dt *leaf;          /* run being cut into batches */
    int64_t left;
    int nruns;
    const struct rail_dt *run_leaf[DT_X32_RUNS];
    int64_t run_n[DT_X32_RUNS];
    _Alignas(16) unsigned char stage[DT_X32_STAGE];
};

static int dt_x32_open(struct dt_x32 **xp, const struct rail_dt *dt, int64_t count,
                       const void *buf, size_t avail, rail_dt_copy_fn copy, void *ctx)
{
    size_t need;
    int rc = rail_dt_external32_size(dt, count, &need);
    if (rc != MPI_SUCCESS)
        return rc;
    if (need > avail)
        return MPI_ERR_TRUNCATE;
    struct dt_x32 *x = malloc(sizeof(*x));
    if (!x)
        return MPI_ERR_NO_MEM;
    rc = rail_dt_cursor_init(&x->cur, dt, count, buf);
    if (rc == MPI_SUCCESS)
        rc = rail_dt_sig_init(&x->sig, dt, count);
    if (rc != MPI_SUCCESS) {
        free(x);
        return rc;
    }
    rail_dt_cursor_set_copy(&x->cur, copy, ctx);
    x->left = 0;
    *xp = x;
    return MPI_SUCCESS;
}

static void dt_x32_close(struct dt_x32 *x)
{
    rail_dt_sig_fini(&x->sig);
    free(x);
}

/* Next runs whose native bytes fit the stage; returns those bytes. */
static size_t dt_x32_batch(struct dt_x32 *x)
{
    size_t used = 0;
    for (x->nruns = 0; x->nruns < DT_X32_RUNS; x->nruns++) {
        if (x->left == 0 && !rail_dt_sig_next(&x->sig, &x->leaf, &x->left))
            break;
        int64_t m = RAIL_MIN(x->left, (int64_t)((DT_X32_STAGE - used) / (size_t)x->leaf->size));
        if (m == 0)
            break;
        x->run_leaf[x->nruns] = x->leaf;
        x->run_n[x->nruns] = m;
        x->left -= m;
        used += (size_t)(m * x->leaf->size);
    }
    return used;
}

/* Convert the batch between stage and ext; returns external32 bytes. */
static size_t dt_x32_convert(struct dt_x32 *x, unsigned char *ext, bool encode)
{
    unsigned char *nat = x->stage, *start = ext;
    for (int j = 0; j < x->nruns; j++) {
        const struct rail_dt *l = x->run_leaf[j];
        if (encode)
            dt_x32_encode(l, ext, nat, x->run_n[j]);
        else
            dt_x32_decode(l, nat, ext, x->run_n[j]);
        nat += x->run_n[j] * l->size;
        ext += x->run_n[j] * l->ext32_size;
    }
    return (size_t)(ext - start);
}

/* The cursor stopped short: only a copy callback can make it. */
static int dt_x32_failed(const struct dt_x32 *x)
{
    return x->cur.status != MPI_SUCCESS ? x->cur.status : MPI_ERR_TRUNCATE;
}

int rail_dt_external32_size(const struct rail_dt *dt, int64_t count, size_t *size)
{
    if (!dt || (dt->flags & RAIL_DT_F_NOEXT32))
        return MPI_ERR_TYPE;
    if (count < 0)
        return MPI_ERR_COUNT;
    *size = (size_t)count * (size_t)dt->ext32_size;
    return MPI_SUCCESS;
}

int rail_dt_pack_external32_cb(const struct rail_dt *dt, int64_t count, const void *buf,
                               void *out, size_t out_size, size_t *position,
                               rail_dt_copy_fn copy, void *ctx)
{
    struct dt_x32 *x;
    size_t pos = *position;
    int rc = pos > out_size ? MPI_ERR_ARG
                            : dt_x32_open(&x, dt, count, buf, out_size - pos, copy, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    for (size_t used; (used = dt_x32_batch(x)) > 0;) {
        if (rail_dt_pack(&x->cur, x->stage, used) != used) {
            rc = dt_x32_failed(x);
            break;
        }
        pos += dt_x32_convert(x, (unsigned char *)out + pos, true);
    }
    dt_x32_close(x);
    if (rc == MPI_SUCCESS)
        *position = pos;
    return rc;
}

int rail_dt_unpack_external32_cb(const struct rail_dt *dt, int64_t count, void *buf,
                                 const void *in, size_t in_size, size_t *position,
                                 rail_dt_copy_fn copy, void *ctx)
{
    struct dt_x32 *x;
    size_t pos = *position;
    int rc = pos > in_size ? MPI_ERR_ARG
                           : dt_x32_open(&x, dt, count, buf, in_size - pos, copy, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    for (size_t used; (used = dt_x32_batch(x)) > 0;) {
        pos += dt_x32_convert(x, (unsigned char *)in + pos, false);
        if (rail_dt_unpack(&x->cur, x->stage, used) != used) {
            rc = dt_x32_failed(x);
            break;
        }
    }
    dt_x32_close(x);
    if (rc == MPI_SUCCESS)
        *position = pos;
    return rc;
}

int rail_dt_pack_external32(const struct rail_dt *dt, int64_t count, const void *buf, void *out,
                            size_t out_size, size_t *position)
{
    return rail_dt_pack_external32_cb(dt, count, buf, out, out_size, position, NULL, NULL);
}

int rail_dt_unpack_external32(const struct rail_dt *dt, int64_t count, void *buf, const void *in,
                              size_t in_size, size_t *position)
{
    return rail_dt_unpack_external32_cb(dt, count, buf, in, in_size, position, NULL, NULL);
}
