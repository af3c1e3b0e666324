/*
 * mpirun (and mpiexec): the root of a job.
 *
 * It maps the ranks to hosts, runs the node server of its own host in-process,
 * starts raild on every other host through the launch agent, and then runs
 * the job's policy on one event loop: output and stdin forwarding, fences and
 * direct modex requests across hosts, signals, --timeout, and the rule that
 * the first failure (a signal, a nonzero exit, MPI_Abort) ends every rank and
 * sets the exit status.  See runtime/README.md.
 */
#include "runtime/mpirun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROOT_SIGNAL_GRACE_MS 1000.0     /* forwarded SIGTERM, then SIGKILL */
#define ROOT_EXIT_GRACE_MS 3000.0       /* raild/agents to leave after EXIT */
#define ROOT_STDIN_CREDIT (256 * 1024)  /* stdin bytes in flight to rank 0 */

root_t root = { .local_node = -1, .listen_fd = -1, .stdin_node = -1 };

/* ------------------------------------------------------------ messages */

static void root_deliver_local(void *arg)
{
    lbuf_t *m = arg;
    lbuf_t payload = { .data = m->data + 8, .len = m->len - 8, .cap = m->len - 8 };
    uint32_t type;

    memcpy(&type, m->data + 4, 4);
    launch_node_handle(ntohl(type), &payload);
    lbuf_free(m);
    free(m);
}

/* Send a finished message down to a node; the local node gets it on the
 * next loop turn, so the node server is never re-entered. */
void root_send(root_node_t *n, const lbuf_t *msg)
{
    if (n->done && !n->local)
        return;
    if (n->local) {
        lbuf_t *copy = launch_xcalloc(1, sizeof(*copy));
        lbuf_put(copy, msg->data, msg->len);
        loop_post(root_deliver_local, copy);
    } else if (n->conn) {
        lconn_send(n->conn, msg);
    }
}

void root_send_simple(root_node_t *n, uint32_t type)
{
    lbuf_t m;
    lbuf_init(&m);
    lmsg_start(&m, type);
    lmsg_finish(&m);
    root_send(n, &m);
    lbuf_free(&m);
}

/* ------------------------------------------------------------ failures */

const char *root_host_of(int rank)
{
    return root.job->nodes[root.job->rank_node[rank]].name;
}

void root_fail(int status, const char *fmt, ...)
{
    if (!root.have_failure && !root.quiet) {
        char text[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        root.have_failure = true;
        root.exit_status = status;
        launch_msg("%s", text);
    }
    root_terminate();
}

static void root_rank_exited(int rank, int status)
{
    root_rank_t *rr = &root.ranks[rank];
    const char *when = rr->finalized ? " after MPI_Finalize"
                       : rr->connected ? " before MPI_Finalize"
                                       : "";

    rr->exited = true;
    if (root.quiet)
        return;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        root_fail(128 + sig, "rank %d (host %s, pid %d) exited on signal %d (%s)", rank,
                  root_host_of(rank), (int)rr->pid, sig, launch_signame(sig));
    } else if (WEXITSTATUS(status) != 0) {
        root_fail(WEXITSTATUS(status), "rank %d (host %s, pid %d) exited with status %d%s", rank,
                  root_host_of(rank), (int)rr->pid, WEXITSTATUS(status), when);
    } else if (rr->connected && !rr->finalized) {
        launch_msg("warning: rank %d (host %s, pid %d) exited with status 0 without calling "
                   "MPI_Finalize",
                   rank, root_host_of(rank), (int)rr->pid);
    }
}

void root_finish(void)
{
    if (root.agents_alive == 0)
        loop_stop();
}

static void root_on_exit_grace(void *arg)
{
    root.exit_timer = 0;
    for (int i = 0; i < root.job->nnodes; i++)
        if (root.nodes[i].agent > 0)
            kill(-root.nodes[i].agent, SIGKILL);
    loop_stop();
}

static void root_all_nodes_done(void)
{
    if (root.all_done)
        return;
    root.all_done = true;
    loop_timer_cancel(root.timeout_timer);
    loop_timer_cancel(root.kill_timer);
    for (int i = 0; i < root.job->nnodes; i++) {
        root_node_t *n = &root.nodes[i];
        if (n->local) {
            launch_node_final_cleanup();
        } else if (n->conn) {
            lbuf_t m;
            lbuf_init(&m);
            lmsg_start(&m, LMSG_EXIT);
            lmsg_finish(&m);
            lconn_send(n->conn, &m);
            lbuf_free(&m);
        }
    }
    launch_shm_cleanup(root.job->jobid);
    root.exit_timer = loop_timer_add(ROOT_EXIT_GRACE_MS, root_on_exit_grace, NULL);
    root_finish();
}

void root_node_done(root_node_t *n)
{
    if (n->done)
        return;
    n->done = true;
    loop_timer_cancel(n->timer);
    n->timer = 0;
    if (++root.nodes_done == root.job->nnodes)
        root_all_nodes_done();
}

/* End every rank now. */
void root_terminate(void)
{
    if (root.terminating)
        return;
    root.terminating = root.quiet = true;
    loop_timer_cancel(root.timeout_timer);
    root.timeout_timer = 0;
    if (root.stdin_polled) {
        loop_fd_del(0);
        root.stdin_polled = false;
    }
    for (int i = 0; i < root.job->nnodes; i++) {
        root_node_t *n = &root.nodes[i];
        if (n->done)
            continue;
        if (n->local || n->conn) {
            root_send_simple(n, LMSG_KILL);
        } else {
            /* Not connected yet: stop its agent; it has no ranks to kill. */
            if (n->agent > 0)
                kill(-n->agent, SIGTERM);
            root_node_done(n);
        }
    }
}

/* ------------------------------------------------------------ output */

static void root_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            poll(&pf, 1, 1000);
        } else {
            return; /* stdout closed: drop the output, keep the job */
        }
    }
}

static void root_output(int rank, int fd, const char *data, size_t n)
{
    char tag[64];
    int tl;
    lbuf_t b;

    if (fd != 1 && fd != 2)
        return;
    if (!root.job->tag_output) {
        root_write_all(fd, data, n);
        return;
    }
    tl = snprintf(tag, sizeof(tag), "[1,%d]<%s>: ", rank, fd == 1 ? "stdout" : "stderr");
    lbuf_init(&b);
    while (n) {
        const char *nl = memchr(data, '\n', n);
        size_t len = nl ? (size_t)(nl - data) + 1 : n;
        lbuf_put(&b, tag, (size_t)tl);
        lbuf_put(&b, data, len);
        if (!nl)
            lbuf_put(&b, "\n", 1);
        data += len;
        n -= len;
    }
    root_write_all(fd, b.data, b.len);
    lbuf_free(&b);
}

/* ------------------------------------------------------------ stdin */

static void root_stdin_send(const void *data, size_t n)
{
    lbuf_t m;
    lbuf_init(&m);
    lmsg_start(&m, LMSG_STDIN);
    lbuf_put_bytes(&m, data, n);
    lmsg_finish(&m);
    root_send(&root.nodes[root.stdin_node], &m);
    lbuf_free(&m);
}

static void root_stdin_pump(void);

static void root_on_stdin(int fd, uint32_t events, void *arg)
{
    root_stdin_pump();
}

static void root_stdin_pump_later(void *arg)
{
    root_stdin_pump();
}

static void root_stdin_stop(void)
{
    if (root.stdin_polled)
        loop_fd_del(0);
    root.stdin_polled = false;
    root.stdin_eof = true;
}

/* Read stdin while rank 0's node has room; pause when the credit is spent. */
static void root_stdin_pump(void)
{
    char buf[65536];
    size_t want = root.stdin_credit < sizeof(buf) ? root.stdin_credit : sizeof(buf);
    ssize_t n;

    if (root.stdin_eof || root.terminating)
        return;
    if (want == 0) {
        if (root.stdin_polled && !root.stdin_paused)
            loop_fd_mod(0, 0);
        root.stdin_paused = true;
        return;
    }
    n = read(0, buf, want);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* end of file, or EIO for a terminal we do not own */
        root_stdin_stop();
        root_stdin_send(NULL, 0);
        return;
    }
    root.stdin_credit -= (size_t)n;
    root_stdin_send(buf, (size_t)n);
    if (!root.stdin_polled)
        loop_post(root_stdin_pump_later, NULL); /* a file: keep reading */
}

static void root_stdin_ack(size_t n)
{
    root.stdin_credit += n;
    if (root.stdin_paused && root.stdin_credit > 0) {
        root.stdin_paused = false;
        if (root.stdin_polled)
            loop_fd_mod(0, EPOLLIN);
        else
            root_stdin_pump();
    }
}

static void root_stdin_start(void)
{
    root.stdin_credit = ROOT_STDIN_CREDIT;
    if (fcntl(0, F_GETFL) < 0) {
        root_stdin_send(NULL, 0);
        root.stdin_eof = true;
        return;
    }
    if (loop_fd_add(0, EPOLLIN, root_on_stdin, NULL) == 0) {
        root.stdin_polled = true;
    } else {
        /* A regular file cannot be polled: read it as credit allows. */
        root_stdin_pump();
    }
}

/* ------------------------------------------------------------ node messages */

static void root_node_up(root_node_t *n, lbuf_t *p)
{
    int count = lbuf_get_i32(p);
    for (int i = 0; i < count && !p->bad; i++) {
        int rank = lbuf_get_i32(p);
        pid_t pid = lbuf_get_i32(p);
        if (rank >= 0 && rank < root.job->size)
            root.ranks[rank].pid = pid;
    }
    n->up = true;
    launch_debug("%s: %d ranks started", n->name, count);
    if (root.terminating)
        root_send_simple(n, LMSG_KILL);
    else if (n->id == root.stdin_node)
        root_stdin_start();
}

static void root_rank_state(lbuf_t *p)
{
    int rank = lbuf_get_i32(p), state = lbuf_get_i32(p), status = lbuf_get_i32(p);

    if (p->bad || rank < 0 || rank >= root.job->size)
        return;
    if (state == RANK_CONNECTED)
        root.ranks[rank].connected = true;
    else if (state == RANK_FINALIZED)
        root.ranks[rank].finalized = true;
    else if (state == RANK_EXITED)
        root_rank_exited(rank, status);
}

void root_handle(int node, uint32_t type, lbuf_t *p)
{
    root_node_t *n = &root.nodes[node];

    switch (type) {
    case LMSG_NODE_UP:
        root_node_up(n, p);
        break;
    case LMSG_NODE_ERROR: {
        int status = lbuf_get_i32(p);
        char *text = lbuf_get_str(p);
        root_fail(status, "%s", text ? text : "a node failed");
        free(text);
        break;
    }
    case LMSG_RANK_STATE:
        root_rank_state(p);
        break;
    case LMSG_OUTPUT: {
        int rank = lbuf_get_i32(p), fd = lbuf_get_i32(p);
        size_t len;
        const char *data = lbuf_get_bytes(p, &len);
        if (!p->bad)
            root_output(rank, fd, data, len);
        break;
    }
    case LMSG_ABORT: {
        int rank = lbuf_get_i32(p), code = lbuf_get_i32(p);
        if (p->bad || rank < 0 || rank >= root.job->size)
            break;
        root_fail((code & 0xff) ? (code & 0xff) : 1,
                  "rank %d (host %s, pid %d) called MPI_Abort with code %d: ending the job",
                  rank, root_host_of(rank), (int)root.ranks[rank].pid, code);
        break;
    }
    case LMSG_FENCE_UP:
        root_fence_up(node, p);
        break;
    case LMSG_DMODEX_REQ:
    case LMSG_DMODEX_DATA:
        root_dmodex(node, type, p);
        break;
    case LMSG_STDIN_ACK:
        root_stdin_ack(lbuf_get_u32(p));
        break;
    case LMSG_NODE_DONE:
        root_node_done(n);
        break;
    default:
        launch_msg("unexpected message %s from %s", lmsg_name(type), n->name);
        break;
    }
}

static void root_local_up(lbuf_t *msg)
{
    lbuf_t payload = { .data = msg->data + 8, .len = msg->len - 8, .cap = msg->len - 8 };
    uint32_t type;
    memcpy(&type, msg->data + 4, 4);
    root_handle(root.local_node, ntohl(type), &payload);
}

/* ------------------------------------------------------------ signals, timeout */

static void root_on_kill_timer(void *arg)
{
    root.kill_timer = 0;
    root_terminate();
}

static void root_forward_signal(int sig)
{
    lbuf_t m;
    lbuf_init(&m);
    lmsg_start(&m, LMSG_SIGNAL);
    lbuf_put_i32(&m, sig);
    lmsg_finish(&m);
    for (int i = 0; i < root.job->nnodes; i++)
        if (!root.nodes[i].done)
            root_send(&root.nodes[i], &m);
    lbuf_free(&m);
}

static void root_on_signal(int sig)
{
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        root_forward_signal(sig);
        return;
    }
    if (++root.nsignals > 1 || root.terminating) {
        root_terminate();
        return;
    }
    if (!root.have_failure) {
        root.have_failure = true;
        root.exit_status = 128 + sig;
    }
    launch_msg("received signal %d (%s): forwarding it to the ranks", sig, launch_signame(sig));
    root.quiet = true;
    root_forward_signal(sig);
    root.kill_timer = loop_timer_add(ROOT_SIGNAL_GRACE_MS, root_on_kill_timer, NULL);
}

static void root_on_timeout(void *arg)
{
    lbuf_t b;
    int running = 0, listed = 0;

    root.timeout_timer = 0;
    lbuf_init(&b);
    for (int r = 0; r < root.job->size; r++) {
        char one[300];
        int len;
        if (root.ranks[r].exited)
            continue;
        if (++running > 16)
            continue;
        len = snprintf(one, sizeof(one), "%s%d (host %s, pid %d)", listed++ ? ", " : "", r,
                       root_host_of(r), (int)root.ranks[r].pid);
        lbuf_put(&b, one, (size_t)len);
    }
    if (running > 16) {
        char more[64];
        int len = snprintf(more, sizeof(more), ", and %d more", running - 16);
        lbuf_put(&b, more, (size_t)len);
    }
    lbuf_put(&b, "", 1);
    root_fail(124, "timeout: the job ran for more than %g s; %d rank%s still running: %s",
              root.opts.timeout, running, running == 1 ? "" : "s", b.data);
    lbuf_free(&b);
}

/* ------------------------------------------------------------ main */

static void root_setup_nodes(void)
{
    root.nodes = launch_xcalloc((size_t)root.job->nnodes, sizeof(root_node_t));
    root.ranks = launch_xcalloc((size_t)root.job->size, sizeof(root_rank_t));
    for (int i = 0; i < root.job->nnodes; i++) {
        root_node_t *n = &root.nodes[i];
        n->id = i;
        n->name = root.job->nodes[i].name;
        n->agent_in = -1;
        if (root.local_node < 0 && launch_is_local_host(n->name)) {
            n->local = true;
            root.local_node = i;
        } else {
            root.nremote++;
        }
    }
    root.stdin_node = root.job->rank_node[0];
    if (launch_verbose) {
        for (int i = 0; i < root.job->nnodes; i++) {
            const launch_node_info_t *ni = &root.job->nodes[i];
            launch_debug("node %d: %s (%s): ranks %d..%d (%d)", i, ni->name,
                         root.nodes[i].local ? "this process" : "raild", ni->ranks[0],
                         ni->ranks[ni->nranks - 1], ni->nranks);
        }
    }
}

static const char *root_basename(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

int main(int argc, char **argv)
{
    int rc;

    launch_progname = root_basename(argv[0]);
    launch_fix_std_fds();
    rc = launch_opts_parse(argc, argv, &root.opts);
    if (rc != 0)
        return rc > 0 ? 0 : 1;
    root.job = root.opts.job;
    if (loop_init(root_on_signal) != 0) {
        launch_msg("cannot set up the event loop: %s", strerror(errno));
        return 1;
    }
    launch_debug("job %s: %d ranks, %d apps, %d nodes", root.job->jobid, root.job->size, root.job->napps,
                 root.job->nnodes);
    root_setup_nodes();
    /* Remote daemons first: they start while the local node does. */
    if (root_start_daemons() != 0) {
        root.exit_status = 1;
        root.have_failure = true;
        root_terminate();
    }
    if (root.local_node >= 0 && !root.terminating) {
        launch_node_opts_t nopts = { .stdin_inherit = root.stdin_node == root.local_node && !isatty(0) };
        if (nopts.stdin_inherit)
            root.stdin_node = -1;
        launch_node_start(root.job, root.local_node, &nopts, root_local_up);
    }
    if (root.opts.timeout > 0 && !root.terminating)
        root.timeout_timer = loop_timer_add(root.opts.timeout * 1000.0, root_on_timeout, NULL);
    if (!root.all_done)
        loop_run();
    for (int i = 0; i < root.job->nnodes; i++)
        if (root.nodes[i].agent > 0)
            kill(-root.nodes[i].agent, SIGKILL);
    launch_node_final_cleanup();
    launch_shm_cleanup(root.job->jobid);
    return root.exit_status;
}
