/* Groups: incl, excl, range_incl/excl, union, intersection, difference,
 * translate_ranks, compare, rank, size, free, MPI_GROUP_EMPTY, checked
 * against a plain-array reference; and the error classes. */
#include "comm_test.h"

static int rank, size;
static MPI_Group world;

/* Members (world ranks) of g. */
static int members(MPI_Group g, int *out)
{
    int n;
    MPI_OK(MPI_Group_size(g, &n));
    int idx[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, out));
    return n;
}

static void expect(MPI_Group g, const int *want, int n, const char *what)
{
    int got[64], m = members(g, got), r, my = MPI_UNDEFINED;
    CHECK(m == n, "%s: %d members, expected %d", what, m, n);
    for (int i = 0; i < n; i++) {
        CHECK(got[i] == want[i], "%s: member %d is %d, expected %d", what, i, got[i], want[i]);
        if (want[i] == rank)
            my = i;
    }
    MPI_OK(MPI_Group_rank(g, &r));
    CHECK(r == my, "%s: Group_rank %d, expected %d", what, r, my);
}

static bool in(const int *a, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (a[i] == x)
            return true;
    return false;
}

static void test_incl_excl(void)
{
    MPI_Group g, h;
    int ranks[64], want[64] = {0}, n = 0;
    for (int i = size - 1; i >= 0; i -= 2)   /* odd positions from the top, reversed */
        ranks[n++] = i;
    MPI_OK(MPI_Group_incl(world, n, ranks, &g));
    expect(g, ranks, n, "incl");
    MPI_OK(MPI_Group_excl(world, n, ranks, &h));
    int m = 0;
    for (int i = 0; i < size; i++)
        if (!in(ranks, n, i))
            want[m++] = i;
    expect(h, want, m, "excl");
    /* union, intersection, difference against the reference */
    MPI_Group u, x, d;
    MPI_OK(MPI_Group_union(h, g, &u));
    int k = 0;
    for (int i = 0; i < m; i++)
        want[k++] = want[i];
    for (int i = 0; i < n; i++)
        want[k++] = ranks[i];
    expect(u, want, k, "union");
    MPI_OK(MPI_Group_intersection(g, world, &x));
    expect(x, ranks, n, "intersection");
    int res;
    MPI_OK(MPI_Group_compare(x, g, &res));
    CHECK(res == MPI_IDENT, "compare(intersection, g) = %d", res);
    bool ordered = true;
    for (int i = 0; i < k; i++)
        ordered = ordered && want[i] == i;
    MPI_OK(MPI_Group_compare(u, world, &res));
    CHECK(res == (ordered ? MPI_IDENT : MPI_SIMILAR), "compare(union, world) = %d", res);
    MPI_OK(MPI_Group_difference(world, g, &d));
    expect(d, want, m, "difference");
    MPI_OK(MPI_Group_compare(d, h, &res));
    CHECK(res == MPI_IDENT, "compare(difference, excl) = %d", res);
    MPI_Group e;
    MPI_OK(MPI_Group_difference(g, g, &e));
    CHECK(e == MPI_GROUP_EMPTY, "empty difference is not MPI_GROUP_EMPTY");
    MPI_OK(MPI_Group_size(e, &k));
    CHECK(k == 0, "size of MPI_GROUP_EMPTY %d", k);
    MPI_OK(MPI_Group_rank(e, &k));
    CHECK(k == MPI_UNDEFINED, "rank in MPI_GROUP_EMPTY %d", k);
    MPI_OK(MPI_Group_free(&e));
    MPI_Group groups[] = {g, h, u, x, d};
    for (int i = 0; i < 5; i++)
        MPI_OK(MPI_Group_free(&groups[i]));
}

static void test_ranges(void)
{
    MPI_Group g, h;
    /* (size-1, 0, -2) and (1, 1, 1) when they do not overlap */
    int ranges[2][3] = {{size - 1, 0, -2}, {0, 0, 1}};
    int nr = 1, want[64], n = 0;
    for (int i = size - 1; i >= 0; i -= 2)
        want[n++] = i;
    if (!in(want, n, 0)) {
        nr = 2;
        want[n++] = 0;
    }
    MPI_OK(MPI_Group_range_incl(world, nr, ranges, &g));
    expect(g, want, n, "range_incl");
    MPI_OK(MPI_Group_range_excl(world, nr, ranges, &h));
    int m = 0, rest[64];
    for (int i = 0; i < size; i++)
        if (!in(want, n, i))
            rest[m++] = i;
    expect(h, rest, m, "range_excl");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&h));
}

static void test_translate(void)
{
    MPI_Group rev;
    int ranks[64], out[64], in_[64];
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_OK(MPI_Group_incl(world, size, ranks, &rev));
    for (int i = 0; i < size; i++)
        in_[i] = i;
    in_[size] = MPI_PROC_NULL;
    MPI_OK(MPI_Group_translate_ranks(rev, size + 1, in_, world, out));
    for (int i = 0; i < size; i++)
        CHECK(out[i] == size - 1 - i, "translate %d -> %d", i, out[i]);
    CHECK(out[size] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[size]);
    MPI_Group self;
    MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    MPI_OK(MPI_Group_translate_ranks(world, size, in_, self, out));
    for (int i = 0; i < size; i++)
        CHECK(out[i] == (i == rank ? 0 : MPI_UNDEFINED), "translate to SELF: %d -> %d", i, out[i]);
    int res;
    MPI_OK(MPI_Group_compare(rev, world, &res));
    CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "compare(reversed, world) = %d", res);
    MPI_OK(MPI_Group_compare(self, world, &res));
    CHECK(res == (size > 1 ? MPI_UNEQUAL : MPI_IDENT), "compare(self, world) = %d", res);
    MPI_OK(MPI_Group_free(&self));
    MPI_OK(MPI_Group_free(&rev));
}

static void test_errors(void)
{
    MPI_Group g;
    int two[2] = {0, 0}, bad[1] = {size}, out[2];
    int zero_stride[1][3] = {{0, 0, 0}}, wrong_dir[1][3] = {{0, size - 1, -1}};
    int outside[1][3] = {{0, size, 1}};
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Group_incl(world, 1, bad, &g), MPI_ERR_RANK);
    if (size > 1)
        MPI_FAILS(MPI_Group_incl(world, 2, two, &g), MPI_ERR_RANK);
    MPI_FAILS(MPI_Group_excl(world, 1, bad, &g), MPI_ERR_RANK);
    MPI_FAILS(MPI_Group_incl(world, -1, two, &g), MPI_ERR_ARG);
    MPI_FAILS(MPI_Group_range_incl(world, 1, zero_stride, &g), MPI_ERR_ARG);
    if (size > 1)
        MPI_FAILS(MPI_Group_range_incl(world, 1, wrong_dir, &g), MPI_ERR_ARG);
    MPI_FAILS(MPI_Group_range_excl(world, 1, outside, &g), MPI_ERR_RANK);
    MPI_FAILS(MPI_Group_translate_ranks(world, 1, bad, world, out), MPI_ERR_RANK);
    MPI_Group null = MPI_GROUP_NULL;
    MPI_FAILS(MPI_Group_free(&null), MPI_ERR_GROUP);
    MPI_FAILS(MPI_Group_size(MPI_GROUP_NULL, out), MPI_ERR_GROUP);
    MPI_Group freed;
    MPI_OK(MPI_Group_incl(world, 0, two, &freed));   /* empty: MPI_GROUP_EMPTY */
    MPI_OK(MPI_Group_free(&freed));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size < 64, "test written for fewer than 64 processes");
    int groups = live("group");
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    test_incl_excl();
    test_ranges();
    test_translate();
    test_errors();
    MPI_OK(MPI_Group_free(&world));
    CHECK(live("group") == groups, "%d groups left (were %d)", live("group"), groups);
    MPI_Finalize();
    return 0;
}
