/*
 * The pml on its own: point-to-point messaging over the object layer and the
 * btls, without the MPI front end (this program links the core library
 * only, no libmpi).  It brings up what MPI_Init would below the front end
 * (runtime, accel, predefined datatypes, pml, the predefined
 * communicators), then checks MPI's matching rules on MPI_COMM_WORLD's
 * object:
 *   - messages between a pair are not overtaken, per tag and across tags;
 *   - MPI_ANY_SOURCE / MPI_ANY_TAG receive everything, each message once;
 *   - an unexpected message waits for its receive (tag order reversed);
 *   - the collective context never matches a point-to-point receive;
 *   - probe and matched probe see what the receive then gets;
 *   - eager and rendezvous sizes, a noncontiguous datatype, self sends;
 *   - synchronous sends, truncation (MPI_ERR_TRUNCATE), cancelling a receive.
 * Runs at any number of processes under mpirun; phases are separated by the
 * runtime's fence.
 */
#include "runtime/rte.h"
#include "accel/accel.h"
#include "btl/btl.h"
#include "obj/comm.h"
#include "obj/datatype.h"
#include "obj/type_impl.h"
#include "pml/pml.h"
#include "base/param.h"

/* failures name the process's rank in MPI_COMM_WORLD (0 until it is up) */
#define CHECK_RANK me
#include "test/check.h"

#include <stdlib.h>
#include <string.h>

static obj_comm_t *world;
static int me, np;

static obj_datatype_t *type_of(MPI_Datatype h)
{
    return obj_datatype_predef(h);
}

static void fence(void)
{
    pml_quiesce();
    EXPECT(rte_fence(false) == MPI_SUCCESS, "fence");
}

/* Every peer sends N messages to every other, alternating two tags; each
 * receiver takes them per (source, tag) and must see them in order. */
static void test_order(void)
{
    enum { N = 64 };
    obj_request_t **reqs = calloc((size_t)np * N, sizeof(*reqs));
    int *vals = calloc((size_t)np * N, sizeof(int));
    int n = 0;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < N; i++) {
            vals[p * N + i] = me * 1000 + i;
            EXPECT(pml_isend(&vals[p * N + i], 1, type_of(MPI_INT), p, i % 2, PML_SEND_STANDARD,
                             world, 0, &reqs[n++]) == MPI_SUCCESS, "isend");
        }
    for (int p = 0; p < np; p++)
        for (int t = 0; t < 2; t++)
            for (int i = t; i < N; i += 2) {
                int v = -1;
                obj_req_status_t st;
                EXPECT(pml_recv(&v, 1, type_of(MPI_INT), p, t, world, 0, &st) == MPI_SUCCESS,
                       "recv");
                EXPECT(v == p * 1000 + i, "order: from %d tag %d got %d, expected %d", p, t, v,
                       p * 1000 + i);
            }
    EXPECT(pml_waitall(n, reqs) == MPI_SUCCESS, "waitall");
    free(reqs);
    free(vals);
    fence();
}

/* Wildcards: every peer sends one message; ANY_SOURCE / ANY_TAG receive
 * each exactly once with the right status. */
static void test_wildcards(void)
{
    int v = me;
    obj_request_t **reqs = calloc((size_t)np, sizeof(*reqs));
    for (int p = 0; p < np; p++)
        pml_isend(&v, 1, type_of(MPI_INT), p, 100 + me, PML_SEND_STANDARD, world, 0, &reqs[p]);
    char *seen = calloc((size_t)np, 1);
    for (int i = 0; i < np; i++) {
        int got = -1;
        obj_req_status_t st;
        EXPECT(pml_recv(&got, 1, type_of(MPI_INT), MPI_ANY_SOURCE, MPI_ANY_TAG, world, 0, &st) ==
                   MPI_SUCCESS, "recv");
        EXPECT(st.source == got && st.tag == 100 + got && st.count == sizeof(int),
               "status source %d tag %d count %lld for %d", st.source, st.tag,
               (long long)st.count, got);
        EXPECT(got >= 0 && got < np && !seen[got], "message from %d twice or invalid", got);
        if (got >= 0 && got < np)
            seen[got] = 1;
    }
    pml_waitall(np, reqs);
    free(seen);
    free(reqs);
    fence();
}

/* The next rank sends tag 1 then tag 2; the receiver asks for tag 2 first
 * (tag 1 waits as unexpected).  The same tags in the collective context
 * must not be matched by point-to-point receives. */
static void test_unexpected_and_contexts(void)
{
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    int a = 1, b = 2, c = 3;
    obj_request_t *r[3];
    pml_isend(&c, 1, type_of(MPI_INT), to, 1, PML_SEND_STANDARD, world, PML_COLL, &r[0]);
    pml_isend(&a, 1, type_of(MPI_INT), to, 1, PML_SEND_STANDARD, world, 0, &r[1]);
    pml_isend(&b, 1, type_of(MPI_INT), to, 2, PML_SEND_STANDARD, world, 0, &r[2]);
    int x = 0, y = 0, z = 0;
    obj_req_status_t st;
    pml_recv(&y, 1, type_of(MPI_INT), from, 2, world, 0, &st);
    pml_recv(&x, 1, type_of(MPI_INT), from, MPI_ANY_TAG, world, 0, &st);
    pml_recv(&z, 1, type_of(MPI_INT), from, 1, world, PML_COLL, &st);
    EXPECT(x == 1 && y == 2 && z == 3, "tags/contexts: got %d %d %d", x, y, z);
    pml_waitall(3, r);
    fence();
}

/* Probe, then matched probe and receive of the matched message. */
static void test_probe(void)
{
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    char out[40], in[40] = "";
    snprintf(out, sizeof(out), "from %d", me);
    obj_request_t *r;
    pml_isend(out, (MPI_Count)strlen(out) + 1, type_of(MPI_CHAR), to, 7, PML_SEND_STANDARD, world,
              0, &r);
    obj_req_status_t st;
    EXPECT(pml_probe(from, 7, world, 0, &st) == MPI_SUCCESS, "probe");
    EXPECT(st.source == from && st.count == (MPI_Count)strlen(out) + 1, "probe status %d %lld",
           st.source, (long long)st.count);
    obj_message_t *msg = NULL;
    EXPECT(pml_mprobe(from, 7, world, 0, &msg, &st) == MPI_SUCCESS && msg, "mprobe");
    obj_request_t *rr;
    EXPECT(pml_imrecv(in, (MPI_Count)sizeof(in), type_of(MPI_CHAR), msg, &rr) == MPI_SUCCESS,
           "imrecv");
    pml_wait(rr, &st);
    char want[40];
    snprintf(want, sizeof(want), "from %d", from);
    EXPECT(strcmp(in, want) == 0, "mrecv got '%s'", in);
    int flag = 1;
    pml_iprobe(from, 7, world, 0, &flag, &st);
    EXPECT(!flag, "the matched message was probed again");
    pml_wait(r, NULL);
    fence();
}

/* Eager and rendezvous sizes, to every peer and to self, contiguous and
 * through a vector type (every other int). */
static void test_sizes(void)
{
    static const size_t sizes[] = {0, 1, 100, 4096, 65536 + 3, (size_t)1 << 20, (size_t)4 << 20};
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    for (size_t k = 0; k < RAIL_ARRAY_SIZE(sizes); k++) {
        size_t n = sizes[k];
        unsigned char *s = malloc(n + 1), *d = calloc(n + 1, 1);
        for (size_t i = 0; i < n; i++)
            s[i] = (unsigned char)(i * 7 + (size_t)me);
        for (int self = 0; self < 2; self++) {
            int dst = self ? me : to, src = self ? me : from;
            obj_request_t *r;
            memset(d, 0, n + 1);
            pml_isend(s, (MPI_Count)n, type_of(MPI_BYTE), dst, 9, PML_SEND_STANDARD, world, 0, &r);
            obj_req_status_t st;
            EXPECT(pml_recv(d, (MPI_Count)n, type_of(MPI_BYTE), src, 9, world, 0, &st) ==
                       MPI_SUCCESS, "recv %zu", n);
            pml_wait(r, NULL);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (d[i] != (unsigned char)(i * 7 + (size_t)src))
                    bad = i;
            EXPECT(bad == n && st.count == (MPI_Count)n, "%zu bytes%s: byte %zu wrong", n,
                   self ? " to self" : "", bad);
        }
        free(s);
        free(d);
    }
    fence();
}

static void test_vector(void)
{
    enum { N = 50000 };
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    obj_datatype_t *vec = NULL;
    EXPECT(obj_type_vector(N, 1, 2, type_of(MPI_INT), false, &vec) == MPI_SUCCESS &&
               obj_type_commit(vec) == MPI_SUCCESS, "vector type");
    int *s = malloc(2 * N * sizeof(int)), *d = calloc(N, sizeof(int));
    for (int i = 0; i < 2 * N; i++)
        s[i] = i % 2 ? -1 : me * 100000 + i / 2;
    obj_request_t *r;
    pml_isend(s, 1, vec, to, 11, PML_SEND_STANDARD, world, 0, &r);
    obj_req_status_t st;
    pml_recv(d, N, type_of(MPI_INT), from, 11, world, 0, &st);
    pml_wait(r, NULL);
    int bad = -1;
    for (int i = 0; i < N && bad < 0; i++)
        if (d[i] != from * 100000 + i)
            bad = i;
    EXPECT(bad < 0, "vector: element %d is %d", bad, bad >= 0 ? d[bad] : 0);
    obj_type_free(vec);
    free(s);
    free(d);
    fence();
}

/* A synchronous send completes once matched; truncation is reported to
 * the receiver; a posted receive can be cancelled. */
static void test_sync_truncate_cancel(void)
{
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    char big[100] = {0}, small[50];
    obj_request_t *r;
    pml_isend(big, 100, type_of(MPI_CHAR), to, 12, PML_SEND_SYNC, world, 0, &r);
    obj_req_status_t st;
    int rc = pml_recv(small, 50, type_of(MPI_CHAR), from, 12, world, 0, &st);
    EXPECT(rc == MPI_ERR_TRUNCATE, "truncation gave %d", rc);
    EXPECT(pml_wait(r, NULL) == MPI_SUCCESS, "synchronous send");
    obj_request_t *c;
    pml_irecv(small, 50, type_of(MPI_CHAR), from, 13, world, 0, &c);
    EXPECT(c->ops->cancel && c->ops->cancel(c) == MPI_SUCCESS, "cancel");
    pml_wait(c, &st);
    EXPECT(st.cancelled, "the receive was not cancelled");
    fence();
}

static int up(void)
{
    if (accel_register_params() || btl_base_register_params() || pml_register_params())
        return 1;
    if (rte_init() || accel_init() || obj_datatype_predef_init())
        return 1;
    if (pml_init(MPI_THREAD_SINGLE) || obj_comm_predef_init())
        return 1;
    world = obj_comm_world();
    me = world->rank;
    np = world->size;
    return 0;
}

static void down(void)
{
    pml_quiesce();
    rte_fence(false);
    obj_comm_predef_fini();
    obj_comm_layers_clear();
    pml_finalize();
    accel_finalize();
    rte_finalize();
}

int main(void)
{
    CHECK(up() == 0, "could not bring up the runtime and the pml");
    test_order();
    test_wildcards();
    test_unexpected_and_contexts();
    test_probe();
    test_sizes();
    test_vector();
    test_sync_truncate_cancel();
    down();
    char name[32];
    snprintf(name, sizeof(name), "pml_unit: rank %d", me);
    return check_report(name);
}
