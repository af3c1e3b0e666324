/* MPI_Comm_split (colors, keys, MPI_UNDEFINED), MPI_Comm_split_type
 * (SHARED, HW_GUIDED, HW_UNGUIDED, RESOURCE_GUIDED), MPI_Comm_create,
 * MPI_Comm_create_group, with known answers and a message ring on each new
 * communicator. */
#include "comm_test.h"

static int rank, size;

/* Rank in the split communicator of world rank r, computed by hand:
 * the processes of its color ordered by (key, world rank). */
static int expected_rank(int r, int (*color)(int), int (*key)(int), int *n)
{
    int pos = 0;
    *n = 0;
    for (int q = 0; q < size; q++) {
        if (color(q) != color(r))
            continue;
        (*n)++;
        if (key(q) < key(r) || (key(q) == key(r) && q < r))
            pos++;
    }
    return pos;
}

static int color_mod3(int r) { return r % 3; }
static int key_rev(int r) { return size - r; }
static int color_undef(int r) { return r % 4 == 1 ? MPI_UNDEFINED : r / 2; }
static int key_same(int r) { (void)r; return 7; }
static int color_one(int r) { (void)r; return 5; }
static int key_mod2(int r) { return r % 2; }

static void check_split(int (*color)(int), int (*key)(int))
{
    MPI_Comm c;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color(rank), key(rank), &c));
    if (color(rank) == MPI_UNDEFINED) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
        return;
    }
    int n, want = expected_rank(rank, color, key, &n), r, s;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(r == want && s == n, "split: rank %d size %d, expected %d of %d", r, s, want, n);
    /* The group maps back to the world ranks of the color. */
    MPI_Group g, gw;
    MPI_OK(MPI_Comm_group(c, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    for (int i = 0; i < s; i++) {
        int w;
        MPI_OK(MPI_Group_translate_ranks(g, 1, &i, gw, &w));
        int n2;
        CHECK(color(w) == color(rank) && expected_rank(w, color, key, &n2) == i,
              "member %d of the split is world rank %d", i, w);
    }
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&gw));
    ring_check(c);
    MPI_OK(MPI_Comm_free(&c));
}

static void test_split(void)
{
    check_split(color_mod3, key_rev);
    check_split(color_undef, key_same);
    check_split(color_one, key_mod2);
    /* Split of a split. */
    MPI_Comm a, b;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &a));
    int ra, sa, rb, sb;
    MPI_OK(MPI_Comm_rank(a, &ra));
    MPI_OK(MPI_Comm_size(a, &sa));
    MPI_OK(MPI_Comm_split(a, ra < sa / 2, -ra, &b));
    MPI_OK(MPI_Comm_rank(b, &rb));
    MPI_OK(MPI_Comm_size(b, &sb));
    int lo = sa / 2, want_size = ra < lo ? lo : sa - lo;
    CHECK(sb == want_size, "split of split: size %d want %d", sb, want_size);
    ring_check(b);
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free(&a));
}

static void split_hint(MPI_Comm c, char *val, int *flag)
{
    MPI_Info info;
    MPI_OK(MPI_Comm_get_info(c, &info));
    MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", 63, val, flag));
    MPI_OK(MPI_Info_free(&info));
}

static void guided(int type, const char *key, const char *value, MPI_Comm *c)
{
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, key, value));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, type, rank, info, c));
    MPI_OK(MPI_Info_free(&info));
}

static void test_split_type(void)
{
    MPI_Comm c;
    int r, s, flag;
    char val[64];
    /* Every process of these tests runs on one node. */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c));
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(s == size && r == size - 1 - rank, "SHARED: rank %d size %d", r, s);
    ring_check(c);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED split type");
    guided(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "mpi_shared_memory", &c);
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(s == size, "HW_GUIDED mpi_shared_memory: size %d", s);
    split_hint(c, val, &flag);
    CHECK(flag && strcmp(val, "mpi_shared_memory") == 0, "hint of the new communicator");
    MPI_OK(MPI_Comm_free(&c));
    guided(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "hwloc://Machine", &c);
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(s == size, "HW_GUIDED Machine: size %d", s);
    ring_check(c);
    MPI_OK(MPI_Comm_free(&c));
    guided(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "no_such_resource", &c);
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unknown resource type");
    guided(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "PU", &c);
    if (c != MPI_COMM_NULL) {   /* bound to one PU: the processes sharing it */
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_size(c, &s));
        CHECK(s < size, "HW_UNGUIDED gave %d of %d processes (must be a strict subset)", s, size);
        split_hint(c, val, &flag);
        CHECK(flag, "HW_UNGUIDED communicator without mpi_hw_resource_type");
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    guided(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://SELF", &c);
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(s == 1, "RESOURCE_GUIDED mpi://SELF: size %d", s);
    MPI_OK(MPI_Comm_free(&c));
    guided(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://WORLD", &c);
    MPI_OK(MPI_Comm_size(c, &s));
    CHECK(s == size, "RESOURCE_GUIDED mpi://WORLD: size %d", s);
    MPI_OK(MPI_Comm_free(&c));
}

/* Comm_create with the even ranks in reverse order; create_group with the
 * odd ones. */
static void test_create(void)
{
    MPI_Group gw, g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    int n = (size + 1) / 2, ranks[64];
    for (int i = 0; i < n; i++)
        ranks[i] = 2 * (n - 1 - i);
    MPI_OK(MPI_Group_incl(gw, n, ranks, &g));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "Comm_create: a non-member got a communicator");
    } else {
        int r, s;
        MPI_OK(MPI_Comm_rank(c, &r));
        MPI_OK(MPI_Comm_size(c, &s));
        CHECK(s == n && r == n - 1 - rank / 2, "Comm_create: rank %d size %d", r, s);
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&g));
    int m = size / 2;
    for (int i = 0; i < m; i++)
        ranks[i] = 2 * i + 1;
    MPI_OK(MPI_Group_incl(gw, m, ranks, &g));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 42, &c));
    if (rank % 2 == 0) {
        CHECK(c == MPI_COMM_NULL, "Comm_create_group: a non-member got a communicator");
    } else {
        int r, s;
        MPI_OK(MPI_Comm_rank(c, &r));
        MPI_OK(MPI_Comm_size(c, &s));
        CHECK(s == m && r == rank / 2, "Comm_create_group: rank %d size %d", r, s);
        ring_check(c);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&g));
    /* MPI_GROUP_EMPTY: nobody gets a communicator. */
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "Comm_create with MPI_GROUP_EMPTY");
    MPI_OK(MPI_Group_free(&gw));
}

static void test_errors(void)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG);
    MPI_FAILS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    /* A group that is not a subgroup of the communicator's. */
    if (size > 1) {
        MPI_Group gs;
        MPI_Comm half;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0, 0, &half));
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gs));
        MPI_OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
        MPI_FAILS(MPI_Comm_create(half, gs, &c), MPI_ERR_GROUP);
        MPI_FAILS(MPI_Comm_create_group(half, gs, 1, &c), MPI_ERR_GROUP);
        MPI_OK(MPI_Group_free(&gs));
        MPI_OK(MPI_Comm_free(&half));
    }
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 processes");
    int comms = live("comm");
    test_split();
    test_split_type();
    test_create();
    test_errors();
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    MPI_Finalize();
    return 0;
}
