/* Nonblocking against blocking collectives, size after size in one process.
 *
 *   mpirun -n 2 nbc_ratio [-o allreduce|reduce|bcast] [-s MIN:MAX] [-t TRIALS] [-T MS]
 *
 * For every size from MIN to MAX (powers of two, bytes of MPI_INT, default
 * 8:4M) it times the blocking call and the nonblocking call followed by
 * MPI_Wait, alternating trial by trial so that the load of a shared machine
 * hits both alike, and prints the best trial of each and their ratio.  The
 * sizes run in ascending order in one process, as an application's would:
 * state one call leaves behind (a schedule, a buffer, a choice) shows as a
 * ratio that changes with the sizes that came before.  The last columns
 * are rank 0's minor page faults per call in each form (getrusage): memory
 * that a call takes fresh and touches, a cost that the load of the machine
 * does not blur.  Every result is checked.  Plain MPI and POSIX only, so
 * any MPI's mpicc builds it. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_ALLREDUCE, OP_REDUCE, OP_BCAST };

typedef struct {
    int op, rank, np, trials;
    double target_ms;
    size_t min, max;
    int *in, *out;
} nbr_t;

static size_t nbr_size(const char *s)
{
    char *e;
    size_t v = strtoull(s, &e, 10);
    if (*e == 'K' || *e == 'k')
        v <<= 10;
    else if (*e == 'M' || *e == 'm')
        v <<= 20;
    return v;
}

static void nbr_args(nbr_t *b, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "-o"))
            b->op = !strcmp(v, "reduce") ? OP_REDUCE : !strcmp(v, "bcast") ? OP_BCAST
                                                                           : OP_ALLREDUCE;
        else if (!strcmp(a, "-s")) {
            b->min = nbr_size(v);
            const char *c = strchr(v, ':');
            b->max = c ? nbr_size(c + 1) : b->min;
        }
        else if (!strcmp(a, "-t"))
            b->trials = atoi(v);
        else if (!strcmp(a, "-T"))
            b->target_ms = atof(v);
    }
    if (b->min < sizeof(int))
        b->min = sizeof(int);
}

/* One call of the operation, blocking or not, on n ints. */
static void nbr_call(nbr_t *b, int n, int nonblocking)
{
    MPI_Request r;
    switch (b->op) {
    case OP_ALLREDUCE:
        if (nonblocking)
            MPI_Iallreduce(b->in, b->out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        else
            MPI_Allreduce(b->in, b->out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_REDUCE:
        if (nonblocking)
            MPI_Ireduce(b->in, b->out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r);
        else
            MPI_Reduce(b->in, b->out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    default:
        if (nonblocking)
            MPI_Ibcast(b->out, n, MPI_INT, 0, MPI_COMM_WORLD, &r);
        else
            MPI_Bcast(b->out, n, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    }
    if (nonblocking)
        MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Fill the inputs for a check, run once, compare with what every rank
 * knows the answer must be. */
static void nbr_check(nbr_t *b, int n, int nonblocking, int seed)
{
    for (int i = 0; i < n; i++) {
        b->in[i] = (b->rank + 1) * (i % 97 + seed);
        b->out[i] = b->op == OP_BCAST && b->rank == 0 ? i ^ seed : -1;
    }
    nbr_call(b, n, nonblocking);
    if (b->op == OP_REDUCE && b->rank != 0)
        return;
    for (int i = 0; i < n; i++) {
        int want = b->op == OP_BCAST ? i ^ seed : (i % 97 + seed) * b->np * (b->np + 1) / 2;
        if (b->out[i] != want) {
            fprintf(stderr, "nbc_ratio: rank %d, %s %d ints, element %d: %d, want %d\n",
                    b->rank, nonblocking ? "nonblocking" : "blocking", n, i, b->out[i], want);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

static long nbr_minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Seconds per call over iters calls, the slowest rank's; *faults: this
 * process's minor page faults per call. */
static double nbr_time(nbr_t *b, int n, int nonblocking, int iters, double *faults)
{
    MPI_Barrier(MPI_COMM_WORLD);
    long f = nbr_minflt();
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        nbr_call(b, n, nonblocking);
    t = (MPI_Wtime() - t) / iters;
    *faults = (double)(nbr_minflt() - f) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static void nbr_size_run(nbr_t *b, size_t size)
{
    int n = (int)(size / sizeof(int));
    nbr_check(b, n, 0, 3);
    nbr_check(b, n, 1, 5);
    /* iterations for a trial of about target_ms, from the slower form */
    double flt[2] = { 0, 0 }, f;
    double one = nbr_time(b, n, 1, 2, &f), two = nbr_time(b, n, 0, 2, &f);
    double per = one > two ? one : two;
    int iters = (int)(b->target_ms / 1e3 / (per > 1e-7 ? per : 1e-7));
    iters = iters < 2 ? 2 : iters > 100000 ? 100000 : iters;
    double best[2] = { 1e30, 1e30 };
    for (int t = 0; t < b->trials; t++)
        for (int nb = 0; nb < 2; nb++) {
            double x = nbr_time(b, n, nb, iters, &f);
            best[nb] = x < best[nb] ? x : best[nb];
            flt[nb] += f / b->trials;
        }
    nbr_check(b, n, 1, 7);
    if (b->rank == 0)
        printf("%9zu %12.2f %12.2f %8.2f %9.1f %9.1f\n", size, best[0] * 1e6, best[1] * 1e6,
               best[1] / best[0], flt[0], flt[1]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    nbr_t b = { .op = OP_ALLREDUCE, .trials = 5, .target_ms = 20, .min = 8, .max = 4 << 20 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.np);
    nbr_args(&b, argc, argv);
    b.in = malloc(b.max);
    b.out = malloc(b.max);
    if (!b.in || !b.out)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(b.in, 1, b.max);
    memset(b.out, 1, b.max);
    static const char *names[] = { "allreduce", "reduce", "bcast" };
    if (b.rank == 0)
        printf("# nbc_ratio %s np=%d (MPI_INT, best of %d trials)\n# %7s %12s %12s %8s %9s %9s\n",
               names[b.op], b.np, b.trials, "bytes", "blocking_us", "nonblock_us", "ratio",
               "flt_blk", "flt_nb");
    for (size_t s = b.min; s <= b.max; s *= 2)
        nbr_size_run(&b, s);
    free(b.in);
    free(b.out);
    MPI_Finalize();
    return 0;
}
