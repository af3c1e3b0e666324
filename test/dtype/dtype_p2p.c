/*
 * Datatypes in point-to-point: MPI_Get_elements (int, _x, _c) and
 * MPI_Get_count on receives that fill only part of the receive type,
 * derived types freed while a nonblocking or persistent request still uses
 * them.  Messages go around a ring (to oneself with one rank).
 */
#include "test/dtype/dtype_test.h"
#include <mpi-ext.h>

static int next_rank, prev_rank;

static void test_partial(void)
{
    /* Send (int, double, int); receive two (int, double) structs. */
    MPI_Datatype w, p;
    int bl[] = {1, 1, 1};
    MPI_Aint dw[] = {0, 8, 16};
    MPI_Datatype tw[] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    MPI_OK(MPI_Type_create_struct(3, bl, dw, tw, &w));
    MPI_OK(MPI_Type_create_struct(2, bl, dw, tw, &p));
    MPI_OK(MPI_Type_commit(&w));
    MPI_OK(MPI_Type_commit(&p));
    struct {
        int i;
        double d;
        int j;
    } out = {7, 2.5, 9};
    struct {
        int i;
        double d;
    } in[2] = {{0, 0}, {0, 0}};
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&out, 1, w, next_rank, 1, in, 2, p, prev_rank, 1, MPI_COMM_WORLD, &st));
    CHECK(in[0].i == 7 && in[0].d == 2.5 && in[1].i == 9 && in[1].d == 0, "partial struct data");
    int count, elems;
    MPI_Count xe, ce;
    MPI_OK(MPI_Get_count(&st, p, &count));
    CHECK(count == MPI_UNDEFINED, "MPI_Get_count of 1.5 structs is %d", count);
    MPI_OK(MPI_Get_elements(&st, p, &elems));
    MPI_OK(MPI_Get_elements_x(&st, p, &xe));
    MPI_OK(MPI_Get_elements_c(&st, p, &ce));
    CHECK(elems == 3 && xe == 3 && ce == 3, "MPI_Get_elements: %d %lld %lld", elems,
          (long long)xe, (long long)ce);
    MPI_OK(MPI_Get_elements(&st, MPI_BYTE, &elems));
    CHECK(elems == 16, "elements as bytes: %d", elems);

    /* 7 ints into three triples. */
    MPI_Datatype tri;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &tri));
    MPI_OK(MPI_Type_commit(&tri));
    int s7[7] = {1, 2, 3, 4, 5, 6, 7}, r9[9] = {0};
    MPI_OK(MPI_Sendrecv(s7, 7, MPI_INT, next_rank, 2, r9, 3, tri, prev_rank, 2, MPI_COMM_WORLD,
                        &st));
    MPI_OK(MPI_Get_count(&st, tri, &count));
    MPI_OK(MPI_Get_elements(&st, tri, &elems));
    CHECK(count == MPI_UNDEFINED && elems == 7 && r9[6] == 7 && r9[7] == 0,
          "7 ints into triples: count %d elements %d", count, elems);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 7, "count in ints %d", count);
    MPI_Type_free(&w), MPI_Type_free(&p), MPI_Type_free(&tri);
}

static void test_free_while_pending(void)
{
    int before, after;
    MPIX_Live_objects("datatype", &before);
    MPI_Datatype v, sv;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    MPI_OK(MPI_Type_dup(v, &sv));
    MPI_OK(MPI_Type_commit(&sv));
    int rbuf[8], sbuf[8];
    for (int i = 0; i < 8; i++)
        rbuf[i] = -1, sbuf[i] = 10 * t_rank + i;
    MPI_Request rr, sr;
    MPI_OK(MPI_Irecv(rbuf, 1, v, prev_rank, 3, MPI_COMM_WORLD, &rr));
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Isend(sbuf, 1, sv, next_rank, 3, MPI_COMM_WORLD, &sr));
    MPI_OK(MPI_Type_free(&sv));
    MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(rbuf[i] == (i % 2 ? -1 : 10 * prev_rank + i), "rbuf[%d] = %d", i, rbuf[i]);

    /* Persistent receive whose type is freed between starts. */
    MPI_Datatype r;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 8, &r));
    MPI_OK(MPI_Type_commit(&r));
    MPI_Request pr;
    MPI_OK(MPI_Recv_init(rbuf, 3, r, prev_rank, 4, MPI_COMM_WORLD, &pr));
    MPI_OK(MPI_Type_free(&r));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 8; i++)
            rbuf[i] = -1;
        int s3[3] = {round, round + 1, round + 2};
        MPI_OK(MPI_Start(&pr));
        MPI_OK(MPI_Send(s3, 3, MPI_INT, next_rank, 4, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        CHECK(rbuf[0] == round && rbuf[1] == -1 && rbuf[2] == round + 1 && rbuf[4] == round + 2,
              "persistent receive round %d", round);
    }
    MPI_OK(MPI_Request_free(&pr));
    MPIX_Live_objects("datatype", &after);
    CHECK(after == before, "%d datatypes left after the requests", after - before);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    next_rank = (t_rank + 1) % t_size;
    prev_rank = (t_rank + t_size - 1) % t_size;
    test_partial();
    test_free_while_pending();
    return check_mpi_finalize("dtype_p2p");
}
