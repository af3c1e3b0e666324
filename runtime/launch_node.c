/*
 * The node server: one host's ranks.  It forks and execs them (bound to cores
 * when asked or when there are enough cores), forwards their output as whole
 * lines, feeds rank 0's stdin, watches their exits and follows the root's
 * orders; launch_pmix.c is its PMIx server half.  Every message to the root
 * goes through nsrv.up.
 */
#include "runtime/launch_node_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pmix.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NODE_LINE_MAX (64 * 1024) /* a longer line is forwarded in pieces */

node_state_t nsrv;

/* ------------------------------------------------------------ messages up */

void node_send(void)
{
    lmsg_finish(&nsrv.msg);
    nsrv.up(&nsrv.msg);
}

void node_send_rank_state(int rank, int state, int status)
{
    lmsg_start(&nsrv.msg, LMSG_RANK_STATE);
    lbuf_put_i32(&nsrv.msg, rank);
    lbuf_put_i32(&nsrv.msg, state);
    lbuf_put_i32(&nsrv.msg, status);
    node_send();
}

void node_send_error(int status, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    lmsg_start(&nsrv.msg, LMSG_NODE_ERROR);
    lbuf_put_i32(&nsrv.msg, status);
    lbuf_put_str(&nsrv.msg, text);
    node_send();
}

/* ------------------------------------------------------------ rank output */

static void node_send_output(node_rank_t *r, int which, const char *a, size_t na, const char *b,
                             size_t nb)
{
    lmsg_start(&nsrv.msg, LMSG_OUTPUT);
    lbuf_put_i32(&nsrv.msg, r->rank);
    lbuf_put_i32(&nsrv.msg, which);
    lbuf_put_u32(&nsrv.msg, (uint32_t)(na + nb));
    lbuf_put(&nsrv.msg, a, na);
    lbuf_put(&nsrv.msg, b, nb);
    node_send();
}

/* Forward whole lines; keep the unfinished tail for later. */
static void node_output(node_rank_t *r, int which, const char *data, size_t n)
{
    lbuf_t *line = &r->line[which];
    const char *nl = memrchr(data, '\n', n);

    if (!nl) {
        lbuf_put(line, data, n);
        if (line->len >= NODE_LINE_MAX) {
            node_send_output(r, which, line->data, line->len, NULL, 0);
            lbuf_reset(line);
        }
        return;
    }
    size_t upto = (size_t)(nl - data) + 1;
    node_send_output(r, which, line->data, line->len, data, upto);
    lbuf_reset(line);
    lbuf_put(line, data + upto, n - upto);
}

static void node_flush_line(node_rank_t *r, int which)
{
    if (r->line[which].len)
        node_send_output(r, which, r->line[which].data, r->line[which].len, NULL, 0);
    lbuf_reset(&r->line[which]);
}

/* Read what the pipe holds; drain: until it is empty rather than a fair share. */
static void node_read_pipe(node_rank_t *r, int which, bool drain)
{
    int *fdp = which == 1 ? &r->out_fd : &r->err_fd;
    char buf[65536];

    for (int i = 0; *fdp >= 0 && (drain || i < 4); i++) {
        ssize_t n = read(*fdp, buf, sizeof(buf));
        if (n > 0) {
            node_output(r, which, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        node_flush_line(r, which);
        loop_fd_del(*fdp);
        close(*fdp);
        *fdp = -1;
    }
}

static void node_on_pipe(int fd, uint32_t events, void *arg)
{
    node_rank_t *r = arg;
    node_read_pipe(r, fd == r->out_fd ? 1 : 2, false);
}

/* ------------------------------------------------------------ rank 0's stdin */

static void node_stdin_ack(size_t n)
{
    lmsg_start(&nsrv.msg, LMSG_STDIN_ACK);
    lbuf_put_u32(&nsrv.msg, (uint32_t)n);
    node_send();
}

static void node_stdin_close(void)
{
    node_rank_t *r = nsrv.stdin_rank;
    if (r && r->in_fd >= 0) {
        loop_fd_del(r->in_fd);
        close(r->in_fd);
        r->in_fd = -1;
    }
}

static void node_on_stdin_writable(int fd, uint32_t events, void *arg);

static void node_stdin_write(void)
{
    node_rank_t *r = nsrv.stdin_rank;
    size_t done = 0;
    lbuf_t *b = &nsrv.stdin_buf;

    while (r && r->in_fd >= 0 && b->pos < b->len) {
        ssize_t n = write(r->in_fd, b->data + b->pos, b->len - b->pos);
        if (n > 0) {
            b->pos += (size_t)n;
            done += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            loop_fd_mod(r->in_fd, EPOLLOUT);
            break;
        } else {
            node_stdin_close(); /* the rank closed its stdin: drop the rest */
        }
    }
    if (!r || r->in_fd < 0) {
        done += b->len - b->pos; /* nobody reads: acknowledge everything */
        b->pos = b->len;
    }
    if (b->pos == b->len) {
        lbuf_reset(b);
        if (r && r->in_fd >= 0)
            loop_fd_mod(r->in_fd, 0);
        if (nsrv.stdin_eof)
            node_stdin_close();
    }
    if (done)
        node_stdin_ack(done);
}

static void node_on_stdin_writable(int fd, uint32_t events, void *arg)
{
    if (events & (EPOLLERR | EPOLLHUP))
        node_stdin_close(); /* rank 0 closed its stdin or exited */
    node_stdin_write();
}

/* ------------------------------------------------------------ exits */

static void node_finish(void)
{
    if (nsrv.done)
        return;
    nsrv.done = true;
    /* Whatever the ranks left running in their process groups goes too. */
    for (int i = 0; i < nsrv.nlocal; i++) {
        node_rank_t *r = &nsrv.ranks[i];
        if (r->pid > 0)
            kill(-r->pid, SIGKILL);
        node_read_pipe(r, 1, true);
        node_read_pipe(r, 2, true);
        for (int w = 1; w <= 2; w++) {
            int *fdp = w == 1 ? &r->out_fd : &r->err_fd;
            if (*fdp >= 0) {
                node_flush_line(r, w);
                loop_fd_del(*fdp);
                close(*fdp);
                *fdp = -1;
            }
        }
    }
    node_stdin_close();
    /* No PMIx_server_finalize(): libpmix 4.2 can deadlock in it (joining its
     * progress thread while that thread waits for a lock) when a client's
     * connection is still being torn down, e.g. after PMIx_Abort.  The
     * process exits soon; the server's files go with its directory. */
    if (nsrv.tmpdir[0]) {
        launch_rmtree(nsrv.tmpdir);
        nsrv.tmpdir[0] = '\0';
    }
    lmsg_start(&nsrv.msg, LMSG_NODE_DONE);
    node_send();
}

static void node_on_exit(pid_t pid, int status, void *arg)
{
    node_rank_t *r = arg;

    r->exited = true;
    /* Its last words come before the news of its death. */
    node_read_pipe(r, 1, true);
    node_read_pipe(r, 2, true);
    node_flush_line(r, 1);
    node_flush_line(r, 2);
    if (r == nsrv.stdin_rank)
        node_stdin_close();
    node_send_rank_state(r->rank, RANK_EXITED, status);
    if (--nsrv.nalive == 0)
        node_finish();
}

/* ------------------------------------------------------------ topology */

static int node_load_topology(void)
{
    /* hwloc's I/O and GPU plugins cost several ms to load and are useless
     * here; the ranks get the user's setting back (unset_env). */
    if (!getenv("HWLOC_PLUGINS_BLACKLIST")) {
        setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_xml_libxml,hwloc_opencl,hwloc_gl,hwloc_pci", 1);
        nsrv.set_hwloc_env = true;
    }
    if (hwloc_topology_init(&nsrv.topo) != 0)
        return -1;
    if (hwloc_topology_load(nsrv.topo) != 0) {
        hwloc_topology_destroy(nsrv.topo);
        nsrv.topo = NULL;
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ launching */

static void node_cpuset_of(hwloc_const_cpuset_t hs, node_rank_t *r)
{
    int cpu;
    r->cpus = CPU_ALLOC(CPU_SETSIZE * 8);
    CPU_ZERO_S(CPU_ALLOC_SIZE(CPU_SETSIZE * 8), r->cpus);
    hwloc_bitmap_foreach_begin(cpu, hs)
    {
        if (cpu < CPU_SETSIZE * 8)
            CPU_SET_S((size_t)cpu, CPU_ALLOC_SIZE(CPU_SETSIZE * 8), r->cpus);
    }
    hwloc_bitmap_foreach_end();
}

/* Default: one core per rank when the cores suffice, never when oversubscribed. */
static void node_plan_binding(void)
{
    int ncores = nsrv.topo ? hwloc_get_nbobjs_by_type(nsrv.topo, HWLOC_OBJ_CORE) : 0;
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;

    if (nsrv.job->bind == LAUNCH_BIND_NONE || !nsrv.topo)
        return;
    if (ncores <= 0) {
        type = HWLOC_OBJ_PU;
        ncores = hwloc_get_nbobjs_by_type(nsrv.topo, type);
    }
    if (ncores <= 0)
        return;
    if (nsrv.nlocal > ncores) {
        if (nsrv.job->bind == LAUNCH_BIND_DEFAULT) {
            launch_debug("%s: %d ranks on %d cores: oversubscribed, not binding", nsrv.info->name,
                         nsrv.nlocal, ncores);
            return;
        }
        launch_msg("warning: %s: binding %d ranks to %d cores: several ranks per core",
                   nsrv.info->name, nsrv.nlocal, ncores);
    }
    for (int i = 0; i < nsrv.nlocal; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(nsrv.topo, type, (unsigned)(i % ncores));
        char *s = NULL;
        node_cpuset_of(o->cpuset, &nsrv.ranks[i]);
        hwloc_bitmap_list_asprintf(&s, o->cpuset);
        launch_debug("%s: rank %d bound to core %d (cpus %s)", nsrv.info->name, nsrv.ranks[i].rank,
                     i % ncores, s ? s : "?");
        free(s);
    }
}

/* The environment the ranks start from: ours without PMIx wiring of any
 * launcher above us, plus the job's and the app's settings. */
static char **node_base_env(const launch_app_t *app)
{
    char **env = launch_env_copy(environ);
    for (int i = 0; env[i];) {
        if (strncmp(env[i], "PMIX_", 5) == 0 && strncmp(env[i], "PMIX_MCA_", 9) != 0) {
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)strcspn(env[i], "="), env[i]);
            launch_env_unset(env, name);
        } else {
            i++;
        }
    }
    if (nsrv.set_hwloc_env)
        launch_env_unset(env, "HWLOC_PLUGINS_BLACKLIST");
    for (int i = 0; nsrv.job->unset_env[i]; i++)
        launch_env_unset(env, nsrv.job->unset_env[i]);
    for (int i = 0; nsrv.job->env[i]; i++)
        launch_env_set(&env, nsrv.job->env[i]);
    for (int i = 0; app->env && app->env[i]; i++)
        launch_env_set(&env, app->env[i]);
    /* The job's size for MPI_Info_create_env before MPI_Init ("maxprocs"). */
    char size[32];
    snprintf(size, sizeof(size), "RAILRT_JOB_SIZE=%d", nsrv.job->size);
    launch_env_set(&env, size);
    return env;
}

static int node_prepare_rank(node_rank_t *r)
{
    const launch_app_t *app = &nsrv.job->apps[nsrv.job->rank_app[r->rank]];

    r->env = node_base_env(app);
    r->exe = launch_find_exe(app->argv[0], launch_env_get(r->env, "PATH"), nsrv.job->wdir);
    if (!r->exe) {
        node_send_error(127, "%s: cannot run '%s': %s", nsrv.info->name, app->argv[0],
                        strerror(errno));
        return -1;
    }
    return node_pmix_register_rank(r);
}

static void node_child_fail(const char *what, const char *exe)
{
    char buf[1024];
    int n = snprintf(buf, sizeof(buf), "%s: cannot %s %s: %s\n", launch_progname, what, exe,
                     strerror(errno));
    if (n > 0 && write(2, buf, (size_t)n) < 0)
        n = 0;
    _exit(127);
}

/* In the child, between fork and exec. */
static void node_child(node_rank_t *r, pid_t parent, int in_fd, int out_fd, int err_fd)
{
    const launch_app_t *app = &nsrv.job->apps[nsrv.job->rank_app[r->rank]];

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphans if we die */
    if (getppid() != parent)
        _exit(127);
    loop_child_reset_signals();
    if ((in_fd != 0 && dup2(in_fd, 0) < 0) || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    if (nsrv.nofile.rlim_max)
        setrlimit(RLIMIT_NOFILE, &nsrv.nofile);
    if (close_range(3, ~0U, 0) != 0)
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    if (r->cpus)
        sched_setaffinity(0, CPU_ALLOC_SIZE(CPU_SETSIZE * 8), r->cpus);
    if (chdir(nsrv.job->wdir) != 0)
        node_child_fail("change to directory", nsrv.job->wdir);
    execve(r->exe, app->argv, r->env);
    node_child_fail("execute", r->exe);
}

static int node_fork_rank(node_rank_t *r, int devnull)
{
    int out[2], err[2], in[2] = { -1, -1 }, child_in = devnull;
    pid_t pid, me = getpid();

    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return -1;
    if (r->rank == 0 && nsrv.stdin_inherit) {
        child_in = 0;
    } else if (r->rank == 0) {
        if (pipe2(in, O_CLOEXEC) != 0)
            return -1;
        child_in = in[0];
    }
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        node_child(r, me, child_in, out[1], err[1]);
    setpgid(pid, pid);
    __atomic_store_n(&r->pid, pid, __ATOMIC_RELEASE);   /* (libpmix's thread reads it) */
    close(out[1]);
    close(err[1]);
    r->out_fd = out[0];
    r->err_fd = err[0];
    launch_set_nonblock(r->out_fd);
    launch_set_nonblock(r->err_fd);
    loop_fd_add(r->out_fd, EPOLLIN, node_on_pipe, r);
    loop_fd_add(r->err_fd, EPOLLIN, node_on_pipe, r);
    if (in[0] >= 0) {
        close(in[0]);
        r->in_fd = in[1];
        launch_set_nonblock(r->in_fd);
        loop_fd_add(r->in_fd, 0, node_on_stdin_writable, r);
        nsrv.stdin_rank = r;
    }
    loop_child_watch(pid, node_on_exit, r);
    nsrv.nalive++;
    return 0;
}

static int node_make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    struct stat st;

    if (!base || !*base || stat(base, &st) != 0 || !S_ISDIR(st.st_mode))
        base = "/tmp";
    snprintf(nsrv.tmpdir, sizeof(nsrv.tmpdir), "%s/rail-%s-n%d-XXXXXX", base, nsrv.job->jobid, nsrv.node_id);
    if (!mkdtemp(nsrv.tmpdir)) {
        node_send_error(1, "%s: cannot create a directory in %s: %s", nsrv.info->name, base,
                        strerror(errno));
        nsrv.tmpdir[0] = '\0';
        return -1;
    }
    return 0;
}

static void node_check_wdir(void)
{
    struct stat st;
    const char *home = getenv("HOME");

    if (stat(nsrv.job->wdir, &st) == 0 && S_ISDIR(st.st_mode))
        return;
    launch_msg("warning: %s: no directory %s here; the ranks start in %s", nsrv.info->name,
               nsrv.job->wdir, home ? home : "/");
    free(nsrv.job->wdir);
    nsrv.job->wdir = launch_xstrdup(home ? home : "/");
}

static void node_send_up_msg(void)
{
    lmsg_start(&nsrv.msg, LMSG_NODE_UP);
    lbuf_put_i32(&nsrv.msg, nsrv.nlocal);
    for (int i = 0; i < nsrv.nlocal; i++) {
        lbuf_put_i32(&nsrv.msg, nsrv.ranks[i].rank);
        lbuf_put_i32(&nsrv.msg, (int32_t)nsrv.ranks[i].pid);
    }
    node_send();
}

int launch_node_start(launch_job_t *job, int node_id, const launch_node_opts_t *opts,
                      launch_up_fn up)
{
    int devnull;

    nsrv.job = job;
    nsrv.node_id = node_id;
    nsrv.info = &job->nodes[node_id];
    nsrv.up = up;
    nsrv.nlocal = nsrv.info->nranks;
    nsrv.stdin_inherit = opts && opts->stdin_inherit;
    nsrv.ranks = launch_xcalloc((size_t)nsrv.nlocal, sizeof(node_rank_t));
    for (int i = 0; i < nsrv.nlocal; i++) {
        nsrv.ranks[i].rank = nsrv.info->ranks[i];
        nsrv.ranks[i].out_fd = nsrv.ranks[i].err_fd = nsrv.ranks[i].in_fd = -1;
    }
    nsrv.started = true;
    /* Three pipes per rank: take the hard fd limit, give the ranks the usual one. */
    if (getrlimit(RLIMIT_NOFILE, &nsrv.nofile) == 0 && nsrv.nofile.rlim_cur < nsrv.nofile.rlim_max) {
        struct rlimit raised = { nsrv.nofile.rlim_max, nsrv.nofile.rlim_max };
        setrlimit(RLIMIT_NOFILE, &raised);
    }
    node_check_wdir();
    if (node_make_tmpdir() != 0)
        goto fail;
    if (node_load_topology() != 0)
        launch_debug("%s: hwloc topology unavailable: not binding", nsrv.info->name);
    if (node_pmix_init() != 0)
        goto fail;
    if (node_pmix_register_nspace() != 0) {
        node_send_error(1, "%s: PMIx_server_register_nspace failed", nsrv.info->name);
        goto fail;
    }
    for (int i = 0; i < nsrv.nlocal; i++)
        if (node_prepare_rank(&nsrv.ranks[i]) != 0)
            goto fail;
    node_plan_binding();
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < nsrv.nlocal; i++) {
        if (node_fork_rank(&nsrv.ranks[i], devnull) != 0) {
            node_send_error(1, "%s: cannot start rank %d: %s", nsrv.info->name, nsrv.ranks[i].rank,
                            strerror(errno));
            close(devnull);
            launch_node_kill();
            goto fail;
        }
    }
    close(devnull);
    node_send_up_msg();
    return 0;
fail:
    if (nsrv.nalive == 0)
        node_finish();
    return -1;
}

void launch_node_kill(void)
{
    nsrv.killing = true;
    for (int i = 0; i < nsrv.nlocal; i++) {
        node_rank_t *r = &nsrv.ranks[i];
        if (r->pid > 0 && !r->exited) {
            kill(-r->pid, SIGKILL);
            kill(r->pid, SIGKILL);
        }
    }
}

static void node_forward_signal(int sig)
{
    for (int i = 0; i < nsrv.nlocal; i++) {
        node_rank_t *r = &nsrv.ranks[i];
        if (r->pid > 0 && !r->exited) {
            kill(-r->pid, sig);
            kill(r->pid, sig);
        }
    }
}

void launch_node_handle(uint32_t type, lbuf_t *p)
{
    switch (type) {
    case LMSG_FENCE_DOWN:
    case LMSG_DMODEX_RESP:
    case LMSG_DMODEX_SERVE:
        node_pmix_handle(type, p);
        break;
    case LMSG_SIGNAL:
        node_forward_signal(lbuf_get_i32(p));
        break;
    case LMSG_KILL:
        launch_node_kill();
        break;
    case LMSG_STDIN: {
        size_t n;
        const void *data = lbuf_get_bytes(p, &n);
        if (n == 0)
            nsrv.stdin_eof = true;
        else
            lbuf_put(&nsrv.stdin_buf, data, n);
        node_stdin_write();
        break;
    }
    default:
        launch_msg("%s: unexpected message %s", nsrv.info ? nsrv.info->name : "?", lmsg_name(type));
        break;
    }
}

bool launch_node_done(void)
{
    return !nsrv.started || nsrv.done;
}

void launch_node_final_cleanup(void)
{
    if (nsrv.cleaned || !nsrv.job)
        return;
    nsrv.cleaned = true;
    if (nsrv.tmpdir[0]) {
        launch_rmtree(nsrv.tmpdir);
        nsrv.tmpdir[0] = '\0';
    }
    launch_shm_cleanup(nsrv.job->jobid);
}
