/*
 * railinfo: what this Rail MPI installation is and how it is configured —
 * version, build configuration, components of each framework, every
 * parameter with its value, where the value came from, and its help, and
 * every MPI_T performance variable.
 *
 *   railinfo                 version, build, components
 *   railinfo --all           ... and every parameter and performance variable
 *   railinfo --param NAME    one parameter (NAME may be a prefix: "btl_sm")
 *   railinfo --json          the same as JSON (with --all / --param)
 *   railinfo --rails         the rails and NICs this process would use (under
 *                            mpirun: each rank's)
 */
#include "base/rail.h"
#include "base/copy.h"
#include "base/param.h"
#include "base/pvar.h"
#include "btl/btl.h"
#include "btl/btl_rail.h"
#include "runtime/rte.h"
#ifdef RAIL_HAVE_VERBS
#include "btl/verbs/verbs.h"
#endif
#include "coll/coll.h"
#include "accel/accel.h"
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char *const mpi_api_unimplemented[];
extern const int mpi_api_num_procedures;

typedef struct { const char *framework; const char *names[16]; int n; } framework_t;

static void collect(framework_t *fw, int *nfw)
{
    int n = 0;
    fw[n] = (framework_t){"accel", {0}, 0};
    for (int i = 0; i < accel_component_count() && i < 16; i++)
        fw[n].names[fw[n].n++] = accel_component_name(i);
    n++;
    fw[n] = (framework_t){"btl", {0}, 0};
    for (int i = 0; btl_components[i] && i < 16; i++)
        fw[n].names[fw[n].n++] = btl_components[i]->name;
    n++;
    fw[n] = (framework_t){"coll", {0}, 0};
    for (int i = 0; coll_components[i] && i < 16; i++)
        fw[n].names[fw[n].n++] = coll_components[i]->name;
    n++;
    *nfw = n;
}

static int count_unimplemented(void)
{
    int n = 0;
    while (mpi_api_unimplemented[n])
        n++;
    return n;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* --test: list the parameters that exist for the test suite too. */
static bool show_test;

/* A parameter asked for by name is shown whatever it is for; the full
 * listing leaves test knobs out unless --test. */
static bool selected(const rail_param_t *p, const char *filter)
{
    if (filter)
        return strncmp(p->name, filter, strlen(filter)) == 0;
    return show_test || !(p->flags & RAIL_PARAM_F_TEST);
}

static const char *param_use(const rail_param_t *p)
{
    return p->flags & RAIL_PARAM_F_TEST       ? "test"
           : p->flags & RAIL_PARAM_F_MEASURED ? "measured"
                                              : NULL;
}

static void print_params_text(const char *filter)
{
    int shown = 0;
    for (int i = 0; i < rail_param_count(); i++) {
        const rail_param_t *p = rail_param_at(i);
        if (!selected(p, filter))
            continue;
        char val[512];
        rail_param_value_string(p, val, sizeof(val));
        printf("  %s = %s\n", p->name, val);
        printf("      %s; default %s; from %s; env RAIL_", rail_param_type_name(p->type),
               p->default_str[0] ? p->default_str : "\"\"", p->origin);
        for (const char *c = p->name; *c; c++)
            putchar(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        printf("%s%s\n", p->choices ? "; one of " : "", p->choices ? p->choices : "");
        if (p->flags & RAIL_PARAM_F_TEST)
            printf("      (for tests)\n");
        else if (p->flags & RAIL_PARAM_F_MEASURED)
            printf("      (default measured on one machine: bench/tune_params.py)\n");
        if (p->flags & RAIL_PARAM_F_DYNAMIC)
            printf("      (read at every use: an MPI_T write takes effect while MPI runs)\n");
        printf("      %s\n", p->help);
        shown++;
    }
    if (filter && !shown) {
        fprintf(stderr, "railinfo: no parameter named '%s' (see railinfo --all)\n", filter);
        exit(1);
    }
}

static const char *pvar_type(const rail_pvar_t *v)
{
    return v->type == RAIL_PVAR_DOUBLE ? "double" : "unsigned";
}

static bool pvar_is(const rail_pvar_t *v, unsigned flag)
{
    return (v->flags & flag) != 0;
}

static void print_pvars_text(void)
{
    printf("Performance variables (%d, MPI_T):\n", rail_pvar_count());
    for (int i = 0; i < rail_pvar_count(); i++) {
        const rail_pvar_t *v = rail_pvar_at(i);
        printf("  %s (class %s, %s%s%s%s, level %d)\n      %s\n", v->name,
               rail_pvar_class_name(v->var_class), pvar_type(v),
               pvar_is(v, RAIL_PVAR_CONTINUOUS) ? ", continuous" : "",
               pvar_is(v, RAIL_PVAR_READONLY) ? ", readonly" : "",
               pvar_is(v, RAIL_PVAR_ATOMIC) ? ", atomic" : "", v->level, v->desc);
    }
}

static void print_pvars_json(void)
{
    printf(",\n  \"performance_variables\": [");
    for (int i = 0; i < rail_pvar_count(); i++) {
        const rail_pvar_t *v = rail_pvar_at(i);
        printf("%s\n    {\"name\": ", i ? "," : "");
        json_str(v->name);
        printf(", \"class\": \"%s\", \"type\": \"%s\", \"continuous\": %s, \"readonly\": %s, "
               "\"atomic\": %s, \"level\": %d, \"description\": ",
               rail_pvar_class_name(v->var_class), pvar_type(v),
               pvar_is(v, RAIL_PVAR_CONTINUOUS) ? "true" : "false",
               pvar_is(v, RAIL_PVAR_READONLY) ? "true" : "false",
               pvar_is(v, RAIL_PVAR_ATOMIC) ? "true" : "false", v->level);
        json_str(v->desc);
        printf("}");
    }
    printf("\n  ]");
}

/* What copy_isa, copy_stream and copy_stream_min came to on this node. */
static void print_copy_text(void)
{
    const rail_param_t *p = rail_param_find("copy_stream_min");
    printf("  copy:       %s", rail_copy_selected);
    if (!rail_copy_stream || !rail_copy_vec || rail_copy_stream_mode == RAIL_COPY_STREAM_NEVER)
        printf(", no streaming stores\n");
    else if (p && *(const size_t *)p->storage == 0)
        printf(", streaming stores from %zu KiB (3/8 of a %zu KiB last-level cache; 0: "
               "hwloc reports none)\n",
               rail_copy_stream_min >> 10, rail_copy_llc_size() >> 10);
    else
        printf(", streaming stores from %zu KiB (copy_stream_min)\n", rail_copy_stream_min >> 10);
}

static void print_text(bool params, const char *filter)
{
    framework_t fw[8];
    int nfw;
    collect(fw, &nfw);
    if (!filter) {
        printf("Rail MPI %s (MPI %d.%d)\n", PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
        printf("  prefix:     %s\n", RAIL_PREFIX);
        printf("  compiler:   %s\n", RAIL_BUILD_CC);
        printf("  configure:  %s\n", RAIL_CONFIGURE_ARGS[0] ? RAIL_CONFIGURE_ARGS : "(defaults)");
        printf("  libpmix:    %s\n  hwloc:      %s\n", RAIL_PMIX_VERSION, RAIL_HWLOC_VERSION);
        printf("  libfabric:  %s\n", RAIL_OFI_VERSION[0] ? RAIL_OFI_VERSION : "not built in");
        printf("  CUDA:       %s\n", RAIL_CUDA_VERSION[0] ? RAIL_CUDA_VERSION : "not built in");
#ifdef RAIL_HAVE_VERBS
        char verbs[512];
        btl_verbs_describe(verbs, sizeof(verbs));
        printf("  rdma-core:  %s\n", verbs);
#else
        printf("  rdma-core:  not built in\n");
#endif
        print_copy_text();
        int unimpl = count_unimplemented();
        printf("  MPI API:    %d of %d functions implemented\n", mpi_api_num_procedures - unimpl,
               mpi_api_num_procedures);
        printf("Components:\n");
        for (int i = 0; i < nfw; i++) {
            printf("  %-6s", fw[i].framework);
            for (int j = 0; j < fw[i].n; j++)
                printf(" %s", fw[i].names[j]);
            printf("\n");
        }
        for (int i = 0; btl_components[i]; i++) {
            char what[512];
            if (!btl_components[i]->describe)
                continue;
            btl_components[i]->describe(what, sizeof(what));
            printf("  btl %s: %s\n", btl_components[i]->name, what);
        }
    }
    if (params || filter) {
        if (!filter)
            printf("Parameters (%d):\n", rail_param_count());
        print_params_text(filter);
    }
    if (params && !filter)
        print_pvars_text();
}

static void print_json(bool params, const char *filter)
{
    framework_t fw[8];
    int nfw;
    collect(fw, &nfw);
    printf("{\n  \"version\": ");
    json_str(PACKAGE_VERSION);
    printf(",\n  \"mpi_version\": \"%d.%d\",\n  \"build\": {\"compiler\": ", MPI_VERSION,
           MPI_SUBVERSION);
    json_str(RAIL_BUILD_CC);
    printf(", \"configure\": ");
    json_str(RAIL_CONFIGURE_ARGS);
    printf(", \"pmix\": ");
    json_str(RAIL_PMIX_VERSION);
    printf(", \"hwloc\": ");
    json_str(RAIL_HWLOC_VERSION);
    printf(", \"libfabric\": ");
    json_str(RAIL_OFI_VERSION);
    printf(", \"cuda\": ");
    json_str(RAIL_CUDA_VERSION);
    printf("},\n  \"api\": {\"total\": %d, \"unimplemented\": [", mpi_api_num_procedures);
    for (int i = 0; mpi_api_unimplemented[i]; i++) {
        printf(i ? ", " : "");
        json_str(mpi_api_unimplemented[i]);
    }
    printf("]},\n  \"components\": {");
    for (int i = 0; i < nfw; i++) {
        printf("%s\"%s\": [", i ? ", " : "", fw[i].framework);
        for (int j = 0; j < fw[i].n; j++) {
            printf(j ? ", " : "");
            json_str(fw[i].names[j]);
        }
        printf("]");
    }
    printf("}");
    if (params || filter) {
        printf(",\n  \"parameters\": [");
        int k = 0;
        for (int i = 0; i < rail_param_count(); i++) {
            const rail_param_t *p = rail_param_at(i);
            if (!selected(p, filter))
                continue;
            char val[512];
            rail_param_value_string(p, val, sizeof(val));
            printf("%s\n    {\"name\": ", k++ ? "," : "");
            json_str(p->name);
            printf(", \"type\": \"%s\", \"value\": ", rail_param_type_name(p->type));
            json_str(val);
            printf(", \"default\": ");
            json_str(p->default_str);
            printf(", \"source\": ");
            json_str(p->origin);
            printf(", \"level\": %d, \"choices\": ", p->level);
            if (p->choices)
                json_str(p->choices);
            else
                printf("null");
            printf(", \"use\": ");
            if (param_use(p))
                json_str(param_use(p));
            else
                printf("null");
            printf(", \"dynamic\": %s", p->flags & RAIL_PARAM_F_DYNAMIC ? "true" : "false");
            printf(", \"help\": ");
            json_str(p->help);
            printf("}");
        }
        printf("\n  ]");
    }
    if (params && !filter)
        print_pvars_json();
    printf("\n}\n");
}

/* --rails: what btl tcp would choose in this process (rank, local rank
 * from the rte: under mpirun, each rank's own view). */
static const char *param_value(const char *name, char *buf, size_t len)
{
    const rail_param_t *p = rail_param_find(name);
    buf[0] = '\0';
    if (p)
        rail_param_value_string(p, buf, len);
    return buf;
}

static int print_rails(void)
{
    rail_netif_t ifs[BTL_RAIL_MAX * 2];
    char why[160], desc[2048], inc[256], exc[256], fe[256];
    int n_rails = 0;
    if (rte_init() != MPI_SUCCESS) {
        fprintf(stderr, "railinfo: cannot start the runtime\n");
        return 1;
    }
    int k = btl_rail_backend(param_value("btl_tcp_if_include", inc, sizeof(inc)),
                             param_value("btl_tcp_if_exclude", exc, sizeof(exc)),
                             rte_info.num_nodes <= 1, ifs, BTL_RAIL_MAX * 2, &n_rails, "railinfo");
    int mine = btl_rail_choose(ifs, k, n_rails, rte_info.local_rank, why, sizeof(why));
    btl_rail_describe(ifs, k, mine, desc, sizeof(desc));
    printf("rank %d on %s (local rank %d): %d rail(s); this process on rail %d: %s\n%s",
           rte_info.rank, rte_info.hostname, rte_info.local_rank, n_rails, mine, why, desc);
    for (int i = 0; i < k; i++)
        if (ifs[i].rail < 0)
            printf("  not a rail: %s%s\n", ifs[i].name,
                   ifs[i].loopback ? " (loopback, this node only)" : "");
    param_value("rte_if_include", fe, sizeof(fe));
    printf("  frontend (rte_if_include): %s\n", fe[0] ? fe : "not set (every interface)");
    fflush(stdout);
    rte_finalize();
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: railinfo [--all [--test]] [--param NAME] [--json] [--rails] [--version] [--help]\n"
               "  --all          also list every parameter (value, origin, help) and every\n"
               "                 MPI_T performance variable\n"
               "  --test         with --all: also the parameters that exist for tests\n"
               "  --param NAME   show the parameters whose name starts with NAME\n"
               "  --json         machine-readable output\n"
               "  --rails        the rails and NICs this process would use (run it under\n"
               "                 mpirun to see each rank's)\n");
}

int main(int argc, char **argv)
{
    bool all = false, json = false, rails = false;
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))
            all = true;
        else if (!strcmp(argv[i], "--rails"))
            rails = true;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--test"))
            show_test = true;
        else if (!strcmp(argv[i], "--param") && i + 1 < argc)
            filter = argv[++i];
        else if (!strncmp(argv[i], "--param=", 8))
            filter = argv[i] + 8;
        else if (!strcmp(argv[i], "--version")) {
            printf("railinfo (Rail MPI) %s\n", PACKAGE_VERSION);
            return 0;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "railinfo: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    /* The tools interface registers every framework's parameters. */
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "railinfo: could not register the parameters\n");
        return 1;
    }
    if (rails) {
        int rc = print_rails();
        MPI_T_finalize();
        return rc;
    }
    if (json)
        print_json(all, filter);
    else
        print_text(all, filter);
    MPI_T_finalize();
    return 0;
}
