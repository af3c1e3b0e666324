/* MPI_T control variables while MPI runs: every cvar whose scope says it is
 * writable after MPI_Init is written, and its effect seen (what this process
 * prints, on stderr caught in a file; the algorithm a collective takes; the
 * check of a collective's arguments).  Every other one reports
 * MPI_T_SCOPE_CONSTANT and refuses the write. */
#include "mpit_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rank, size;
static int saved_fd = -1;

/* Catch what this process writes on stderr from now to log_end(), in a
 * temporary file removed at once (nothing is left if the test dies). */
static void log_begin(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/rail-mpit-dyn-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp %s", path);
    unlink(path);
    fflush(stderr);
    saved_fd = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* What was caught (static buffer); stderr is restored. */
static const char *log_end(void)
{
    static char text[1 << 16];
    fflush(stderr);
    ssize_t n = lseek(2, 0, SEEK_SET) == 0 ? read(2, text, sizeof(text) - 1) : 0;
    text[n > 0 ? n : 0] = '\0';
    dup2(saved_fd, 2);
    close(saved_fd);
    return text;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void write_int(const char *name, int v)
{
    MPI_T_cvar_handle h;
    int count;
    MPI_OK(MPI_T_cvar_handle_alloc(t_cvar(name), NULL, &h, &count));
    MPI_OK(MPI_T_cvar_write(h, &v));
    int back = -1;
    MPI_OK(MPI_T_cvar_read(h, &back));
    CHECK(back == v, "%s: wrote %d, read %d", name, v, back);
    MPI_OK(MPI_T_cvar_handle_free(&h));
}

/* mpi_show_errors: an error returned to the caller is printed too. */
static void effect_show_errors(void)
{
    int r;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    write_int("mpi_show_errors", 1);
    log_begin();
    CHECK(MPI_Comm_rank(MPI_COMM_NULL, &r) != MPI_SUCCESS, "Comm_rank(COMM_NULL) succeeded");
    const char *out = log_end();
    CHECK(strstr(out, "MPI_Comm_rank"), "mpi_show_errors 1: printed '%s'", out);
    write_int("mpi_show_errors", 0);
    log_begin();
    CHECK(MPI_Comm_rank(MPI_COMM_NULL, &r) != MPI_SUCCESS, "Comm_rank(COMM_NULL) succeeded");
    out = log_end();
    CHECK(!strstr(out, "MPI_Comm_rank"), "mpi_show_errors 0: printed '%s'", out);
}

/* coll_verbose: the components of a new communicator are printed. */
static void effect_coll_verbose(void)
{
    MPI_Comm c;
    write_int("coll_verbose", 2);
    log_begin();
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    const char *out = log_end();
    write_int("coll_verbose", 0);
    CHECK(strstr(out, "coll: communicator") && strstr(out, "bcast"),
          "coll_verbose 2: printed '%s'", out);
    MPI_OK(MPI_Comm_free(&c));
}

/* One call of op on comm with small buffers. */
static void run_op(const char *op, MPI_Comm comm)
{
    int s[64] = {0}, r[64 * 8] = {0}, counts[64];
    for (int i = 0; i < size; i++)
        counts[i] = 1;
    if (!strcmp(op, "allgather")) MPI_OK(MPI_Allgather(s, 1, MPI_INT, r, 1, MPI_INT, comm));
    if (!strcmp(op, "allreduce")) MPI_OK(MPI_Allreduce(s, r, 64, MPI_INT, MPI_SUM, comm));
    if (!strcmp(op, "alltoall")) MPI_OK(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm));
    if (!strcmp(op, "barrier")) MPI_OK(MPI_Barrier(comm));
    if (!strcmp(op, "bcast")) MPI_OK(MPI_Bcast(s, 64, MPI_INT, 0, comm));
    if (!strcmp(op, "gather")) MPI_OK(MPI_Gather(s, 1, MPI_INT, r, 1, MPI_INT, 0, comm));
    if (!strcmp(op, "reduce")) MPI_OK(MPI_Reduce(s, r, 64, MPI_INT, MPI_SUM, 0, comm));
    if (!strcmp(op, "reduce_scatter"))
        MPI_OK(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, comm));
    if (!strcmp(op, "reduce_scatter_block"))
        MPI_OK(MPI_Reduce_scatter_block(s, r, 1, MPI_INT, MPI_SUM, comm));
    if (!strcmp(op, "scatter")) MPI_OK(MPI_Scatter(s, 1, MPI_INT, r, 1, MPI_INT, 0, comm));
}

/* Longer names first: a parameter's name is matched by prefix. */
static const char *const tuned_ops[] = {"allgather", "allreduce", "alltoall", "barrier", "bcast",
                                        "gather", "reduce_scatter_block", "reduce_scatter",
                                        "reduce", "scatter"};

/* coll_tuned_<op>_<alg>_<segsize|window>: with alg forced, the next call
 * of op runs with the value written (coll_tuned_verbose 2 prints it). */
static void effect_tuned_param(const char *cvar)
{
    const char *rest = cvar + strlen("coll_tuned_");
    for (size_t i = 0; i < sizeof(tuned_ops) / sizeof(tuned_ops[0]); i++) {
        size_t n = strlen(tuned_ops[i]);
        if (strncmp(rest, tuned_ops[i], n) != 0 || rest[n] != '_')
            continue;
        char alg[64], forcing[96], want[96];
        snprintf(alg, sizeof(alg), "%.*s", (int)(strrchr(rest, '_') - rest - n - 1), rest + n + 1);
        snprintf(forcing, sizeof(forcing), "coll_tuned_%s_algorithm", tuned_ops[i]);
        write_int(forcing, t_cvar_choice(forcing, alg));
        MPI_T_cvar_handle h;
        int count;
        unsigned long long v = 1234, old;
        MPI_OK(MPI_T_cvar_handle_alloc(t_cvar(cvar), NULL, &h, &count));
        MPI_OK(MPI_T_cvar_read(h, &old));
        MPI_OK(MPI_T_cvar_write(h, &v));
        log_begin();
        run_op(tuned_ops[i], MPI_COMM_WORLD);
        const char *out = log_end();
        snprintf(want, sizeof(want), "%s (parameter 1234)", alg);
        CHECK(size == 1 || strstr(out, want), "%s = 1234: the call printed '%s'", cvar, out);
        MPI_OK(MPI_T_cvar_write(h, &old));
        MPI_OK(MPI_T_cvar_handle_free(&h));
        write_int(forcing, t_cvar_choice(forcing, "auto"));
        return;
    }
    CHECK(0, "%s: no tuned operation of that name", cvar);
}

/* coll_tuned_verbose and coll_tuned_<op>_algorithm: the next call of op
 * takes (or says it cannot take) the algorithm written.  The job runs with
 * coll=tuned,basic (written before MPI_Init), so tuned serves every op. */
static void effect_tuned(void)
{
    write_int("coll_tuned_verbose", 2);
    for (size_t i = 0; i < sizeof(tuned_ops) / sizeof(tuned_ops[0]); i++) {
        char name[96];
        snprintf(name, sizeof(name), "coll_tuned_%s_algorithm", tuned_ops[i]);
        MPI_T_enum e;
        int num;
        MPI_OK(MPI_T_cvar_get_info(t_cvar(name), NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL,
                                   NULL));
        MPI_OK(MPI_T_enum_get_info(e, &num, NULL, NULL));
        for (int k = 1; k < num; k++) {   /* item 0 is "auto" */
            char alg[128];
            int v, len = sizeof(alg);
            MPI_OK(MPI_T_enum_get_item(e, k, &v, alg, &len));
            write_int(name, v);
            log_begin();
            run_op(tuned_ops[i], MPI_COMM_WORLD);
            const char *out = log_end();
            /* one process: the framework may serve the call without tuned */
            CHECK(size == 1 || strstr(out, alg), "%s = %s: the call printed '%s'", name, alg, out);
        }
        write_int(name, t_cvar_choice(name, "auto"));
    }
    int num;
    MPI_OK(MPI_T_cvar_get_num(&num));
    for (int i = 0; i < num; i++) {
        const char *name = t_cvar_name(i);
        if (strncmp(name, "coll_tuned_", 11) == 0 &&
            (ends_with(name, "_segsize") || ends_with(name, "_window")))
            effect_tuned_param(name);
    }
    write_int("coll_tuned_verbose", 0);
    log_begin();
    run_op("bcast", MPI_COMM_WORLD);
    const char *out = log_end();
    CHECK(!strstr(out, "coll tuned"), "coll_tuned_verbose 0: printed '%s'", out);
}

/* coll_check: a bcast whose counts differ fails on every process, the root
 * included, instead of moving data. */
static void effect_coll_check(void)
{
    if (size == 1)
        return;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    write_int("coll_check", 1);
    int buf[2] = {0, 0};
    int rc = MPI_Bcast(buf, rank == 0 ? 1 : 2, MPI_INT, 0, c);
    CHECK(rc != MPI_SUCCESS, "coll_check 1: a bcast with mismatched counts succeeded");
    write_int("coll_check", 0);
    MPI_OK(MPI_Bcast(buf, 2, MPI_INT, 0, c));
    MPI_OK(MPI_Comm_free(&c));
}

/* cvar at level: a dup of base prints said; at 0 it does not.  pml_verbose
 * 2 prints every communicator the pml sets up; coll_<component>_verbose 3
 * why the component declines one (MPI_COMM_SELF: han, one node; sm, one
 * process; needs the default component list, MPIT_DYN_ALL_COLL=1). */
static void effect_verbose_on_dup(const char *cvar, int level, MPI_Comm base, const char *said)
{
    for (int on = 1; on >= 0; on--) {
        MPI_Comm c;
        write_int(cvar, on ? level : 0);
        log_begin();
        MPI_OK(MPI_Comm_dup(base, &c));
        const char *out = log_end();
        write_int(cvar, 0);
        CHECK(on ? strstr(out, said) != NULL : strstr(out, said) == NULL, "%s %d: printed '%s'",
              cvar, on ? level : 0, out);
        MPI_OK(MPI_Comm_free(&c));
    }
}

static unsigned long long kernel_blocks(void)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    MPI_OK(MPI_T_pvar_session_create(&s));
    MPI_OK(MPI_T_pvar_handle_alloc(s, t_pvar("progress_kernel_blocks", MPI_T_PVAR_CLASS_COUNTER),
                                   NULL, &h, &count));
    MPI_OK(MPI_T_pvar_read(s, h, &v));
    MPI_OK(MPI_T_pvar_handle_free(s, &h));
    MPI_OK(MPI_T_pvar_session_free(&s));
    return v;
}

static const char *const progress_counts[] = {
    "progress_spin_count", "progress_yield_count", "progress_spin_count_oversub",
    "progress_yield_count_oversub", "progress_spin_count_kernel",
};

/* Rank 1 waits 100 ms for rank 0's message: with every spin and yield
 * count 0 and progress_idle_sleep_ms 0 the wait blocks in the kernel;
 * with counts of 10^9 and progress_idle_sleep_ms -1 it never does. */
static unsigned long long blocks_in_wait(int count, int idle_ms)
{
    for (size_t i = 0; i < sizeof(progress_counts) / sizeof(progress_counts[0]); i++)
        write_int(progress_counts[i], count);
    write_int("progress_idle_sleep_ms", idle_ms);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long before = kernel_blocks();
    int v = 7;
    if (rank == 0) {
        usleep(100 * 1000);
        MPI_OK(MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    unsigned long long n = kernel_blocks() - before;
    for (size_t i = 0; i < sizeof(progress_counts) / sizeof(progress_counts[0]); i++)
        write_int(progress_counts[i], 0);   /* the barrier below may sleep */
    write_int("progress_idle_sleep_ms", 100);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    return n;
}

static void effect_progress(void)
{
    if (size == 1)
        return;
    unsigned long long never = blocks_in_wait(1000000000, -1);
    unsigned long long soon = blocks_in_wait(0, 0);
    if (rank == 1) {
        CHECK(never == 0, "progress counts 1e9, idle sleep -1: the wait blocked %llu times", never);
        CHECK(soon > 0, "progress counts 0, idle sleep 0: the wait never blocked");
    }
}

/* Every cvar: writable scope only for those whose effect is checked above. */
static void check_scopes(void)
{
    static const char *const checked[] = {
        "mpi_show_errors", "coll_verbose", "coll_check", "coll_tuned_verbose", "pml_verbose",
        "coll_han_verbose", "coll_sm_verbose", "progress_spin_count", "progress_yield_count",
        "progress_spin_count_oversub", "progress_yield_count_oversub",
        "progress_spin_count_kernel", "progress_idle_sleep_ms"};
    int num;
    MPI_OK(MPI_T_cvar_get_num(&num));
    for (int i = 0; i < num; i++) {
        char name[256];
        int len = sizeof(name), scope;
        MPI_OK(MPI_T_cvar_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
        bool known = strncmp(name, "coll_tuned_", 11) == 0 &&
                     (ends_with(name, "_algorithm") || ends_with(name, "_segsize") ||
                      ends_with(name, "_window"));
        for (size_t k = 0; k < sizeof(checked) / sizeof(checked[0]); k++)
            known |= strcmp(name, checked[k]) == 0;
        if (known) {
            CHECK(scope == MPI_T_SCOPE_LOCAL || scope == MPI_T_SCOPE_ALL_EQ, "%s: scope %d", name,
                  scope);
            continue;
        }
        CHECK(scope == MPI_T_SCOPE_CONSTANT, "%s: scope %d, but no effect is checked", name,
              scope);
        MPI_T_cvar_handle h;
        int count;
        MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        char *buf = calloc((size_t)count, 8);
        MPI_OK(MPI_T_cvar_read(h, buf));
        MPI_RETURNS(MPI_T_cvar_write(h, buf), MPI_T_ERR_CVAR_SET_NOT_NOW);
        free(buf);
        MPI_OK(MPI_T_cvar_handle_free(&h));
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    /* MPIT_DYN_ALL_COLL=1: the default components (han and sm declining
     * MPI_COMM_SELF); else tuned serves every operation of the tuned effects */
    const char *all = getenv("MPIT_DYN_ALL_COLL");
    bool all_coll = all && strcmp(all, "1") == 0;
    if (!all_coll) {
        MPI_T_cvar_handle h;
        int count;
        MPI_OK(MPI_T_cvar_handle_alloc(t_cvar("coll"), NULL, &h, &count));
        MPI_OK(MPI_T_cvar_write(h, "tuned,basic"));
        MPI_OK(MPI_T_cvar_handle_free(&h));
    }
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_scopes();
    effect_show_errors();
    effect_coll_verbose();
    effect_verbose_on_dup("pml_verbose", 2, MPI_COMM_WORLD, "pml: communicator");
    effect_progress();
    if (all_coll) {
        effect_verbose_on_dup("coll_han_verbose", 3, MPI_COMM_SELF, "coll han: not for");
        effect_verbose_on_dup("coll_sm_verbose", 3, MPI_COMM_SELF, "coll sm: not for");
    } else {
        effect_tuned();
        effect_coll_check();
    }
    int rc = check_mpi_finalize("mpit_cvar_dynamic");
    MPI_OK(MPI_T_finalize());
    return rc;
}
