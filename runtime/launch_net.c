/*
 * TCP between mpirun and the raild daemons: framed messages over
 * non-blocking sockets driven by the event loop, plus the blocking helpers
 * raild uses for its handshake before it has a loop.
 */
#include "runtime/launch.h"
#include "base/netif.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct lconn {
    int fd;
    size_t max_msg;
    lbuf_t in;   /* received bytes not yet dispatched */
    lbuf_t out;  /* queued bytes; out.pos = how much is written */
    lconn_msg_fn on_msg;
    lconn_close_fn on_close;
    void *arg;
    bool closed;
    bool want_out;
    int busy; /* >0 while dispatching: defer the free */
    bool free_pending;
};

static void lconn_free(lconn_t *c)
{
    lbuf_free(&c->in);
    lbuf_free(&c->out);
    free(c);
}

static void lconn_shutdown(lconn_t *c, bool notify)
{
    if (c->closed)
        return;
    c->closed = true;
    loop_fd_del(c->fd);
    close(c->fd);
    c->fd = -1;
    if (notify && c->on_close)
        c->on_close(c, c->arg);
}

static void lconn_update_events(lconn_t *c)
{
    bool want = c->out.pos < c->out.len;
    if (c->closed || want == c->want_out)
        return;
    c->want_out = want;
    loop_fd_mod(c->fd, EPOLLIN | (want ? EPOLLOUT : 0));
}

static void lconn_write_some(lconn_t *c)
{
    while (!c->closed && c->out.pos < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out.pos, c->out.len - c->out.pos, MSG_NOSIGNAL);
        if (n > 0) {
            c->out.pos += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            lconn_shutdown(c, true);
            return;
        }
    }
    if (c->out.pos == c->out.len)
        lbuf_reset(&c->out);
    lconn_update_events(c);
}

/* Dispatch every complete message in c->in. */
static void lconn_dispatch(lconn_t *c)
{
    size_t off = 0;

    while (!c->closed && c->in.len - off >= 8) {
        uint32_t len, type;
        memcpy(&len, c->in.data + off, 4);
        len = ntohl(len);
        if (len < 4 || len - 4 > c->max_msg) {
            launch_msg("dropping a connection that sent a malformed message (%u bytes)", len);
            lconn_shutdown(c, true);
            return;
        }
        if (c->in.len - off < 4 + (size_t)len)
            break;
        memcpy(&type, c->in.data + off + 4, 4);
        lbuf_t payload = { .data = c->in.data + off + 8, .len = len - 4, .cap = len - 4 };
        off += 4 + (size_t)len;
        c->on_msg(c, ntohl(type), &payload, c->arg);
    }
    if (!c->closed && off) {
        memmove(c->in.data, c->in.data + off, c->in.len - off);
        c->in.len -= off;
    }
}

static void lconn_on_event(int fd, uint32_t events, void *arg)
{
    lconn_t *c = arg;
    char buf[65536];

    c->busy++;
    if (events & EPOLLOUT)
        lconn_write_some(c);
    if (!c->closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
        for (;;) {
            ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
            if (n > 0) {
                lbuf_put(&c->in, buf, (size_t)n);
                if ((size_t)n < sizeof(buf))
                    break;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                break;
            } else {
                lconn_dispatch(c); /* what arrived before the end still counts */
                lconn_shutdown(c, true);
                break;
            }
        }
        lconn_dispatch(c);
    }
    if (--c->busy == 0 && c->free_pending)
        lconn_free(c);
}

lconn_t *lconn_new(int fd, size_t max_msg, lconn_msg_fn on_msg, lconn_close_fn on_close,
                   void *arg)
{
    lconn_t *c = launch_xcalloc(1, sizeof(*c));
    int one = 1;

    c->fd = fd;
    c->max_msg = max_msg;
    c->on_msg = on_msg;
    c->on_close = on_close;
    c->arg = arg;
    launch_set_nonblock(fd);
    launch_set_cloexec(fd);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (loop_fd_add(fd, EPOLLIN, lconn_on_event, c) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void lconn_set_max_msg(lconn_t *c, size_t max_msg)
{
    c->max_msg = max_msg;
}

void lconn_set_handlers(lconn_t *c, lconn_msg_fn on_msg, lconn_close_fn on_close, void *arg)
{
    c->on_msg = on_msg;
    c->on_close = on_close;
    c->arg = arg;
}

int lconn_fd(lconn_t *c)
{
    return c->fd;
}

void lconn_send(lconn_t *c, const lbuf_t *msg)
{
    if (c->closed)
        return;
    lbuf_put(&c->out, msg->data, msg->len);
    if (c->want_out)
        return;
    c->busy++;
    lconn_write_some(c);
    if (--c->busy == 0 && c->free_pending)
        lconn_free(c);
}

void lconn_flush(lconn_t *c, int timeout_ms)
{
    double end = loop_now_ms() + timeout_ms;
    c->busy++;
    while (!c->closed && c->out.pos < c->out.len) {
        struct pollfd p = { .fd = c->fd, .events = POLLOUT };
        int left = (int)(end - loop_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        lconn_write_some(c);
    }
    if (--c->busy == 0 && c->free_pending)
        lconn_free(c);
}

void lconn_close(lconn_t *c)
{
    lconn_shutdown(c, false);
    if (c->busy)
        c->free_pending = true;
    else
        lconn_free(c);
}

int net_listen(int *port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Whether interface i is one the frontend list (rte_if_include) takes. */
static bool net_frontend_ok(struct ifaddrs *i, rail_netif_rules_t *rules)
{
    rail_netif_t f = {.addr = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr)};
    if (!rules->n)
        return true;
    snprintf(f.name, sizeof(f.name), "%s", i->ifa_name);
    return rail_netif_rules_match(rules, &f) >= 0;
}

char *net_addresses(const char *frontend)
{
    struct ifaddrs *ifs = NULL;
    rail_netif_rules_t rules;
    lbuf_t b;
    char addr[INET_ADDRSTRLEN];

    rail_netif_rules_parse(frontend, &rules);
    lbuf_init(&b);
    if (getifaddrs(&ifs) == 0) {
        for (int pass = 0; pass < 2; pass++) {
            for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
                bool loopback = i->ifa_flags & IFF_LOOPBACK;
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                    continue;
                if (loopback != (pass == 1) || !net_frontend_ok(i, &rules))
                    continue;
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, addr,
                          sizeof(addr));
                if (b.len)
                    lbuf_put(&b, ",", 1);
                lbuf_put(&b, addr, strlen(addr));
            }
        }
        freeifaddrs(ifs);
    }
    if (rules.n_bad || (rules.n && !b.len)) {
        launch_msg("rte_if_include=%s: %s", frontend, rules.n_bad ?
                   "entries that are neither interface names nor IPv4 subnets" :
                   "matches no interface that is up on this host");
        free(b.data);
        return NULL;
    }
    if (!b.len)
        lbuf_put(&b, "127.0.0.1", 9);
    lbuf_put(&b, "", 1);
    return b.data;
}

static int net_connect_one(const char *addr, int port, int timeout_ms, char *err, size_t errlen)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd, so = 0;
    socklen_t sl = sizeof(so);
    struct pollfd p;

    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "%s: not an IPv4 address", addr);
        return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS)
        goto fail;
    p = (struct pollfd){ .fd = fd, .events = POLLOUT };
    if (poll(&p, 1, timeout_ms) != 1) {
        errno = ETIMEDOUT;
        goto fail;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0) {
        errno = so ? so : errno;
        goto fail;
    }
    return fd;
fail:
    snprintf(err, errlen, "%s:%d: %s", addr, port, strerror(errno));
    close(fd);
    return -1;
}

int net_connect_any(const char *addrs, int port, int timeout_ms, char *err, size_t errlen)
{
    char *list = launch_xstrdup(addrs), *save = NULL;
    int fd = -1;
    size_t used = 0;

    err[0] = '\0';
    for (char *a = strtok_r(list, ",", &save); a && fd < 0; a = strtok_r(NULL, ",", &save)) {
        char one[256];
        fd = net_connect_one(a, port, timeout_ms, one, sizeof(one));
        if (fd < 0 && used < errlen) {
            int n = snprintf(err + used, errlen - used, "%s%s", used ? "; " : "", one);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    free(list);
    return fd;
}

int net_write_all(int fd, const void *p, size_t n, int timeout_ms)
{
    const char *c = p;
    double end = loop_now_ms() + timeout_ms;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w > 0) {
            c += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        struct pollfd pf = { .fd = fd, .events = POLLOUT };
        int left = (int)(end - loop_now_ms());
        if (left <= 0 || poll(&pf, 1, left) < 0)
            return -1;
    }
    return 0;
}

static int net_read_exact(int fd, void *p, size_t n, double end)
{
    char *c = p;
    while (n) {
        ssize_t r = recv(fd, c, n, 0);
        if (r > 0) {
            c += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        int left = (int)(end - loop_now_ms());
        if (left <= 0 || poll(&pf, 1, left) < 0)
            return -1;
    }
    return 0;
}

int net_read_msg(int fd, lbuf_t *msg, uint32_t *type, size_t max, int timeout_ms)
{
    double end = loop_now_ms() + timeout_ms;
    uint32_t hdr[2], len;

    if (net_read_exact(fd, hdr, 8, end) != 0)
        return -1;
    len = ntohl(hdr[0]);
    *type = ntohl(hdr[1]);
    if (len < 4 || len - 4 > max)
        return -1;
    lbuf_reset(msg);
    if (len > 4) {
        char *tmp = launch_xmalloc(len - 4);
        if (net_read_exact(fd, tmp, len - 4, end) != 0) {
            free(tmp);
            return -1;
        }
        lbuf_put(msg, tmp, len - 4);
        free(tmp);
    }
    return 0;
}
