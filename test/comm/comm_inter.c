/* Intercommunicators: Intercomm_create (and from groups), queries,
 * point-to-point across, dup / idup / split / create on them, merge. */
#include "comm_test.h"

static int rank, size, color, nlow;   /* group 0: world ranks 0 .. nlow-1 */

static int group_size(int c) { return c == 0 ? nlow : size - nlow; }
static int first_of(int c) { return c == 0 ? 0 : nlow; }

static void check_inter(MPI_Comm ic, int my_color, int my_rank_in_group)
{
    int flag, r, s, rs, res;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    MPI_OK(MPI_Comm_rank(ic, &r));
    MPI_OK(MPI_Comm_size(ic, &s));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(r == my_rank_in_group && s == group_size(my_color) && rs == group_size(!my_color),
          "intercomm: rank %d size %d remote size %d", r, s, rs);
    MPI_Group rg, wg, want;
    int range[1][3] = {{first_of(!my_color), first_of(!my_color) + rs - 1, 1}};
    MPI_OK(MPI_Comm_remote_group(ic, &rg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_range_incl(wg, 1, range, &want));
    MPI_OK(MPI_Group_compare(rg, want, &res));
    CHECK(res == MPI_IDENT, "remote group: compare %d", res);
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&want));
    ring_check(ic);
}

/* Every process of each group sends to remote rank 0, which receives with
 * MPI_ANY_SOURCE and checks the sources. */
static void gather_to_remote_zero(MPI_Comm ic)
{
    int r, rs, v;
    MPI_Status st;
    MPI_OK(MPI_Comm_rank(ic, &r));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    MPI_Request rq;
    v = 1000 + r;
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, 0, 5, ic, &rq));
    if (r == 0) {
        int seen = 0;
        for (int i = 0; i < rs; i++) {
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
            CHECK(v == 1000 + st.MPI_SOURCE, "value %d from remote rank %d", v, st.MPI_SOURCE);
            seen |= 1 << st.MPI_SOURCE;
        }
        CHECK(seen == (1 << rs) - 1, "sources seen %#x", seen);
    }
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void test_merge(MPI_Comm ic)
{
    MPI_Comm m;
    int r, s;
    MPI_OK(MPI_Intercomm_merge(ic, color, &m));   /* group 0 low: world order */
    MPI_OK(MPI_Comm_rank(m, &r));
    MPI_OK(MPI_Comm_size(m, &s));
    CHECK(r == rank && s == size, "merge(high = color): rank %d size %d", r, s);
    ring_check(m);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Intercomm_merge(ic, !color, &m));  /* group 1 first */
    MPI_OK(MPI_Comm_rank(m, &r));
    int want = color ? rank - nlow : group_size(1) + rank;
    CHECK(r == want, "merge(high = !color): rank %d want %d", r, want);
    ring_check(m);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Intercomm_merge(ic, 0, &m));       /* tie: the group of world rank 0 first */
    MPI_OK(MPI_Comm_rank(m, &r));
    CHECK(r == rank, "merge(high = 0 everywhere): rank %d", r);
    MPI_OK(MPI_Comm_free(&m));
}

static void test_derived(MPI_Comm ic, int lrank)
{
    MPI_Comm d, s;
    MPI_Request rq;
    int res;
    MPI_OK(MPI_Comm_dup(ic, &d));
    MPI_OK(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
    check_inter(d, color, lrank);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_idup(ic, &d, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_inter(d, color, lrank);
    gather_to_remote_zero(d);
    MPI_OK(MPI_Comm_free(&d));
    /* Split by local rank parity: even with even, odd with odd. */
    MPI_OK(MPI_Comm_split(ic, lrank % 2, lrank, &s));
    int mine = (group_size(color) - lrank % 2 + 1) / 2;
    int theirs = (group_size(!color) - lrank % 2 + 1) / 2;
    if (theirs == 0) {
        CHECK(s == MPI_COMM_NULL, "split of intercomm without partners");
    } else {
        int ls, rs;
        MPI_OK(MPI_Comm_size(s, &ls));
        MPI_OK(MPI_Comm_remote_size(s, &rs));
        CHECK(ls == mine && rs == theirs, "split of intercomm: %d/%d want %d/%d", ls, rs, mine,
              theirs);
        ring_check(s);
        MPI_OK(MPI_Comm_free(&s));
    }
    /* Create with the first member of each group left out. */
    MPI_Group lg, sub;
    int first = 0;
    MPI_OK(MPI_Comm_group(ic, &lg));
    MPI_OK(MPI_Group_excl(lg, 1, &first, &sub));
    MPI_OK(MPI_Comm_create(ic, sub, &s));
    if (lrank == 0 || group_size(0) == 1 || group_size(1) == 1) {
        CHECK(s == MPI_COMM_NULL, "create on intercomm: unexpected communicator");
    } else {
        int ls, rs;
        MPI_OK(MPI_Comm_size(s, &ls));
        MPI_OK(MPI_Comm_remote_size(s, &rs));
        CHECK(ls == group_size(color) - 1 && rs == group_size(!color) - 1,
              "create on intercomm: %d/%d", ls, rs);
        ring_check(s);
        MPI_OK(MPI_Comm_free(&s));
    }
    MPI_OK(MPI_Group_free(&sub));
    MPI_OK(MPI_Group_free(&lg));
}

static void test_from_groups(void)
{
    MPI_Group wg, lg, rg;
    MPI_Comm ic;
    int lr[1][3] = {{first_of(color), first_of(color) + group_size(color) - 1, 1}};
    int rr[1][3] = {{first_of(!color), first_of(!color) + group_size(!color) - 1, 1}};
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_range_incl(wg, 1, lr, &lg));
    MPI_OK(MPI_Group_range_incl(wg, 1, rr, &rg));
    MPI_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "rail://test/inter", MPI_INFO_NULL,
                                            MPI_ERRORS_ARE_FATAL, &ic));
    check_inter(ic, color, rank - first_of(color));
    gather_to_remote_zero(ic);
    test_merge(ic);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));
}

static void test_errors(MPI_Comm local)
{
    MPI_Comm ic;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &ic), MPI_ERR_COMM);
    MPI_FAILS(MPI_Intercomm_create(local, 99, MPI_COMM_WORLD, 0, 1, &ic), MPI_ERR_RANK);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    need_procs(2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int comms = live("comm");
    nlow = size / 2;
    color = rank >= nlow;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
    int lrank;
    MPI_OK(MPI_Comm_rank(local, &lrank));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, first_of(!color), 99, &ic));
    check_inter(ic, color, lrank);
    gather_to_remote_zero(ic);
    test_derived(ic, lrank);
    test_merge(ic);
    MPI_OK(MPI_Comm_free(&ic));
    /* Leaders other than rank 0, the peer being a dup of WORLD. */
    MPI_Comm peer;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
    int ll = group_size(color) - 1, rl = first_of(!color) + group_size(!color) - 1;
    MPI_OK(MPI_Intercomm_create(local, ll, peer, rl, 7, &ic));
    check_inter(ic, color, lrank);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&peer));
    test_from_groups();
    test_errors(local);
    MPI_OK(MPI_Comm_free(&local));
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    MPI_Finalize();
    return 0;
}
