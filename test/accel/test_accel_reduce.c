/*
 * accel_reduce on fake device memory against the host kernels: for every
 * (op, kind) that base/op has a kernel for, with both operands on the
 * device, `in` on the host, and `inout` on the host, at several counts and
 * offsets; results must equal the host reduction byte for byte.  (op, kind)
 * pairs without a kernel answer MPI_ERR_OP; overruns are refused.
 */
#include "config.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#define MAXN 1000

static void fill(void *p, size_t bytes, rail_typekind_t tk, unsigned seed)
{
    unsigned char *b = p;
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < bytes; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
        if (tk == RAIL_TK_BOOL)
            b[i] &= 1;      /* a _Bool holds 0 or 1 */
        else if (x & 0x100000u)
            b[i] = 0;       /* zeros and ties for logical ops and MINLOC/MAXLOC */
    }
}

static int kernels_tested;

/* placement: 0 both on the device, 1 `in` on the host, 2 `inout` on the host */
static void check_one(rail_op_t op, rail_typekind_t tk, size_t count, size_t off, int placement,
                      char *din, char *dio)
{
    size_t es = rail_typekind_size(tk), bytes = count * es;
    static char in[MAXN * 32 + 64], io[MAXN * 32 + 64], want[MAXN * 32 + 64],
        got[MAXN * 32 + 64];
    fill(in, bytes, tk, (unsigned)(op * 100 + tk + count));
    fill(io, bytes, tk, (unsigned)(op * 300 + tk * 7 + count));
    memcpy(want, io, bytes);
    CHECK_OK(rail_op_reduce(op, tk, in, want, count));

    char *pin = placement == 1 ? in : din + off * es;
    char *pio = placement == 2 ? got : dio + off * es;
    if (placement != 1)
        CHECK_OK(MPIX_Fake_device_memcpy(pin, in, bytes));
    if (placement != 2)
        CHECK_OK(MPIX_Fake_device_memcpy(pio, io, bytes));
    else
        memcpy(got, io, bytes);
    CHECK_OK(accel_reduce(op, tk, pin, pio, count, NULL));
    if (placement != 2)
        CHECK_OK(MPIX_Fake_device_memcpy(got, pio, bytes));
    if (memcmp(got, want, bytes) != 0) {
        fprintf(stderr, "reduce %s on %s, count %zu, placement %d: device result differs\n",
                rail_op_name(op), rail_typekind_name(tk), count, placement);
        exit(1);
    }
}

int main(void)
{
    test_select("host,fake");
    CHECK_OK(accel_init());
    char *din, *dio;
    CHECK_OK(MPIX_Fake_device_malloc((MAXN + 16) * 32, (void **)&din));
    CHECK_OK(MPIX_Fake_device_malloc((MAXN + 16) * 32, (void **)&dio));
    size_t counts[] = { 0, 1, 17, MAXN };
    for (int op = RAIL_OP_NONE + 1; op < RAIL_OP_COUNT; op++)
        for (int tk = RAIL_TK_NONE + 1; tk < RAIL_TK_COUNT; tk++) {
            size_t es = rail_typekind_size((rail_typekind_t)tk);
            if (rail_op_kernel((rail_op_t)op, (rail_typekind_t)tk) == NULL) {
                CHECK_RC(accel_reduce((rail_op_t)op, (rail_typekind_t)tk, din, dio, 1, NULL),
                         MPI_ERR_OP);
                continue;
            }
            CHECK(es > 0 && es <= 32);
            kernels_tested++;
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                for (int placement = 0; placement < 3; placement++)
                    check_one((rail_op_t)op, (rail_typekind_t)tk, counts[c], c * 3, placement,
                              din, dio);
        }
    CHECK(kernels_tested > 0);
    /* An overrun of the device allocation is refused. */
    CHECK_RC(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, din, dio + 8, (MAXN + 16) * 8, NULL),
             MPI_ERR_ARG);
    /* Through a stream. */
    accel_stream_t *s;
    accel_event_t *e;
    int32_t a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 }, r[4];
    CHECK_OK(accel_stream_create(&s));
    CHECK_OK(accel_copy(din, a, sizeof(a), s));
    CHECK_OK(accel_copy(dio, b, sizeof(b), s));
    CHECK_OK(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, din, dio, 4, s));
    CHECK_OK(accel_copy(r, dio, sizeof(r), s));
    CHECK_OK(accel_event_record(&e, s));
    CHECK_OK(accel_event_query(e));
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(accel_stream_destroy(s));
    CHECK(r[0] == 11 && r[3] == 44);
    /* accel_reduce_many on the fake device (no one-pass form: a copy and a
     * reduction per further input), host inputs mixed in, in place, and
     * MPI_NO_OP (the first input only) */
    int32_t h[4] = { 100, 200, 300, 400 };
    const void *ins[4] = { din, h, din, NULL };
    CHECK_OK(accel_copy(din, a, sizeof(a), NULL));
    CHECK_OK(accel_copy(dio, b, sizeof(b), NULL));
    CHECK_OK(accel_reduce_many(RAIL_OP_SUM, RAIL_TK_INT32, ins, 3, dio, 4, NULL));
    CHECK_OK(accel_copy(r, dio, sizeof(r), NULL));
    CHECK(r[0] == 1 + 100 + 1 && r[3] == 4 + 400 + 4);
    ins[0] = dio;
    ins[1] = din;
    CHECK_OK(accel_reduce_many(RAIL_OP_MAX, RAIL_TK_INT32, ins, 2, dio, 4, NULL));
    CHECK_OK(accel_copy(r, dio, sizeof(r), NULL));
    CHECK(r[0] == 102 && r[3] == 408);
    ins[0] = din;
    CHECK_OK(accel_reduce_many(RAIL_OP_NO_OP, RAIL_TK_INT32, ins, 3, dio, 4, NULL));
    CHECK_OK(accel_copy(r, dio, sizeof(r), NULL));
    CHECK(r[0] == 1 && r[3] == 4);
    CHECK_RC(accel_reduce_many(RAIL_OP_SUM, RAIL_TK_INT32, ins, 0, dio, 4, NULL), MPI_ERR_ARG);
    CHECK_OK(MPIX_Fake_device_free(din));
    CHECK_OK(MPIX_Fake_device_free(dio));
    CHECK_OK(accel_finalize());
    printf("reduce: ok (%d op/kind kernels compared)\n", kernels_tested);
    return 0;
}
