/*
 * The checks of every test program: conditions that must hold, each
 * failure printed with its file and line (and, in a test of several
 * processes, the rank), failures counted, a last line that sums them up,
 * and skips (automake's exit status 77, with the reason).
 *
 *   CHECK(cond, fmt, ...)   must hold, else the failure is printed and the
 *                           test ends: exit 1 (an MPI test: MPI_Abort);
 *   CHECK_RC(expr, want)    an int-valued call that must return want, else
 *                           as CHECK; CHECK_OK(expr): must return 0
 *                           (MPI_SUCCESS, the library's internal success);
 *   EXPECT(cond, fmt, ...)  must hold, else the failure is printed and
 *                           counted and the test goes on; its value is
 *                           whether cond held (`if (!EXPECT(...)) return 1;`);
 *   FAIL(fmt, ...)          a failure found otherwise, counted as EXPECT's;
 *   check_case(name, ok)    the result of a named case ("ok   name" or
 *                           "FAIL name"), counted;
 *   check_report(name)      the last line ("name: passed", or what failed)
 *                           and main's exit status (1 when anything failed);
 *   check_skip(fmt, ...)    the test cannot run here: "SKIP: reason" and
 *                           exit 77;
 *   check_skip_part(fmt, ...)  a part of the test cannot run here:
 *                           "SKIP: part: reason", and the test goes on.
 * A skip is never a pass: test/run-test.sh and test/skipped.sh list every
 * SKIP line, by test, variant and rank count, at the end of `make check`.
 *
 * The message, a printf format and its arguments, may be left out:
 * CHECK(p != NULL).  A failure reads
 *   FAIL: [rank 2] test/p2p/p2p_basic.c:120: got == want: message
 * on stderr (or check_output, where the test sets it).  The counts are
 * the whole program's, whichever of its files made the checks.
 *
 * An MPI test defines CHECK_MPI before including this header: a failure
 * names its rank in MPI_COMM_WORLD (before MPI_Init and after
 * MPI_Finalize, or with sessions only, the launcher's PMIX_RANK), CHECK
 * aborts the job while MPI is initialised, and the test has
 *   MPI_OK(call)              an MPI call that must return MPI_SUCCESS,
 *                             else as CHECK, with the error's string;
 *   MPI_RETURNS(call, code)   an MPI call that must return code;
 *   MPI_FAILS(call, cls)      an MPI call that must fail with error class cls;
 *   check_mpi_skip(fmt, ...)  called by every process: rank 0 prints
 *                             "SKIP: reason", MPI_Finalize, exit 77;
 *   check_mpi_finalize(name)  called by every process at the end: every
 *                             rank's failed EXPECTs summed (by point-to-point
 *                             messages, so that the tests of those need no
 *                             collective), rank 0 prints "name: passed at
 *                             np N" or what failed, MPI_Finalize; main's
 *                             exit status.
 * A test that forks its own processes (the btl unit tests) defines
 * CHECK_RANK, an int expression giving the process's rank (-1: none).
 */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef CHECK_MPI
#include <mpi.h>
#endif

/* automake: the test was skipped */
#define TEST_SKIP 77

/* One copy per program (weak), whichever of its files include this. */
__attribute__((weak)) int check_failures;     /* failed EXPECTs and FAILs */
__attribute__((weak)) int check_cases_passed; /* check_case */
__attribute__((weak)) int check_cases_failed;
__attribute__((weak)) FILE *check_output;     /* where failures go (NULL: stderr) */

#ifndef CHECK_RANK
#ifdef CHECK_MPI
#define CHECK_RANK check_mpi_rank()
#else
#define CHECK_RANK (-1)
#endif
#endif

/*
 * The macros hand the message on as " " fmt: a format that is a string
 * literal joins it, and a message left out leaves " " alone (an empty
 * format would draw -Wformat-zero-length).
 */
static inline __attribute__((format(printf, 5, 6))) void
check_print_(int rank, const char *file, int line, const char *cond, const char *fmt, ...)
{
    FILE *f = check_output != NULL ? check_output : stderr;
    va_list ap;
    fputs("FAIL: ", f);
    if (rank >= 0)
        fprintf(f, "[rank %d] ", rank);
    fprintf(f, "%s:%d", file, line);
    if (cond != NULL)
        fprintf(f, ": %s", cond);
    if (fmt[0] != '\0' && fmt[1] != '\0') {
        fputc(':', f);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
    }
    fputc('\n', f);
    fflush(f);
}

#ifdef CHECK_MPI
static inline bool check_mpi_active_(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

static inline int check_mpi_rank(void)
{
    int rank = -1;
    const char *r;
    if (check_mpi_active_())
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    else if ((r = getenv("PMIX_RANK")) != NULL)
        rank = atoi(r);
    return rank;
}
#endif

/* The end of a test whose CHECK failed. */
static inline __attribute__((noreturn)) void check_end_(void)
{
    fflush(stdout);
#ifdef CHECK_MPI
    if (check_mpi_active_())
        MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    exit(1);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            check_print_(CHECK_RANK, __FILE__, __LINE__, #cond, " " __VA_ARGS__);                 \
            check_end_();                                                                          \
        }                                                                                          \
    } while (0)

/* The macros that take a call stringize it themselves: its text handed on
 * to another macro would show its macros expanded. */
#define CHECK_RC_(expr, text, want)                                                                \
    do {                                                                                           \
        int rc_ = (expr), want_ = (want);                                                          \
        if (rc_ != want_) {                                                                        \
            check_print_(CHECK_RANK, __FILE__, __LINE__, NULL, " %s returned %d, expected %d",     \
                         text, rc_, want_);                                                        \
            check_end_();                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_RC(expr, want) CHECK_RC_(expr, #expr, want)
#define CHECK_OK(expr) CHECK_RC_(expr, #expr, 0)

/* EXPECT_TEXT: EXPECT showing text as the condition (for a macro built on
 * it, which stringizes its own argument).  A statement expression (GNU C):
 * a conditional expression whose value is not used would draw
 * -Wunused-value where cond is a constant. */
#define EXPECT_TEXT(cond, text, ...)                                                               \
    (__extension__({                                                                               \
        bool check_held_ = (cond);                                                                 \
        if (!check_held_) {                                                                        \
            check_print_(CHECK_RANK, __FILE__, __LINE__, text, " " __VA_ARGS__);                  \
            check_failures++;                                                                      \
        }                                                                                          \
        check_held_;                                                                               \
    }))

#define EXPECT(cond, ...) EXPECT_TEXT(cond, #cond, __VA_ARGS__)

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        check_print_(CHECK_RANK, __FILE__, __LINE__, NULL, " " __VA_ARGS__);                      \
        check_failures++;                                                                          \
    } while (0)

static inline bool check_case(const char *name, bool ok)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    fflush(stdout);
    if (ok)
        check_cases_passed++;
    else
        check_cases_failed++;
    return ok;
}

static inline int check_report(const char *name)
{
    if (check_cases_passed + check_cases_failed > 0)
        printf("%s: %d passed, %d failed", name, check_cases_passed, check_cases_failed);
    else
        printf("%s: %s", name, check_failures ? "FAIL" : "passed");
    if (check_failures)
        printf(" (%d check%s failed)", check_failures, check_failures == 1 ? "" : "s");
    printf("\n");
    fflush(stdout);
    return check_failures || check_cases_failed ? 1 : 0;
}

static inline __attribute__((format(printf, 1, 0))) void check_say_skip_(const char *fmt,
                                                                        va_list ap)
{
    printf("SKIP: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
}

static inline __attribute__((noreturn, format(printf, 1, 2))) void check_skip(const char *fmt,
                                                                             ...)
{
    va_list ap;
    va_start(ap, fmt);
    check_say_skip_(fmt, ap);
    va_end(ap);
    exit(TEST_SKIP);
}

static inline __attribute__((format(printf, 1, 2))) void check_skip_part(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    check_say_skip_(fmt, ap);
    va_end(ap);
}

#ifdef CHECK_MPI
static inline __attribute__((noreturn)) void check_mpi_bad_rc_(const char *file, int line,
                                                               const char *call, int rc,
                                                               const char *want_text, int want)
{
    char s[MPI_MAX_ERROR_STRING] = "?";
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof(s), "?");
    check_print_(check_mpi_rank(), file, line, NULL, " %s returned %d (%s), expected %s (%d)",
                 call, rc, s, want_text, want);
    check_end_();
}

#define MPI_RETURNS_(call, text, code, code_text)                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (code))                                                                         \
            check_mpi_bad_rc_(__FILE__, __LINE__, text, rc_, code_text, (code));                   \
    } while (0)

#define MPI_RETURNS(call, code) MPI_RETURNS_(call, #call, code, #code)
#define MPI_OK(call) MPI_RETURNS_(call, #call, MPI_SUCCESS, "MPI_SUCCESS")

#define MPI_FAILS(call, cls)                                                                       \
    do {                                                                                           \
        int rc_ = (call), c_ = -1;                                                                 \
        MPI_Error_class(rc_, &c_);                                                                 \
        CHECK(c_ == (cls), "%s returned class %d, expected %s (%d)", #call, c_, #cls, (cls));      \
    } while (0)

static inline __attribute__((noreturn, format(printf, 1, 2))) void check_mpi_skip(const char *fmt,
                                                                                 ...)
{
    if (check_mpi_rank() <= 0) {
        va_list ap;
        va_start(ap, fmt);
        check_say_skip_(fmt, ap);
        va_end(ap);
    }
    MPI_Finalize();
    exit(TEST_SKIP);
}

/* Failed EXPECTs of all ranks, known to every rank: rank 0 gathers and
 * hands back the sum (the messages also hold every rank until all came). */
static inline int check_mpi_sum_failures_(int rank, int size)
{
    const int tag = 32767; /* the least MPI_TAG_UB the standard allows */
    int sum = check_failures, one = 0;
    if (rank != 0) {
        MPI_OK(MPI_Send(&check_failures, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(&sum, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        return sum;
    }
    for (int r = 1; r < size; r++) {
        MPI_OK(MPI_Recv(&one, 1, MPI_INT, r, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        sum += one;
    }
    for (int r = 1; r < size; r++)
        MPI_OK(MPI_Send(&sum, 1, MPI_INT, r, tag, MPI_COMM_WORLD));
    return sum;
}

static inline int check_mpi_finalize(const char *name)
{
    int rank = 0, size = 1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int failed = check_mpi_sum_failures_(rank, size);
    if (rank == 0) {
        if (failed)
            printf("%s: FAIL at np %d (%d check%s failed)\n", name, size, failed,
                   failed == 1 ? "" : "s");
        else
            printf("%s: passed at np %d\n", name, size);
        fflush(stdout);
    }
    MPI_OK(MPI_Finalize());
    return failed ? 1 : 0;
}
#endif /* CHECK_MPI */

#endif
