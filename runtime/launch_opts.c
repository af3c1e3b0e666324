/*
 * mpirun's command line: options, host lists, hostfiles, MPMD segments, and
 * the mapping of ranks to hosts.
 */
#include "runtime/launch.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char launch_usage[] =
    "Usage: %s [options] program [args] [: [options] program [args]]...\n"
    "\n"
    "Start an MPI job of Rail MPI.\n"
    "\n"
    "  -n, -np N              number of ranks (per program; default: all slots)\n"
    "  -H, --host LIST        hosts as h1,h2:4,... (':N' = N slots, default 1)\n"
    "  --hostfile FILE        lines 'host slots=N' or 'host:N' ('#' starts a comment)\n"
    "  --map-by slot|node|core   fill each host's slots in turn (slot, core) or deal\n"
    "                         ranks round-robin over the hosts (node); default slot\n"
    "  --bind-to core|none    bind each rank to a core (default: when the host has a\n"
    "                         core per rank, never when oversubscribed)\n"
    "  -x VAR[=VALUE]         set VAR in the ranks' environment (its value here\n"
    "                         when no VALUE); before the first ':' for every program\n"
    "  --param NAME=VALUE     set Rail parameter NAME (RAIL_<NAME> in every rank)\n"
    "  --tag-output           prefix each line of output with [1,rank]<stdout>:\n"
    "  --timeout SECONDS      end the job after SECONDS, naming the ranks still running\n"
    "                         (default: $MPIEXEC_TIMEOUT where set)\n"
    "  --wdir DIR             working directory of the ranks (default: this one)\n"
    "  --launch-agent TMPL    command starting raild on another host, {host} replaced\n"
    "                         by the host name (default: 'ssh {host}')\n"
    "  -v, --verbose          say what the launcher does\n"
    "  --version              print the version\n"
    "  -h, --help             this help\n"
    "  --oversubscribe, --allow-run-as-root   accepted for compatibility (no effect)\n"
    "\n"
    "Rank 0 reads mpirun's stdin; the others read /dev/null.  The exit status is 0\n"
    "when every rank exits with 0, else that of the first failure (128+N for\n"
    "signal N, the code given to MPI_Abort, 124 for --timeout).\n";

static int launch_opts_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int launch_opts_fail(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    launch_msg("%s (see %s --help)", text, launch_progname);
    return -1;
}

static bool launch_parse_int(const char *s, int min, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

/* ------------------------------------------------------------ hosts */

static void launch_add_host(launch_opts_t *o, const char *name, int slots)
{
    for (int i = 0; i < o->nhosts; i++) {
        if (strcmp(o->hosts[i], name) == 0) {
            o->slots[i] += slots;
            return;
        }
    }
    o->hosts = realloc(o->hosts, sizeof(char *) * (size_t)(o->nhosts + 1));
    o->slots = realloc(o->slots, sizeof(int) * (size_t)(o->nhosts + 1));
    if (!o->hosts || !o->slots) {
        launch_msg("out of memory");
        abort();
    }
    o->hosts[o->nhosts] = launch_xstrdup(name);
    o->slots[o->nhosts++] = slots;
}

/* "name" or "name:N" */
static int launch_add_host_spec(launch_opts_t *o, const char *spec)
{
    char name[256];
    const char *colon = strrchr(spec, ':');
    int slots = 1;

    if (colon) {
        if (!launch_parse_int(colon + 1, 1, &slots))
            return launch_opts_fail("bad slot count in host '%s'", spec);
        snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
    } else {
        snprintf(name, sizeof(name), "%s", spec);
    }
    if (!name[0])
        return launch_opts_fail("empty host name in '%s'", spec);
    launch_add_host(o, name, slots);
    o->hosts_given = true;
    return 0;
}

static int launch_parse_host_list(launch_opts_t *o, const char *list)
{
    char *copy = launch_xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save))
        rc = launch_add_host_spec(o, t);
    free(copy);
    return rc;
}

static int launch_parse_hostfile_line(launch_opts_t *o, char *line, const char *file, int lineno)
{
    char *save = NULL, *host = strtok_r(line, " \t\r\n", &save), *tok;
    int slots = -1;

    if (!host)
        return 0;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        if (strncmp(tok, "slots=", 6) == 0) {
            if (!launch_parse_int(tok + 6, 1, &slots))
                return launch_opts_fail("%s:%d: bad '%s'", file, lineno, tok);
        } else if (strncmp(tok, "max_slots=", 10) != 0 && strncmp(tok, "max-slots=", 10) != 0) {
            return launch_opts_fail("%s:%d: unknown '%s'", file, lineno, tok);
        }
    }
    if (slots > 0 && strchr(host, ':'))
        return launch_opts_fail("%s:%d: slots given twice", file, lineno);
    if (slots > 0) {
        char spec[300];
        snprintf(spec, sizeof(spec), "%s:%d", host, slots);
        return launch_add_host_spec(o, spec);
    }
    return launch_add_host_spec(o, host);
}

static int launch_parse_hostfile(launch_opts_t *o, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[1024];
    int lineno = 0, rc = 0;

    if (!f)
        return launch_opts_fail("cannot read hostfile %s: %s", file, strerror(errno));
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *hash = strchr(line, '#');
        lineno++;
        if (hash)
            *hash = '\0';
        rc = launch_parse_hostfile_line(o, line, file, lineno);
    }
    fclose(f);
    if (rc == 0 && o->nhosts == 0)
        return launch_opts_fail("hostfile %s names no host", file);
    return rc;
}

static int launch_local_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------ options */

typedef struct launch_seg {
    int nprocs; /* -1: not given */
    char **argv;
    char **env;
} launch_seg_t;

/* The value of an option: "--opt=value" or the next argument. */
static const char *launch_optval(int argc, char **argv, int *i, const char *eq, const char *opt)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc || strcmp(argv[*i + 1], ":") == 0) {
        launch_opts_fail("option %s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

static int launch_opt_x(launch_opts_t *o, launch_seg_t *seg, bool first, const char *v)
{
    char **target = first ? o->job->env : seg->env;
    char buf[8192];

    if (!v[0] || v[0] == '=')
        return launch_opts_fail("-x needs a variable name");
    if (!strchr(v, '=')) {
        const char *val = getenv(v);
        if (!val) {
            launch_msg("warning: -x %s: not set in mpirun's environment, not passed", v);
            return 0;
        }
        snprintf(buf, sizeof(buf), "%s=%s", v, val);
        v = buf;
    }
    launch_env_set(&target, v);
    if (first)
        o->job->env = target;
    else
        seg->env = target;
    return 0;
}

/* --param name=value -> RAIL_NAME=value */
static int launch_opt_param(launch_opts_t *o, const char *v)
{
    const char *eq = strchr(v, '=');
    char buf[8192];
    size_t n = 0;

    if (!eq || eq == v)
        return launch_opts_fail("--param needs NAME=VALUE, not '%s'", v);
    if ((size_t)(eq - v) > 5 && strncasecmp(v, "rail_", 5) == 0)
        v += 5;
    n = (size_t)snprintf(buf, sizeof(buf), "RAIL_");
    for (const char *p = v; p < eq && n < 256; p++) {
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '-')
            return launch_opts_fail("--param: bad parameter name in '%s'", v);
        buf[n++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    }
    snprintf(buf + n, sizeof(buf) - n, "%s", eq);
    launch_env_set(&o->job->env, buf);
    return 0;
}

static bool launch_is(const char *name, const char *a, const char *b)
{
    return strcmp(name, a) == 0 || (b && strcmp(name, b) == 0);
}

/* One option at argv[*i]; name has its dashes stripped. */
static int launch_opt(launch_opts_t *o, launch_seg_t *seg, bool first, int argc, char **argv,
                      int *i)
{
    char name[64];
    const char *arg = argv[*i], *eq = strchr(arg, '='), *v;
    size_t len;

    arg += arg[1] == '-' ? 2 : 1;
    len = eq && arg[1] ? (size_t)(eq - arg) : strlen(arg);
    if (!eq || !arg[1])
        eq = NULL;
    snprintf(name, sizeof(name), "%.*s", (int)len, arg);

    if (launch_is(name, "n", "np") || launch_is(name, "c", "npernode") ||
        launch_is(name, "N", NULL)) {
        if (launch_is(name, "npernode", "N"))
            return launch_opts_fail("-%s is not supported: use -n with --host h:N", name);
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        if (!launch_parse_int(v, 1, &seg->nprocs))
            return launch_opts_fail("bad number of ranks '%s'", v);
    } else if (launch_is(name, "H", "host") || launch_is(name, "hosts", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        return launch_parse_host_list(o, v);
    } else if (launch_is(name, "hostfile", "machinefile") || launch_is(name, "f", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        return launch_parse_hostfile(o, v);
    } else if (launch_is(name, "map-by", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        if (strcasecmp(v, "slot") == 0)
            o->map = LAUNCH_MAP_SLOT;
        else if (strcasecmp(v, "node") == 0)
            o->map = LAUNCH_MAP_NODE;
        else if (strcasecmp(v, "core") == 0)
            o->map = LAUNCH_MAP_CORE;
        else
            return launch_opts_fail("--map-by %s: use slot, node or core", v);
    } else if (launch_is(name, "bind-to", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        if (strcasecmp(v, "core") == 0)
            o->job->bind = LAUNCH_BIND_CORE;
        else if (strcasecmp(v, "none") == 0)
            o->job->bind = LAUNCH_BIND_NONE;
        else
            return launch_opts_fail("--bind-to %s: use core or none", v);
    } else if (launch_is(name, "x", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        return launch_opt_x(o, seg, first, v);
    } else if (launch_is(name, "param", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        return launch_opt_param(o, v);
    } else if (launch_is(name, "tag-output", NULL)) {
        o->job->tag_output = true;
    } else if (launch_is(name, "timeout", NULL)) {
        char *end;
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        o->timeout = strtod(v, &end);
        if (end == v || *end || o->timeout <= 0)
            return launch_opts_fail("bad --timeout '%s'", v);
    } else if (launch_is(name, "wdir", "wd")) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        free(o->job->wdir);
        o->job->wdir = launch_xstrdup(v);
    } else if (launch_is(name, "launch-agent", NULL)) {
        if (!(v = launch_optval(argc, argv, i, eq, argv[*i])))
            return -1;
        free(o->agent);
        o->agent = launch_xstrdup(v);
    } else if (launch_is(name, "v", "verbose")) {
        o->job->verbose++;
    } else if (launch_is(name, "oversubscribe", "allow-run-as-root")) {
        /* accepted for compatibility: we always may */
    } else if (launch_is(name, "version", "V")) {
        printf("%s (Rail MPI) %s\n", launch_progname, PACKAGE_VERSION);
        return 1;
    } else if (launch_is(name, "help", "h")) {
        printf(launch_usage, launch_progname);
        return 1;
    } else {
        return launch_opts_fail("unknown option %s", argv[*i]);
    }
    return 0;
}

/* Options up to the program, then the program and its arguments up to ':'. */
static int launch_parse_segment(launch_opts_t *o, launch_seg_t *seg, bool first, int argc,
                                char **argv, int *i)
{
    int rc;

    seg->nprocs = -1;
    for (; *i < argc && argv[*i][0] == '-' && argv[*i][1]; (*i)++) {
        if (strcmp(argv[*i], "--") == 0) {
            (*i)++;
            break;
        }
        if ((rc = launch_opt(o, seg, first, argc, argv, i)) != 0)
            return rc;
    }
    if (*i >= argc || strcmp(argv[*i], ":") == 0)
        return launch_opts_fail("no program given");
    for (; *i < argc && strcmp(argv[*i], ":") != 0; (*i)++)
        launch_strv_append(&seg->argv, argv[*i]);
    if (*i < argc)
        (*i)++; /* the ':' */
    return 0;
}

/* ------------------------------------------------------------ mapping */

static int *launch_map(launch_opts_t *o, int size)
{
    int *host_of = launch_xcalloc((size_t)size, sizeof(int));
    int *used = launch_xcalloc((size_t)o->nhosts, sizeof(int));
    int r = 0, h = 0, over = 0;

    if (o->map == LAUNCH_MAP_NODE) {
        /* Deal one rank per host with a free slot, round and round. */
        for (bool any = true; r < size && any;) {
            any = false;
            for (h = 0; h < o->nhosts && r < size; h++) {
                if (used[h] < o->slots[h]) {
                    used[h]++;
                    host_of[r++] = h;
                    any = true;
                }
            }
        }
    } else {
        /* Fill each host's slots before the next one. */
        for (h = 0; h < o->nhosts && r < size; h++)
            while (used[h] < o->slots[h] && r < size) {
                used[h]++;
                host_of[r++] = h;
            }
    }
    /* More ranks than slots: deal the rest round-robin. */
    for (; r < size; r++)
        host_of[r] = over++ % o->nhosts;
    free(used);
    return host_of;
}

static void launch_forward_rail_env(launch_job_t *job)
{
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "RAIL_", 5) == 0)
            launch_env_set(&job->env, *e);
}

static int launch_build_job(launch_opts_t *o, launch_seg_t *segs, int nsegs)
{
    launch_job_t *job = o->job;
    int total_slots = 0, *host_of;
    uint8_t rnd[4];

    if (o->nhosts == 0) {
        char host[HOST_NAME_MAX + 1] = "localhost";
        gethostname(host, sizeof(host) - 1);
        launch_add_host(o, host, launch_local_cpus());
    }
    for (int h = 0; h < o->nhosts; h++)
        total_slots += o->slots[h];
    job->napps = nsegs;
    job->apps = launch_xcalloc((size_t)nsegs, sizeof(launch_app_t));
    for (int a = 0; a < nsegs; a++) {
        job->apps[a].nprocs = segs[a].nprocs > 0 ? segs[a].nprocs : total_slots;
        job->apps[a].first_rank = job->size;
        job->apps[a].argv = segs[a].argv;
        job->apps[a].env = segs[a].env ? segs[a].env : launch_xcalloc(1, sizeof(char *));
        job->size += job->apps[a].nprocs;
    }
    job->universe = job->size > total_slots ? job->size : total_slots;
    /* RAILRT_JOBID (tests): a given job id, so that the caller knows which
     * /dev/shm/rail-<jobid>-* names are this job's. */
    const char *given = getenv("RAILRT_JOBID");
    if (given && *given && strlen(given) < sizeof(job->jobid) &&
        strspn(given, "0123456789abcdef") == strlen(given)) {
        snprintf(job->jobid, sizeof(job->jobid), "%s", given);
    } else {
        if (launch_random(rnd, sizeof(rnd)) != 0)
            return launch_opts_fail("no random numbers: %s", strerror(errno));
        launch_hex(rnd, sizeof(rnd), job->jobid);
    }
    snprintf(job->nspace, sizeof(job->nspace), "rail.%s", job->jobid);
    host_of = launch_map(o, job->size);
    if (launch_job_set_map(job, o->nhosts, o->hosts, host_of) != 0) {
        free(host_of);
        return launch_opts_fail("internal error: bad mapping");
    }
    free(host_of);
    return 0;
}

int launch_opts_parse(int argc, char **argv, launch_opts_t *o)
{
    launch_seg_t *segs = NULL;
    int nsegs = 0, i = 1, rc = 0;
    char cwd[PATH_MAX];

    memset(o, 0, sizeof(*o));
    o->job = launch_xcalloc(1, sizeof(launch_job_t));
    o->job->env = launch_xcalloc(1, sizeof(char *));
    o->job->unset_env = launch_xcalloc(1, sizeof(char *));
    launch_forward_rail_env(o->job);
    if (argc < 2) {
        fprintf(stderr, launch_usage, launch_progname);
        return -1;
    }
    /* MPIEXEC_TIMEOUT: the time limit other launchers (Open MPI's, MPICH's
     * hydra) and test harnesses use; --timeout overrides it. */
    const char *tmo = getenv("MPIEXEC_TIMEOUT");
    if (tmo && *tmo) {
        char *end;
        o->timeout = strtod(tmo, &end);
        if (end == tmo || *end || o->timeout <= 0)
            return launch_opts_fail("bad MPIEXEC_TIMEOUT '%s' (seconds wanted)", tmo);
    }
    while (i < argc && rc == 0) {
        segs = realloc(segs, sizeof(*segs) * (size_t)(nsegs + 1));
        memset(&segs[nsegs], 0, sizeof(*segs));
        rc = launch_parse_segment(o, &segs[nsegs], nsegs == 0, argc, argv, &i);
        nsegs++;
    }
    if (rc == 0) {
        if (!o->job->wdir)
            o->job->wdir = launch_xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : "/");
        if (!o->agent)
            o->agent = launch_xstrdup("ssh {host}");
        rc = launch_build_job(o, segs, nsegs);
    } else {
        for (int s = 0; s < nsegs; s++) {
            launch_strv_free(segs[s].argv);
            launch_strv_free(segs[s].env);
        }
    }
    free(segs);
    launch_verbose = o->job->verbose;
    return rc;
}
