/*
 * mpirun: raild on the other hosts.  Each is started through the launch agent
 * with the job's secret on its stdin, connects back, and must prove it knows
 * the secret before it gets the job (runtime/README.md, wire protocol).
 */
#include "runtime/mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROOT_CONNECT_TIMEOUT_MS 60000.0 /* a raild must call back within this */
#define ROOT_MAX_MSG (1u << 30)

typedef struct root_auth {
    lconn_t *c;
    uint8_t nonce[32];
    uint64_t timer;
} root_auth_t;

static void root_conn_msg(lconn_t *c, uint32_t type, lbuf_t *p, void *arg)
{
    root_node_t *n = arg;
    root_handle(n->id, type, p);
}

static void root_conn_closed(lconn_t *c, void *arg)
{
    root_node_t *n = arg;
    n->conn = NULL;
    lconn_close(c);
    if (!n->done) {
        root_fail(1, "lost the connection to raild on %s", n->name);
        root_node_done(n);
    }
}

/* ------------------------------------------------------------ daemons */

static void root_auth_free(root_auth_t *a, bool close_conn)
{
    loop_timer_cancel(a->timer);
    if (close_conn && a->c)
        lconn_close(a->c);
    free(a);
}

static void root_auth_timeout(void *arg)
{
    root_auth_t *a = arg;
    a->timer = 0;
    launch_msg("warning: dropped a connection that did not authenticate in time");
    root_auth_free(a, true);
}

static void root_auth_closed(lconn_t *c, void *arg)
{
    root_auth_free(arg, true);
}

static void root_send_job(root_node_t *n)
{
    lbuf_t m;
    lbuf_init(&m);
    if (root.terminating) {
        lmsg_start(&m, LMSG_EXIT);
    } else {
        lmsg_start(&m, LMSG_JOB);
        launch_job_pack(root.job, &m);
    }
    lmsg_finish(&m);
    lconn_send(n->conn, &m);
    lbuf_free(&m);
    if (root.terminating)
        root_node_done(n);
}

static void root_auth_msg(lconn_t *c, uint32_t type, lbuf_t *p, void *arg)
{
    root_auth_t *a = arg;
    uint8_t want[32], mine[32], nodebe[4];
    const uint8_t *nonce, *mac;
    size_t nn = 0, nm = 0;
    int node = lbuf_get_i32(p);
    root_node_t *n;
    lbuf_t m;

    nonce = lbuf_get_bytes(p, &nn);
    mac = lbuf_get_bytes(p, &nm);
    if (type != LMSG_AUTH_RESPONSE || p->bad || nn != 32 || nm != 32 || node < 0 ||
        node >= root.job->nnodes || root.nodes[node].local || root.nodes[node].conn)
        goto reject;
    memcpy(nodebe, p->data, 4); /* the node number as sent */
    launch_hmac(root.secret, "raild", 5, a->nonce, 32, nodebe, 4, want);
    unsigned diff = 0;
    for (int i = 0; i < 32; i++)
        diff |= (unsigned)(want[i] ^ mac[i]);
    if (diff)
        goto reject;
    n = &root.nodes[node];
    launch_hmac(root.secret, "mpirun", 6, nonce, 32, nodebe, 4, mine);
    lbuf_init(&m);
    lmsg_start(&m, LMSG_AUTH_OK);
    lbuf_put_bytes(&m, mine, 32);
    lmsg_finish(&m);
    lconn_send(c, &m);
    lbuf_free(&m);
    a->c = NULL;
    root_auth_free(a, false);
    n->conn = c;
    loop_timer_cancel(n->timer);
    n->timer = 0;
    lconn_set_max_msg(c, ROOT_MAX_MSG);
    lconn_set_handlers(c, root_conn_msg, root_conn_closed, n);
    launch_debug("%s: raild connected", n->name);
    if (++root.nconnected == root.nremote && root.listen_fd >= 0) {
        loop_fd_del(root.listen_fd);
        close(root.listen_fd);
        root.listen_fd = -1;
    }
    root_send_job(n);
    return;
reject:
    launch_msg("warning: rejected a connection that failed to authenticate");
    root_auth_free(a, true);
}

static void root_on_accept(int fd, uint32_t events, void *arg)
{
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        root_auth_t *a;
        lbuf_t m;
        if (c < 0)
            return;
        a = launch_xcalloc(1, sizeof(*a));
        if (launch_random(a->nonce, 32) != 0 ||
            !(a->c = lconn_new(c, 256, root_auth_msg, root_auth_closed, a))) {
            close(c);
            free(a);
            continue;
        }
        a->timer = loop_timer_add(10000, root_auth_timeout, a);
        lbuf_init(&m);
        lmsg_start(&m, LMSG_AUTH_CHALLENGE);
        lbuf_put_bytes(&m, a->nonce, 32);
        lmsg_finish(&m);
        lconn_send(a->c, &m);
        lbuf_free(&m);
    }
}

static void root_on_agent_exit(pid_t pid, int status, void *arg)
{
    root_node_t *n = arg;

    n->agent = 0;
    root.agents_alive--;
    if (n->agent_in >= 0) {
        close(n->agent_in);
        n->agent_in = -1;
    }
    if (!n->done && !n->conn) {
        root_fail(1, "could not start raild on %s: the launch agent exited with %s %d", n->name,
                  WIFSIGNALED(status) ? "signal" : "status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        root_node_done(n);
    }
    if (root.all_done)
        root_finish();
}

static void root_connect_timeout(void *arg)
{
    root_node_t *n = arg;
    n->timer = 0;
    if (!n->conn && !n->done) {
        root_fail(1, "raild on %s did not connect back within %.0f s", n->name,
                  ROOT_CONNECT_TIMEOUT_MS / 1000);
        root_node_done(n);
    }
}

/* argv of the launch agent for a host, raild's path appended. */
static char **root_agent_argv(const char *host, const char *raild)
{
    char **argv = NULL, *tmpl = launch_xstrdup(root.opts.agent), *save = NULL;
    bool had_host = false;

    for (char *t = strtok_r(tmpl, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        lbuf_t b;
        lbuf_init(&b);
        for (char *s = t; *s;) {
            char *h = strstr(s, "{host}");
            size_t len = h ? (size_t)(h - s) : strlen(s);
            lbuf_put(&b, s, len);
            s += len;
            if (h) {
                lbuf_put(&b, host, strlen(host));
                s += 6;
                had_host = true;
            }
        }
        lbuf_put(&b, "", 1);
        launch_strv_append(&argv, b.data);
        lbuf_free(&b);
    }
    free(tmpl);
    if (!had_host)
        launch_strv_append(&argv, host);
    launch_strv_append(&argv, raild);
    if (root.job->verbose)
        launch_strv_append(&argv, "-v");
    return argv;
}

static char *root_raild_path(void)
{
    char self[PATH_MAX], *slash;
    const char *env = getenv("RAILRT_RAILD");
    ssize_t n;

    if (env && *env)
        return launch_xstrdup(env);
    n = readlink("/proc/self/exe", self, sizeof(self) - 8);
    if (n <= 0)
        return launch_xstrdup("raild");
    self[n] = '\0';
    slash = strrchr(self, '/');
    snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "raild");
    return launch_xstrdup(self);
}

static int root_start_agent(root_node_t *n, const char *raild, const char *addrs)
{
    char **argv = root_agent_argv(n->name, raild), hex[65], line[8192];
    int in[2];
    pid_t pid;

    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0); /* a ^C reaches mpirun, which ends the job in order */
        loop_child_reset_signals();
        if (dup2(in[0], 0) < 0 || dup2(2, 1) < 0)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "%s: cannot execute launch agent %s: %s\n", launch_progname, argv[0],
                strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(in[0]);
    n->agent = pid;
    n->agent_in = in[1];
    root.agents_alive++;
    loop_child_watch(pid, root_on_agent_exit, n);
    if (launch_verbose) {
        lbuf_t b;
        lbuf_init(&b);
        for (int i = 0; argv[i]; i++) {
            lbuf_put(&b, " ", 1);
            lbuf_put(&b, argv[i], strlen(argv[i]));
        }
        lbuf_put(&b, "", 1);
        launch_debug("%s: starting raild:%s", n->name, b.data);
        lbuf_free(&b);
    }
    launch_strv_free(argv);
    /* The secret travels on raild's stdin, never on a command line. */
    launch_hex(root.secret, 32, hex);
    snprintf(line, sizeof(line), LAUNCH_PROTOCOL " %d %s %d %s\n", n->id, hex, root.port, addrs);
    if (write(n->agent_in, line, strlen(line)) != (ssize_t)strlen(line))
        launch_msg("warning: %s: could not write to the launch agent: %s", n->name,
                   strerror(errno));
    n->timer = loop_timer_add(ROOT_CONNECT_TIMEOUT_MS, root_connect_timeout, n);
    return 0;
}

/* rte_if_include: --param or mpirun's environment (both end in the job's). */
static const char *root_frontend(void)
{
    static const char key[] = "RAIL_RTE_IF_INCLUDE=";
    for (char **e = root.job->env; e && *e; e++)
        if (strncmp(*e, key, sizeof(key) - 1) == 0)
            return *e + sizeof(key) - 1;
    return getenv("RAIL_RTE_IF_INCLUDE");
}

int root_start_daemons(void)
{
    char *raild, *addrs;
    int rc = 0;

    if (root.nremote == 0)
        return 0;
    root.listen_fd = net_listen(&root.port);
    if (root.listen_fd < 0 || launch_random(root.secret, sizeof(root.secret)) != 0) {
        launch_msg("cannot listen for raild connections: %s", strerror(errno));
        return -1;
    }
    loop_fd_add(root.listen_fd, EPOLLIN, root_on_accept, NULL);
    raild = root_raild_path();
    addrs = net_addresses(root_frontend());
    if (!addrs)
        return -1;
    launch_debug("listening on port %d at %s", root.port, addrs);
    for (int i = 0; i < root.job->nnodes && rc == 0; i++)
        if (!root.nodes[i].local)
            rc = root_start_agent(&root.nodes[i], raild, addrs);
    if (rc != 0)
        launch_msg("cannot start the launch agent: %s", strerror(errno));
    free(raild);
    free(addrs);
    return rc;
}

