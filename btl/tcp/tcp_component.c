/* btl tcp: parameters, init (secret, listening sockets, business card), finalize. */
#include "btl/tcp/tcp.h"
#include "base/log.h"
#include "base/param.h"
#include "btl/btl_rail.h"
#include "runtime/rte.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

btl_tcp_params_t btl_tcp_params;
btl_tcp_module_t btl_tcp_module;

static int btl_tcp_register_params(void)
{
    btl_tcp_params_t *p = &btl_tcp_params;
    const int U = RAIL_PARAM_LEVEL_USER, T = RAIL_PARAM_LEVEL_TUNER, D = RAIL_PARAM_LEVEL_DEV;
    int rc = MPI_SUCCESS;

    RAIL_CHECK(btl_rail_register_params());
    RAIL_CHECK(rail_param_register_int("btl_tcp_priority", 10,
        "Priority of btl tcp among the btls that reach a peer (higher wins)", T, &p->priority));
    RAIL_CHECK(rail_param_register_string("btl_tcp_if_include", "", NULL,
        "IPv4 interfaces btl tcp uses: comma-separated names (eth0) and subnets "
        "(10.1.0.0/16); empty: every interface that is up (see btl_tcp_if_exclude)", U,
        &p->if_include));
    RAIL_CHECK(rail_param_register_string("btl_tcp_if_exclude", "", NULL,
        "IPv4 interfaces btl tcp does not use (names and subnets, as btl_tcp_if_include); "
        "loopback is used only when the job runs on one node or nothing else is left", U,
        &p->if_exclude));
    RAIL_CHECK(rail_param_register_int("btl_tcp_port_min", 0,
        "First TCP port btl tcp tries to listen on (0: any port the system picks)", U,
        &p->port_min));
    RAIL_CHECK(rail_param_register_int("btl_tcp_port_range", 1000,
        "Number of ports from btl_tcp_port_min that btl tcp may try", U, &p->port_range));
    RAIL_CHECK(rail_param_register_size("btl_tcp_eager_limit", 64 * 1024,
        "Largest message (payload bytes) the pml sends eagerly through btl tcp", T,
        &p->eager_limit));
    RAIL_CHECK(rail_param_register_size("btl_tcp_max_send_size", 256 * 1024,
        "Largest header + payload of one btl tcp send (the pml's fragment size)", T,
        &p->max_send_size));
    RAIL_CHECK(rail_param_register_size("btl_tcp_sndbuf", 0,
        "Socket send buffer size (SO_SNDBUF; 0: let the kernel size it)", T, &p->sndbuf));
    RAIL_CHECK(rail_param_register_size("btl_tcp_rcvbuf", 0,
        "Socket receive buffer size (SO_RCVBUF; 0: let the kernel size it)", T, &p->rcvbuf));
    RAIL_CHECK(rail_param_register_bool("btl_tcp_nodelay", true,
        "Disable Nagle's algorithm (TCP_NODELAY) on btl tcp connections", T, &p->nodelay));
    RAIL_CHECK(rail_param_register_size("btl_tcp_queue_limit", 256 * 1024,
        "Bytes btl tcp queues per peer when the socket is full before send says "
        "\"try again\" (the rest of a partly written message is always queued)", T,
        &p->queue_limit));
    RAIL_CHECK(rail_param_register_size("btl_tcp_recv_buf_size", 256 * 1024,
        "Bytes of each connection's receive buffer (larger payloads are read into a "
        "buffer of their own)", T, &p->recv_buf_size));
    RAIL_CHECK(rail_param_register_int("btl_tcp_handshake_timeout_ms", 10000,
        "Time a connect() may take, and an accepted connection may take to send its "
        "greeting", U, &p->handshake_timeout_ms));
    RAIL_CHECK(rail_param_register_int("btl_tcp_connect_wait_us", 2000,
        "Microseconds the send that opens a connection waits for it to come up, so that "
        "the greeting leaves at once (the rest is done by progress)", D,
        &p->connect_wait_us));
    RAIL_CHECK(rail_param_register_int("btl_tcp_max_handshakes", 128,
        "Incoming connections authenticated at once (more wait in the listen backlog)", D,
        &p->max_handshakes));
    RAIL_CHECK(rail_param_register_int("btl_tcp_finalize_timeout_ms", 5000,
        "How long finalize keeps writing queued bytes to peers", D, &p->finalize_timeout_ms));
    RAIL_CHECK(rail_param_register_int("btl_tcp_failover", -1,
        "Keep frames until the peer acknowledges them and resend them over another path "
        "(rail, plane) when a connection fails: 1 on, 0 off, -1 on where this host has several "
        "rails (principle: failover needs a second path; both ends must offer it)", U,
        &p->failover));
    RAIL_CHECK(rail_param_register_int("btl_tcp_user_timeout_ms", 10000,
        "With failover: TCP_USER_TIMEOUT and keepalive of btl tcp connections, how long sent "
        "data may stay unacknowledged (a link that went down, or a peer that does not read) "
        "before the path counts as failed; 0: the kernel's (about 15 minutes) (principle: "
        "far above a LAN's retransmission times)",
        U, &p->user_timeout_ms));
    RAIL_CHECK(rail_param_register_size("btl_tcp_failover_window", 8 << 20,
        "Bytes of frames kept per peer until acknowledged, with failover; more waits "
        "(principle: above the kernel's default socket buffers, 4 MiB each way, so that it "
        "does not limit a healthy stream)", T, &p->failover_window));
    RAIL_CHECK(rail_param_register_int("btl_tcp_reconnect_ms", 500,
        "First wait before a failed path is tried again (doubled per failure, up to 16 times; "
        "principle: a link flap lasts about a second)", T, &p->reconnect_ms));
    RAIL_CHECK(btl_tcp_ft_register_pvars());
    RAIL_CHECK(rail_param_register_int("btl_tcp_verbose", 0,
        "Verbosity of btl tcp (the larger of this and btl_verbose)", D, &p->verbose));
fail:
    return rc;
}

/* Bring parameters into range, saying what changed. */
static void btl_tcp_check_params(void)
{
    btl_tcp_params_t *p = &btl_tcp_params;
    size_t v;
    if (p->max_send_size < 4096 || p->max_send_size > ((size_t)1 << 30)) {
        v = RAIL_MIN(RAIL_MAX(p->max_send_size, (size_t)4096), (size_t)1 << 30);
        rail_warn("btl_tcp_max_send_size %zu out of range [4k, 1g], using %zu", p->max_send_size, v);
        p->max_send_size = v;
    }
    if (p->eager_limit + BTL_TCP_HDR_MAX > p->max_send_size) {
        v = p->max_send_size - BTL_TCP_HDR_MAX;
        rail_warn("btl_tcp_eager_limit %zu exceeds max_send_size, using %zu", p->eager_limit, v);
        p->eager_limit = v;
    }
    if (p->recv_buf_size < 16384) {
        rail_warn("btl_tcp_recv_buf_size %zu < 16k, using 16k", p->recv_buf_size);
        p->recv_buf_size = 16384;
    }
    p->recv_buf_size = btl_tcp_pad8(p->recv_buf_size);
    if (p->port_min < 0 || p->port_min > 65535 || p->port_range < 1) {
        rail_warn("btl_tcp_port_min %d / btl_tcp_port_range %d invalid, using any port",
                  p->port_min, p->port_range);
        p->port_min = 0;
    }
    if (p->handshake_timeout_ms < 100)
        p->handshake_timeout_ms = 100;
    if (p->max_handshakes < 1)
        p->max_handshakes = 1;
    if (p->connect_wait_us < 0 || p->connect_wait_us > 1000000)
        p->connect_wait_us = 0;
    if (p->failover < -1 || p->failover > 1) {
        rail_warn("btl_tcp_failover %d is not -1, 0 or 1, using -1", p->failover);
        p->failover = -1;
    }
    if (p->user_timeout_ms < 0)
        p->user_timeout_ms = 0;
    if (p->reconnect_ms < 10)
        p->reconnect_ms = 10;
    if (p->failover_window < p->max_send_size + 2 * BTL_TCP_HDR_MAX)
        p->failover_window = p->max_send_size + 2 * BTL_TCP_HDR_MAX;
}

uint64_t btl_tcp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Random bytes from the kernel; never a weaker source. */
int btl_tcp_random(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return MPI_ERR_OTHER;
        p += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

const char *btl_tcp_addr_str(const struct sockaddr_in *a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    return buf;
}

void btl_tcp_sockopts(int fd)
{
    int one = 1;
    if (btl_tcp_params.nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (btl_tcp_params.sndbuf) {
        int v = (int)RAIL_MIN(btl_tcp_params.sndbuf, (size_t)1 << 30);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    }
    if (btl_tcp_params.rcvbuf) {
        int v = (int)RAIL_MIN(btl_tcp_params.rcvbuf, (size_t)1 << 30);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    }
    btl_tcp_ft_sockopts(fd);
}

/* Bind fd to addr on a port of the configured range. */
static int btl_tcp_bind(int fd, struct sockaddr_in *addr)
{
    const btl_tcp_params_t *p = &btl_tcp_params;
    int tries = p->port_min ? RAIL_MIN(p->port_range, 65536 - p->port_min) : 1;
    for (int i = 0; i < tries; i++) {
        addr->sin_port = htons((uint16_t)(p->port_min ? p->port_min + i : 0));
        if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) == 0)
            return 0;
        if (errno != EADDRINUSE)
            return -1;
    }
    errno = EADDRINUSE;
    return -1;
}

static int btl_tcp_listen_on(btl_tcp_module_t *m, const btl_tcp_if_t *f)
{
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(f->addr)};
    socklen_t len = sizeof(a);
    char buf[64];

    if (fd < 0)
        goto fail;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    btl_tcp_sockopts(fd);              /* accepted sockets inherit these */
    if (btl_tcp_bind(fd, &a) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        goto fail;
    btl_tcp_listener_t *l = &m->listeners[m->n_listeners++];
    l->kind = BTL_TCP_KIND_LISTENER;
    l->fd = fd;
    l->addr = a;
    RAIL_VERBOSE(btl_tcp_verbosity(), 2, "btl tcp: listening on %s (%s)",
                 btl_tcp_addr_str(&a, buf, sizeof(buf)), f->name);
    return MPI_SUCCESS;
fail:
    rail_warn("btl tcp: cannot listen on %s (%s): %s; not using it",
              btl_tcp_addr_str(&a, buf, sizeof(buf)), f->name, strerror(errno));
    if (fd >= 0)
        close(fd);
    return MPI_ERR_OTHER;
}

/* Choose interfaces and listen on each; the number of listeners. */
static int btl_tcp_open_listeners(btl_tcp_module_t *m)
{
    int k = btl_tcp_if_backend(m, rte_info.num_nodes <= 1);
    m->n_ifs = 0;
    for (int i = 0; i < k; i++)
        if (btl_tcp_listen_on(m, &m->ifs[i]) == MPI_SUCCESS)
            m->ifs[m->n_ifs++] = m->ifs[i];
    if (m->n_listeners == 0)
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: no usable IPv4 interface (%d chosen by "
                     "btl_if_include/exclude, btl_tcp_if_include/exclude, btl_rails)", k);
    return m->n_listeners;
}

static int btl_tcp_publish(btl_tcp_module_t *m)
{
    btl_tcp_card_t card;
    memset(&card, 0, sizeof(card));
    card.magic = BTL_TCP_CARD_MAGIC;
    card.version = BTL_TCP_VERSION;
    card.n_addrs = (uint16_t)m->n_listeners;
    card.max_frame = (uint32_t)btl_tcp_frame_size(BTL_TCP_HDR_MAX, btl_tcp_params.max_send_size);
    card.n_rails = (uint16_t)m->n_rails;
    card.my_rail = (int8_t)m->my_rail;
    card.flags = m->failover ? BTL_TCP_CARD_FAILOVER : 0;
    memcpy(card.secret, m->secret, sizeof(card.secret));
    for (int i = 0; i < m->n_listeners; i++) {
        card.addrs[i].ip = m->listeners[i].addr.sin_addr.s_addr;
        card.addrs[i].port = m->listeners[i].addr.sin_port;
        card.addrs[i].prefix = m->ifs[i].prefix;
        card.addrs[i].flags = m->ifs[i].loopback ? BTL_TCP_ADDR_LOOPBACK : 0;
        card.addrs[i].rail = (int8_t)m->ifs[i].rail;
        snprintf(card.addrs[i].name, sizeof(card.addrs[i].name), "%s", m->ifs[i].name);
    }
    size_t len = offsetof(btl_tcp_card_t, addrs) + (size_t)m->n_listeners * sizeof(card.addrs[0]);
    int rc = rte_modex_put(BTL_TCP_MODEX_KEY, &card, len);
    memset(&card, 0, sizeof(card));
    return rc;
}

static int btl_tcp_finalize(btl_module_t *base);

static const btl_module_t btl_tcp_template = {
    .name = "tcp",
    .flags = BTL_FLAG_SEND,
    .add_procs = btl_tcp_add_procs,
    .del_procs = btl_tcp_del_procs,
    .send = btl_tcp_send,
    .progress = btl_tcp_progress,
    .wait_fd = -1,                 /* the epoll set, once made */
    .pending = btl_tcp_pending,
    .finalize = btl_tcp_finalize,
};

static void btl_tcp_module_reset(btl_tcp_module_t *m)
{
    for (int i = 0; i < m->n_listeners; i++)
        close(m->listeners[i].fd);
    if (m->epfd >= 0)
        close(m->epfd);
    memset(m, 0, sizeof(*m));
    m->epfd = -1;
}

static int btl_tcp_init(btl_module_t **mods, int *n)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    int max = *n;

    *n = 0;
    btl_tcp_register_params();
    btl_tcp_check_params();
    memset(m, 0, sizeof(*m));
    m->epfd = -1;
    if (max < 1 || rte_info.size < 2) {
        RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: no other process in the job");
        return MPI_SUCCESS;
    }
    if (btl_tcp_random(m->secret, sizeof(m->secret)) != MPI_SUCCESS) {
        rail_warn("btl tcp: no random numbers from the kernel (getrandom: %s); btl tcp disabled",
                  strerror(errno));
        return MPI_SUCCESS;
    }
    m->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (m->epfd < 0) {
        rail_warn("btl tcp: epoll_create1: %s; btl tcp disabled", strerror(errno));
        btl_tcp_module_reset(m);
        return MPI_SUCCESS;
    }
    if (btl_tcp_open_listeners(m) == 0) {
        btl_tcp_module_reset(m);
        return MPI_SUCCESS;
    }
    m->failover = btl_tcp_params.failover == 1 || (btl_tcp_params.failover < 0 && m->n_rails > 1);
    RAIL_VERBOSE(btl_tcp_verbosity(), 1, "btl tcp: failover %s (btl_tcp_failover=%d, %d rail(s))",
                 m->failover ? "offered" : "off", btl_tcp_params.failover, m->n_rails);
    if (btl_tcp_publish(m) != MPI_SUCCESS) {
        btl_tcp_module_reset(m);
        return MPI_SUCCESS;
    }
    m->super = btl_tcp_template;
    m->super.priority = btl_tcp_params.priority;
    m->super.eager_limit = btl_tcp_params.eager_limit;
    m->super.max_send_size = btl_tcp_params.max_send_size;
    m->super.wait_fd = m->epfd;
    m->my_rank = rte_info.rank;
    m->my_node = rte_info.node_id;
    m->pool_size = 64 * 1024;
    m->rbufs.size = btl_tcp_params.recv_buf_size;
    btl_tcp_jobtag(rte_info.nspace, m->jobtag);
    mods[0] = &m->super;
    *n = 1;
    return MPI_SUCCESS;
}

static int btl_tcp_finalize(btl_module_t *base)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    btl_tcp_close_all(m);
    btl_tcp_pool_free(m);
    memset(m->secret, 0, sizeof(m->secret));
    btl_tcp_module_reset(m);
    return MPI_SUCCESS;
}

const btl_component_t btl_tcp_component = {
    .name = "tcp",
    .priority = 10,
    .register_params = btl_tcp_register_params,
    .init = btl_tcp_init,
};
