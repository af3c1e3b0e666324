/* Sessions together with the World model: a session opened before
 * MPI_Init and one after, communicators of both used side by side, the
 * session outliving MPI_Finalize; concurrent MPI_Comm_create_from_group
 * over different groups with different tags. */
#include "comm_test.h"

static int rank, size;

static MPI_Comm from_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c));
    MPI_OK(MPI_Group_free(&g));
    return c;
}

/* Halves of the world from a World-model group, each with its own tag,
 * then the even ranks with a third tag. */
static void subgroups(MPI_Session s)
{
    MPI_Group wg, half, even;
    MPI_Comm c;
    int r, n;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    int lo = size / 2, mine = rank < lo ? 0 : 1;
    int range[1][3] = {{mine ? lo : 0, mine ? size - 1 : lo - 1, 1}};
    MPI_OK(MPI_Group_range_incl(wg, 1, range, &half));
    MPI_OK(MPI_Comm_create_from_group(half, mine ? "rail://half/1" : "rail://half/0",
                                      MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c));
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &r));
    CHECK(n == (mine ? size - lo : lo) && r == rank - (mine ? lo : 0), "half: %d of %d", r, n);
    ring_check(c);
    MPI_OK(MPI_Comm_free(&c));
    int evens[1][3] = {{0, (size - 1) / 2 * 2, 2}};
    MPI_OK(MPI_Group_range_incl(wg, 1, evens, &even));
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_create_from_group(even, "rail://even", MPI_INFO_NULL,
                                          MPI_ERRORS_ARE_FATAL, &c));
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK(r == rank / 2, "even: rank %d", r);
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&even));
    MPI_OK(MPI_Group_free(&half));
    MPI_OK(MPI_Group_free(&wg));
}

int main(int argc, char **argv)
{
    MPI_Session before, after;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &before));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &after));
    MPI_Comm a = from_pset(before, "mpi://WORLD", "rail://a");
    MPI_Comm b = from_pset(after, "mpi://WORLD", "rail://b");
    int res;
    MPI_OK(MPI_Comm_compare(a, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "session WORLD vs MPI_COMM_WORLD: %d", res);
    ring_check(a);
    ring_check(b);
    ring_check(MPI_COMM_WORLD);
    subgroups(after);
    /* A group without the calling process. */
    if (size > 1) {
        MPI_Group wg, others;
        MPI_Comm c;
        MPI_OK(MPI_Group_from_session_pset(after, "mpi://WORLD", &wg));
        MPI_OK(MPI_Group_excl(wg, 1, &rank, &others));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        MPI_FAILS(MPI_Comm_create_from_group(others, "rail://x", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &c), MPI_ERR_GROUP);
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
        MPI_OK(MPI_Group_free(&others));
        MPI_OK(MPI_Group_free(&wg));
    }
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Session_finalize(&after));
    MPI_Finalize();
    /* The session made before MPI_Init outlives MPI_Finalize. */
    ring_check(a);
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Session_finalize(&before));
    return 0;
}
