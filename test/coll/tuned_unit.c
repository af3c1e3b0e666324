/*
 * Unit tests of the tuned collective component (no MPI job): the table of
 * algorithms, the JSON reader, the rules file (format, errors, matching),
 * the fit check and the decision (forced, ruled, built-in, fallbacks), and
 * that test/tests.conf forces every algorithm of the table in a variant of
 * tuned_move / tuned_reduce.  Exit 0: pass; 1: fail.
 */
#include "coll/tuned/tuned_impl.h"
#include "coll/tuned/tuned_json.h"
#include "base/param.h"

#include "test/check.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int ops[] = { COLL_OP_barrier, COLL_OP_bcast, COLL_OP_reduce, COLL_OP_allreduce,
                           COLL_OP_allgather, COLL_OP_alltoall, COLL_OP_reduce_scatter,
                           COLL_OP_reduce_scatter_block, COLL_OP_gather, COLL_OP_scatter };
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

/* ------------------------------------------------------------ table */

static void test_table(void)
{
    int total = 0;
    for (int k = 0; k < NOPS; k++) {
        int op = ops[k], n = 0;
        const coll_tuned_alg_t *a;
        for (; (a = coll_tuned_algorithms(op, n)); n++) {
            EXPECT(a->op == op && a->fn && a->name && a->help, "entry %s incomplete", a->name);
            EXPECT(tuned_alg_find(op, a->name, strlen(a->name)) == (int)(a - coll_tuned_table),
                   "%s/%s: name not unique", coll_op_name(op), a->name);
            char d[256];
            coll_tuned_alg_describe(a, d, sizeof(d));
            EXPECT((a->flags == 0 && a->param_kind == COLL_TUNED_PARAM_NONE) == (d[0] == '\0'),
                   "%s/%s: description \"%s\"", coll_op_name(op), a->name, d);
        }
        EXPECT(n >= 2, "%s has %d algorithms", coll_op_name(op), n);
        a = coll_tuned_algorithms(op, 0);
        EXPECT(a && a->flags == 0 && a->min_count == 0 && a->max_count == 0,
               "the first algorithm of %s must have no restriction", coll_op_name(op));
        total += n;
    }
    EXPECT(total == coll_tuned_table_size, "%d algorithms listed, table has %d", total,
           coll_tuned_table_size);
    EXPECT(coll_tuned_algorithms(COLL_OP_scan, 0) == NULL, "tuned does not serve scan");
    EXPECT(coll_tuned_algorithms(COLL_OP_iallreduce, 0) == NULL, "nor nonblocking forms");
    const coll_tuned_alg_t *ring = &coll_tuned_table[TUNED_A_allreduce_ring];
    EXPECT(strcmp(coll_tuned_alg_param_name(ring), "coll_tuned_allreduce_ring_segsize") == 0,
           "ring's parameter: %s", coll_tuned_alg_param_name(ring));
}

/* ------------------------------------------------------------ JSON */

static void json_ok(const char *text)
{
    char err[256];
    tj_value_t v;
    int rc = tj_parse(text, strlen(text), &v, err, sizeof(err));
    EXPECT(rc == 0, "valid JSON %s refused: %s", text, err);
    if (rc == 0)
        tj_free(&v);
}

/* Invalid text: the error must name `where` ("line L, column C"). */
static void json_bad(const char *text, const char *where)
{
    char err[256];
    tj_value_t v;
    int rc = tj_parse(text, strlen(text), &v, err, sizeof(err));
    EXPECT(rc != 0, "invalid JSON %s accepted", text);
    if (rc != 0)
        EXPECT(strstr(err, where) != NULL, "error for %s: \"%s\", expected %s", text, err, where);
}

static void test_json(void)
{
    const char *doc = "{\n  \"a\": [1, -2.5e3, true, false, null],\n  \"s\": "
                      "\"x\\n\\\"\\u00e9\\ud83d\\ude00\",\n  \"o\": {\"k\": {}}, \"e\": []\n}";
    char err[256];
    tj_value_t v;
    EXPECT(tj_parse(doc, strlen(doc), &v, err, sizeof(err)) == 0, "doc: %s", err);
    EXPECT(v.type == TJ_OBJECT && v.n == 4, "object of 4");
    const tj_value_t *a = tj_get(&v, "a"), *s = tj_get(&v, "s");
    EXPECT(a && a->type == TJ_ARRAY && a->n == 5 && a->items[1].num == -2500 &&
               a->items[2].type == TJ_BOOL && a->items[2].b && a->items[4].type == TJ_NULL,
           "array values");
    EXPECT(a && a->line == 2 && a->col == 8, "position of \"a\": %d:%d", a ? a->line : 0,
           a ? a->col : 0);
    EXPECT(s && strcmp(s->str, "x\n\"\xc3\xa9\xf0\x9f\x98\x80") == 0, "string escapes");
    EXPECT(tj_get(&v, "missing") == NULL, "missing member");
    tj_free(&v);
    json_ok("  42  ");
    json_ok("\"\"");
    json_ok("[[[]]]");
    json_bad("", "line 1, column 1");
    json_bad("{", "line 1, column 2");
    json_bad("[1,]", "line 1, column 4");
    json_bad("{\"a\" 1}", "line 1, column 6");
    json_bad("[1]\n x", "line 2, column 2");
    json_bad("tru", "line 1, column 1");
    json_bad("\"abc", "unterminated");
    json_bad("01", "after the value");
    json_bad("\"a\x01\"", "control character");
    json_bad("\"\\x\"", "bad escape");
    json_bad("\"\\ud800x\"", "surrogate");
    json_bad("-", "bad number");
    json_bad("1.", "digits expected");
    char deep[300];
    memset(deep, '[', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = '\0';
    json_bad(deep, "nested too deeply");
}

/* ------------------------------------------------------------ rules */

static void rules_bad(const char *text, const char *what)
{
    tuned_rules_t r;
    char err[512];
    int rc = tuned_rules_parse(text, strlen(text), &r, err, sizeof(err));
    EXPECT(rc != MPI_SUCCESS, "bad rules accepted: %s", text);
    if (rc != MPI_SUCCESS)
        EXPECT(strstr(err, what) != NULL, "error for %s: \"%s\", expected \"%s\"", text, err, what);
    tuned_rules_free(&r);
}

static void test_rules(void)
{
    const char *text =
        "{ \"_comment\": \"test\",\n"
        "  \"allreduce\": [\n"
        "    {\"comm_size\": [2, 2], \"msg_size\": [0, \"4K\"], \"algorithm\": \"ring\"},\n"
        "    {\"comm_size\": [2, 8], \"msg_size\": [4097, null], \"algorithm\": \"rabenseifner\"},\n"
        "    {\"algorithm\": \"ring\", \"segment_size\": \"1M\", \"_why\": \"catch-all\"}],\n"
        "  \"bcast\": [{\"comm_size\": [3, null], \"msg_size\": [1024, 1048576],\n"
        "              \"algorithm\": \"chain\", \"segment_size\": 8192}]\n"
        "}\n";
    tuned_rules_t r;
    char err[512];
    int rc = tuned_rules_parse(text, strlen(text), &r, err, sizeof(err));
    EXPECT(rc == MPI_SUCCESS && r.n == 4, "rules: rc %d n %d: %s", rc, r.n, err);
    const tuned_rule_t *u = tuned_rules_match(&r, COLL_OP_allreduce, 2, 4096);
    EXPECT(u && u->alg == TUNED_A_allreduce_ring && !u->has_param, "allreduce 2 x 4K");
    u = tuned_rules_match(&r, COLL_OP_allreduce, 2, 4097);
    EXPECT(u && u->alg == TUNED_A_allreduce_rabenseifner, "allreduce 2 x 4097");
    u = tuned_rules_match(&r, COLL_OP_allreduce, 9, 1);
    EXPECT(u && u->alg == TUNED_A_allreduce_ring && u->has_param && u->param == (1 << 20),
           "allreduce catch-all");
    u = tuned_rules_match(&r, COLL_OP_bcast, 1000000, 1 << 20);
    EXPECT(u && u->alg == TUNED_A_bcast_chain && u->param == 8192, "bcast, unbounded size");
    EXPECT(!tuned_rules_match(&r, COLL_OP_bcast, 2, 2048), "bcast at 2 processes: no rule");
    EXPECT(!tuned_rules_match(&r, COLL_OP_bcast, 4, (1 << 20) + 1), "bcast past 1M: no rule");
    EXPECT(!tuned_rules_match(&r, COLL_OP_reduce, 4, 8), "reduce: no rule");
    tuned_rules_free(&r);
    rules_bad("[]", "must be an object");
    rules_bad("{\"allreduc\": []}", "unknown operation \"allreduc\"");
    rules_bad("{\"scan\": []}", "unknown operation \"scan\"");
    rules_bad("{\"allreduce\": {}}", "must be an array");
    rules_bad("{\"allreduce\": [{\"algorithm\": \"rign\"}]}",
              "allreduce has no algorithm \"rign\" (known: recursive_doubling");
    rules_bad("{\"allreduce\": [{\"algoritm\": \"ring\"}]}", "unknown member \"algoritm\"");
    rules_bad("{\"allreduce\": [{\"comm_size\": [4, 2], \"algorithm\": \"ring\"}]}",
              "empty range");
    rules_bad("{\"allreduce\": [{\"msg_size\": [0, \"4Q\"], \"algorithm\": \"ring\"}]}",
              "line 1, column 33: msg_size");
    rules_bad("{\"allreduce\": [{\"msg_size\": [-1, 2], \"algorithm\": \"ring\"}]}", "msg_size");
    rules_bad("{\"allreduce\": [{\"msg_size\": 5, \"algorithm\": \"ring\"}]}", "[min, max]");
    rules_bad("{\"allreduce\": [{\"comm_size\": [1, 2]}]}", "needs \"algorithm\"");
    rules_bad("{\"allreduce\": [7]}", "must be an object");
    /* the shipped files parse */
    const char *top = getenv("top_srcdir");
    const char *files[] = { "coll/tuned/rules-example.json", "coll/tuned/rules-2core.json" };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", top ? top : ".", files[i]);
        if (access(path, R_OK) != 0) {
            EXPECT(i > 0, "%s missing", path);
            continue;
        }
        rc = tuned_rules_load(path, &r, err, sizeof(err));
        EXPECT(rc == MPI_SUCCESS && r.n > 0, "%s: %s", path, err);
        tuned_rules_free(&r);
    }
}

/* ------------------------------------------------------------ decisions */

static struct MPI_ABI_Op op_commute = { .commute = 1 }, op_order = { .commute = 0 };

static coll_tuned_call_t call(int op, int size, size_t bytes, obj_op_t *mop)
{
    return (coll_tuned_call_t){ .op = op, .size = size, .bytes = bytes, .count = (MPI_Count)bytes,
                                .mop = mop };
}

static const char *decide(coll_tuned_call_t c)
{
    return tuned_decide(&c)->name;
}

static void test_decisions(void)
{
    /* fit check */
    const char *why = NULL;
    coll_tuned_call_t c = call(COLL_OP_allreduce, 4, 64, &op_order);
    EXPECT(!tuned_alg_fits(&coll_tuned_table[TUNED_A_allreduce_ring], &c, &why) && why &&
               strstr(why, "commutative"),
           "ring with a non-commutative op");
    c = call(COLL_OP_allgather, 6, 64, NULL);
    EXPECT(!tuned_alg_fits(&coll_tuned_table[TUNED_A_allgather_recursive_doubling], &c, &why),
           "recursive doubling allgather on 6");
    EXPECT(tuned_alg_fits(&coll_tuned_table[TUNED_A_allgather_neighbor_exchange], &c, &why),
           "neighbour exchange on 6");
    c = call(COLL_OP_allgather, 7, 64, NULL);
    EXPECT(!tuned_alg_fits(&coll_tuned_table[TUNED_A_allgather_neighbor_exchange], &c, &why),
           "neighbour exchange on 7");
    c = call(COLL_OP_alltoall, 4, 64, NULL);
    c.inplace_all = true;
    EXPECT(!tuned_alg_fits(&coll_tuned_table[TUNED_A_alltoall_linear], &c, &why),
           "linear alltoall in place");
    /* built-in decisions always fit */
    size_t sizes[] = { 0, 8, 1000, 16384, 1 << 20, (size_t)64 << 20 };
    for (int k = 0; k < NOPS; k++)
        for (int p = 2; p <= 64; p++)
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
                for (int m = 0; m < 2; m++) {
                    c = call(ops[k], p, sizes[s], m ? &op_order : &op_commute);
                    c.inplace_all = m;
                    int i = tuned_builtin(&c);
                    EXPECT(i >= 0 && coll_tuned_table[i].op == ops[k] &&
                               tuned_alg_fits(&coll_tuned_table[i], &c, &why),
                           "built-in %s p=%d bytes=%zu %s: %s", coll_op_name(ops[k]), p, sizes[s],
                           m ? "ordered in place" : "", i >= 0 ? coll_tuned_table[i].name : "-");
                }
    /* forcing: the parameter, and the fallback when it does not fit */
    setenv("RAIL_COLL_TUNED_ALLREDUCE_ALGORITHM", "ring", 1);
    setenv("RAIL_COLL_TUNED_ALLGATHER_ALGORITHM", "neighbor_exchange", 1);
    setenv("RAIL_COLL_TUNED_ALLREDUCE_RING_SEGSIZE", "12k", 1);
    EXPECT(tuned_table_register_params() == MPI_SUCCESS &&
               tuned_decide_register_params() == MPI_SUCCESS,
           "register");
    tuned_decide_init();
    c = call(COLL_OP_allreduce, 4, 8, &op_commute);
    EXPECT(tuned_decide(&c) == &coll_tuned_table[TUNED_A_allreduce_ring] && c.param == 12288,
           "forced ring, segment 12K: %s %zu", decide(c), c.param);
    c = call(COLL_OP_allreduce, 4, 8, &op_order);
    EXPECT(strcmp(decide(c), "recursive_doubling") == 0, "forced ring, non-commutative: %s",
           decide(c));
    EXPECT(strcmp(decide(call(COLL_OP_allgather, 6, 8, NULL)), "neighbor_exchange") == 0,
           "forced neighbour exchange on 6");
    EXPECT(strcmp(decide(call(COLL_OP_allgather, 5, 8, NULL)), "neighbor_exchange") != 0,
           "forced neighbour exchange on 5 falls back");
    /* a rules file, below the forced algorithm */
    char path[] = "/tmp/tuned_unit_XXXXXX";
    int fd = mkstemp(path);
    const char *rules = "{\"allreduce\": [{\"comm_size\": [3, 3], \"algorithm\": \"reduce_bcast\"}],"
                        " \"bcast\": [{\"msg_size\": [0, 100], \"algorithm\": \"chain\","
                        " \"segment_size\": 64}, {\"algorithm\": \"linear\"}]}";
    EXPECT(fd >= 0 && write(fd, rules, strlen(rules)) == (ssize_t)strlen(rules), "temp file");
    close(fd);
    EXPECT(rail_param_set("coll_tuned_rules_file", path, RAIL_PARAM_SRC_API) == MPI_SUCCESS &&
               rail_param_set("coll_tuned_allreduce_algorithm", "auto", RAIL_PARAM_SRC_API) ==
                   MPI_SUCCESS,
           "set the parameters");
    EXPECT(tuned_decide_register_params() == MPI_SUCCESS, "register again");
    tuned_decide_init();
    EXPECT(strcmp(decide(call(COLL_OP_allreduce, 3, 8, &op_order)), "reduce_bcast") == 0,
           "ruled allreduce on 3");
    EXPECT(strcmp(decide(call(COLL_OP_allreduce, 4, 8, &op_order)), "recursive_doubling") == 0,
           "no rule for allreduce on 4: built-in");
    c = call(COLL_OP_bcast, 4, 100, NULL);
    EXPECT(tuned_decide(&c) == &coll_tuned_table[TUNED_A_bcast_chain] && c.param == 64,
           "ruled bcast chain, segment 64: %s %zu", decide(c), c.param);
    EXPECT(strcmp(decide(call(COLL_OP_bcast, 4, 101, NULL)), "linear") == 0, "ruled bcast linear");
    unlink(path);
}

/* ------------------------------------------------------------ tests.conf */

/* Every algorithm of the operations a test checks is forced by one of its
 * variants in test/tests.conf. */
static void test_conf_covers(const char *test, const int *tops, int n)
{
    const char *top = getenv("top_srcdir");
    char path[1024], line[16384];
    snprintf(path, sizeof(path), "%s/test/tests.conf", top ? top : ".");
    FILE *f = fopen(path, "r");
    if (!f) {
        check_skip_part("the variants of %s: %s not found", test, path);
        return;
    }
    bool found = false;
    while (!found && fgets(line, sizeof(line), f))
        found = strncmp(line, test, strlen(test)) == 0 && isspace((unsigned char)line[strlen(test)]);
    fclose(f);
    EXPECT(found, "no line for %s in %s", test, path);
    for (int k = 0; found && k < n; k++) {
        const coll_tuned_alg_t *a;
        for (int i = 0; (a = coll_tuned_algorithms(tops[k], i)); i++) {
            char want[256], up[64];
            size_t j = 0;
            for (const char *s = coll_op_name(tops[k]); *s && j + 1 < sizeof(up); s++)
                up[j++] = (char)toupper((unsigned char)*s);
            up[j] = '\0';
            snprintf(want, sizeof(want), "RAIL_COLL_TUNED_%s_ALGORITHM=%s", up, a->name);
            bool hit = false;
            for (const char *p = strstr(line, want); p && !hit; p = strstr(p + 1, want)) {
                char after = p[strlen(want)];
                hit = after == ' ' || after == ';' || after == '|' || after == '\n' || !after;
            }
            EXPECT(hit, "%s: no variant forces %s=%s in test/tests.conf", test,
                   coll_op_name(tops[k]), a->name);
        }
    }
}

int main(void)
{
    test_table();
    test_json();
    test_rules();
    test_decisions();
    static const int move_ops[] = { COLL_OP_barrier, COLL_OP_bcast, COLL_OP_gather,
                                    COLL_OP_scatter, COLL_OP_allgather, COLL_OP_alltoall };
    static const int red_ops[] = { COLL_OP_reduce, COLL_OP_allreduce, COLL_OP_reduce_scatter,
                                   COLL_OP_reduce_scatter_block };
    test_conf_covers("test/coll/tuned_move", move_ops, 6);
    test_conf_covers("test/coll/tuned_reduce", red_ops, 4);
    printf("tuned_unit: %d algorithms\n", coll_tuned_table_size);
    return check_report("tuned_unit");
}
