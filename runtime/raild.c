/*
 * raild: the per-host daemon of a job, started by mpirun through the launch
 * agent (ssh, ip netns exec, ...).  It reads one line from stdin
 *     RAILD1 <node> <secret, 64 hex digits> <port> <addr>[,<addr>...]
 * connects back to mpirun, proves it knows the secret (and checks that
 * mpirun does), receives the job and runs the node server of its host until
 * mpirun says EXIT.  If mpirun goes away (connection or stdin closed) or a
 * signal arrives, it kills its ranks, cleans up and exits.
 */
#include "runtime/launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#define RAILD_HANDSHAKE_MS 30000

static struct {
    lconn_t *conn;
    launch_job_t *job;
    int node;
    char name[300];
} D = { .node = -1 };

/* Kill the ranks, wait for them, clean up, leave. */
static void raild_die(int status) __attribute__((noreturn));
static void raild_die(int status)
{
    launch_node_kill();
    for (int i = 0; i < 100; i++) { /* SIGKILL is quick: up to a second */
        pid_t p = waitpid(-1, NULL, WNOHANG);
        if (p < 0 && errno == ECHILD)
            break;
        if (p == 0)
            usleep(10000);
    }
    launch_node_final_cleanup();
    _exit(status);
}

static void raild_up(lbuf_t *msg)
{
    if (D.conn)
        lconn_send(D.conn, msg);
}

static void raild_msg(lconn_t *c, uint32_t type, lbuf_t *p, void *arg)
{
    if (type == LMSG_EXIT) {
        if (!launch_node_done())
            raild_die(1);
        launch_node_final_cleanup();
        lconn_flush(c, 1000);
        _exit(0);
    }
    launch_node_handle(type, p);
}

static void raild_closed(lconn_t *c, void *arg)
{
    D.conn = NULL;
    launch_msg("lost the connection to mpirun: ending the ranks");
    raild_die(1);
}

static void raild_on_stdin(int fd, uint32_t events, void *arg)
{
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
        return;
    loop_fd_del(fd);
    launch_debug("stdin closed: mpirun is gone");
    raild_die(1);
}

static void raild_on_signal(int sig)
{
    launch_msg("received signal %d (%s): ending the ranks", sig, launch_signame(sig));
    raild_die(128 + sig);
}

/* The first line of stdin, read one byte at a time so nothing after it is consumed. */
static int raild_read_line(char *line, size_t size)
{
    size_t n = 0;
    double end = loop_now_ms() + RAILD_HANDSHAKE_MS;

    while (n + 1 < size) {
        struct pollfd p = { .fd = 0, .events = POLLIN };
        int left = (int)(end - loop_now_ms());
        ssize_t r;
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        r = read(0, line + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    return 0;
}

static int raild_handshake(int fd, const uint8_t secret[32])
{
    lbuf_t m;
    uint32_t type, nodebe = htonl((uint32_t)D.node);
    uint8_t nonce[32], mac[32];
    const uint8_t *theirs;
    size_t n;
    int rc = -1;

    lbuf_init(&m);
    if (net_read_msg(fd, &m, &type, 256, RAILD_HANDSHAKE_MS) != 0 || type != LMSG_AUTH_CHALLENGE)
        goto out;
    theirs = lbuf_get_bytes(&m, &n);
    if (n != 32 || launch_random(nonce, 32) != 0)
        goto out;
    launch_hmac(secret, "raild", 5, theirs, 32, &nodebe, 4, mac);
    lmsg_start(&m, LMSG_AUTH_RESPONSE);
    lbuf_put_i32(&m, D.node);
    lbuf_put_bytes(&m, nonce, 32);
    lbuf_put_bytes(&m, mac, 32);
    lmsg_finish(&m);
    if (net_write_all(fd, m.data, m.len, RAILD_HANDSHAKE_MS) != 0)
        goto out;
    if (net_read_msg(fd, &m, &type, 256, RAILD_HANDSHAKE_MS) != 0 || type != LMSG_AUTH_OK)
        goto out;
    theirs = lbuf_get_bytes(&m, &n);
    launch_hmac(secret, "mpirun", 6, nonce, 32, &nodebe, 4, mac);
    if (n != 32)
        goto out;
    unsigned diff = 0;
    for (int i = 0; i < 32; i++)
        diff |= (unsigned)(mac[i] ^ theirs[i]);
    rc = diff ? -1 : 0;
out:
    lbuf_free(&m);
    return rc;
}

static int raild_connect(char *line)
{
    char proto[16], hex[80], addrs[4096], err[1024];
    uint8_t secret[32];
    int port, fd;

    if (sscanf(line, "%15s %d %79s %d %4095s", proto, &D.node, hex, &port, addrs) != 5 ||
        strcmp(proto, LAUNCH_PROTOCOL) != 0 || launch_unhex(hex, secret, 32) != 0) {
        launch_msg("bad start line on stdin (raild is started by mpirun, not by hand)");
        return -1;
    }
    memset(line, 0, strlen(line));
    fd = net_connect_any(addrs, port, 5000, err, sizeof(err));
    if (fd < 0) {
        launch_msg("cannot connect back to mpirun: %s", err);
        return -1;
    }
    if (raild_handshake(fd, secret) != 0) {
        launch_msg("authentication with mpirun failed");
        close(fd);
        return -1;
    }
    memset(secret, 0, sizeof(secret));
    return fd;
}

/* Wait for JOB (or EXIT when the job ended before we came up). */
static int raild_receive_job(int fd)
{
    lbuf_t m;
    uint32_t type;

    lbuf_init(&m);
    if (net_read_msg(fd, &m, &type, 1u << 30, RAILD_HANDSHAKE_MS) != 0) {
        launch_msg("no job from mpirun");
        lbuf_free(&m);
        return -1;
    }
    if (type == LMSG_EXIT) {
        lbuf_free(&m);
        _exit(0);
    }
    D.job = type == LMSG_JOB ? launch_job_unpack(&m) : NULL;
    lbuf_free(&m);
    if (!D.job || D.node < 0 || D.node >= D.job->nnodes) {
        launch_msg("malformed job from mpirun");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char line[8192];
    int fd;

    launch_progname = "raild";
    launch_fix_std_fds();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            launch_verbose++;
        } else {
            fprintf(stderr, "usage: raild [-v]   (started by mpirun through its launch agent)\n");
            return 2;
        }
    }
    if (loop_init(raild_on_signal) != 0)
        return 1;
    if (raild_read_line(line, sizeof(line)) != 0) {
        launch_msg("no start line on stdin (raild is started by mpirun, not by hand)");
        return 1;
    }
    if ((fd = raild_connect(line)) < 0 || raild_receive_job(fd) != 0)
        return 1;
    snprintf(D.name, sizeof(D.name), "raild[%s]", D.job->nodes[D.node].name);
    launch_progname = D.name;
    launch_verbose = launch_verbose > D.job->verbose ? launch_verbose : D.job->verbose;
    D.conn = lconn_new(fd, 1u << 30, raild_msg, raild_closed, NULL);
    if (!D.conn)
        return 1;
    if (loop_fd_add(0, EPOLLIN, raild_on_stdin, NULL) != 0)
        launch_debug("stdin cannot be watched: relying on the connection alone");
    launch_node_start(D.job, D.node, NULL, raild_up);
    loop_run();
    raild_die(1);
}
