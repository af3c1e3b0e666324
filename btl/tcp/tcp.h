/*
 * btl tcp: active messages over TCP sockets (internal definitions).
 *
 * One module per process.  init() picks IPv4 interfaces (btl_tcp_if_include
 * / btl_tcp_if_exclude), opens one nonblocking listening socket per chosen
 * address, draws a 32-byte random secret and publishes the business card
 * (addresses, ports, secret, largest frame) under the modex key "btl_tcp".
 * All sockets sit in one epoll set, which is the module's wait_fd: the
 * progress engine sleeps on it.
 *
 * Connections (tcp_conn.c) are made lazily by the first send to a peer; a
 * send to a peer that is not connected yet returns RAIL_AGAIN, so nothing is
 * held in the btl for a peer whose connection might never come up.  One
 * connection per pair carries both directions.  When two peers connect to
 * each other at once, both connections finish their handshake and the one
 * started by the lower rank is kept (tcp_handshake.c).
 *
 * Handshake (tcp_handshake.c): a greeting authenticated with HMAC-SHA-256
 * under a key derived from the two ranks' secrets, which only the job's
 * modex carries, over a fresh nonce that the acceptor remembers (so a
 * recorded greeting cannot be replayed), answered by a verdict that proves
 * the acceptor knows the key too.  Nothing a connection sends is ever given
 * to the pml before its greeting checked out.
 *
 * Frames (tcp_frame.c): an 8-byte frame header, the active-message header
 * padded to 8 bytes, the payload padded to 8 bytes.  send() writes as much
 * as the socket takes with one sendmsg; the rest of the frame is copied to a
 * per-connection queue, which is flushed when epoll says the socket is
 * writable.  Receiving reads into a per-connection buffer and runs the
 * callback on the bytes in place; a large payload that did not arrive whole
 * is read directly into a buffer of its own size.
 *
 * Queued bytes reach the peer only while this process progresses.  Before
 * a fence that does not progress (MPI_Finalize's), the caller must progress
 * until btl_tcp_pending() is 0, or a peer still receiving waits forever.
 */
#ifndef BTL_TCP_TCP_H
#define BTL_TCP_TCP_H

#include "base/rail.h"
#include "btl/btl.h"
#include "base/sha256.h"
#include "base/netif.h"

#include <netinet/in.h>
#include <sys/uio.h>
#include <stdbool.h>
#include <stdint.h>

#define BTL_TCP_MODEX_KEY "btl_tcp"
#define BTL_TCP_CARD_MAGIC 0x52544331u /* "RTC1" */
#define BTL_TCP_VERSION 2
#define BTL_TCP_MAX_ADDRS 16           /* addresses in a business card */
#define BTL_TCP_SECRET_LEN 32
#define BTL_TCP_NONCE_LEN 32
#define BTL_TCP_MAC_LEN RAIL_SHA256_LEN
#define BTL_TCP_JOBTAG_LEN 16
#define BTL_TCP_HDR_MAX 64             /* largest active-message header (btl.h) */
#define BTL_TCP_FHDR_LEN 8
#define BTL_TCP_TAG_BYE 0xff           /* frame tag: the peer is finalizing */
#define BTL_TCP_TAG_ACK 0xfe           /* frame tag: frames before `reserved` arrived (failover) */
#define BTL_TCP_CARD_FAILOVER 1        /* card flag: keeps frames until acknowledged */
#define BTL_TCP_MAX_EVENTS 64
#define BTL_TCP_LOG_REJECTS 32         /* rejected connections logged one by one */

/* ------------------------------------------------------------ wire */

/* Frame header; the header bytes follow at offset 8, the payload at
 * 8 + pad8(hdr_len); the frame is 8 + pad8(hdr_len) + pad8(payload_len)
 * bytes.  Host byte order: both ends run the same build. */
typedef struct btl_tcp_fhdr {
    uint8_t tag;
    uint8_t hdr_len;
    uint16_t reserved;             /* failover: the frame's number (ACK: the next expected) */
    uint32_t payload_len;
} btl_tcp_fhdr_t;
_Static_assert(sizeof(btl_tcp_fhdr_t) == BTL_TCP_FHDR_LEN, "frame header size");

static inline size_t btl_tcp_pad8(size_t n) { return (n + 7) & ~(size_t)7; }
static inline size_t btl_tcp_frame_size(size_t hdr_len, size_t payload_len)
{
    return BTL_TCP_FHDR_LEN + btl_tcp_pad8(hdr_len) + btl_tcp_pad8(payload_len);
}

/* One listening address in the business card. */
enum { BTL_TCP_ADDR_LOOPBACK = 1 };
typedef struct btl_tcp_card_addr {
    uint32_t ip;                   /* network byte order */
    uint16_t port;                 /* network byte order */
    uint8_t prefix;                /* subnet prefix length */
    uint8_t flags;                 /* BTL_TCP_ADDR_* */
    int8_t rail;                   /* the interface's rail (btl/btl_rail.h), -1: none */
    uint8_t reserved[3];
    char name[16];                 /* the interface, for messages */
} btl_tcp_card_addr_t;

/* The business card; published with n_addrs entries of addrs. */
typedef struct btl_tcp_card {
    uint32_t magic;
    uint16_t version;
    uint16_t n_addrs;
    uint32_t max_frame;            /* largest frame this process sends */
    uint16_t n_rails;              /* rails of the host */
    int8_t my_rail;                /* the rail this process uses, -1: none */
    uint8_t flags;                 /* BTL_TCP_CARD_* */
    uint8_t secret[BTL_TCP_SECRET_LEN];
    btl_tcp_card_addr_t addrs[BTL_TCP_MAX_ADDRS];
} btl_tcp_card_t;

/* ------------------------------------------------------------ interfaces */

typedef rail_netif_t btl_tcp_if_t;   /* base/netif.h: name, address, rail, speed */

#define BTL_TCP_MAX_IFS 64

/* ------------------------------------------------------------ state */

enum btl_tcp_kind { BTL_TCP_KIND_LISTENER = 1, BTL_TCP_KIND_CONN = 2 };

enum btl_tcp_conn_state {
    BTL_TCP_CONNECTING,            /* initiator: connect() in progress */
    BTL_TCP_HS_VERDICT,            /* initiator: greeting sent, waiting for the verdict */
    BTL_TCP_HS_GREETING,           /* acceptor: waiting for the greeting */
    BTL_TCP_ESTABLISHED,
    BTL_TCP_DEAD,                  /* closed, waiting to be freed */
};

/* Bytes accepted by send() that the socket did not take yet. */
typedef struct btl_tcp_qfrag {
    struct btl_tcp_qfrag *next;
    size_t cap, len, off;          /* capacity, bytes filled, bytes already written */
    uint64_t data[];
} btl_tcp_qfrag_t;

#define BTL_TCP_HS_MAX 128

typedef struct btl_tcp_conn {
    int kind;                      /* BTL_TCP_KIND_CONN (epoll dispatch) */
    int fd;
    uint8_t state;
    bool outgoing;
    bool abandoned;                /* outgoing that lost a simultaneous connect */
    bool bye;                      /* the peer said it is finalizing */
    bool want_write;               /* send said RAIL_AGAIN: wake us when writable */
    bool small_read;               /* next read only picks up a frame header */
    bool in_big;                   /* receiving a large payload into big */
    bool timed;                    /* has a handshake deadline (counted in n_timed) */
    bool counted;                  /* incoming, not yet authenticated (n_handshakes) */
    bool full;                     /* socket full: no write until epoll says writable */
    uint32_t events;               /* epoll interest */
    btl_endpoint_t *ep;            /* the peer (acceptor: once authenticated) */
    struct sockaddr_in peer;
    int rail;                      /* outgoing: the rail of the peer's address */
    int addr_idx;                  /* outgoing: its index in ep->addrs */
    bool replace;                  /* outgoing: replaces the endpoint's connection (failover) */
    struct sockaddr_in local;      /* our end, once established */
    uint64_t deadline;             /* handshake deadline, ms */
    /* handshake */
    uint8_t hs_in[BTL_TCP_HS_MAX];
    size_t hs_have, hs_want;
    uint8_t greeting[BTL_TCP_HS_MAX];  /* initiator: ours (the verdict's MAC covers it) */
    /* receiving */
    uint8_t *rbuf;
    size_t rhead, rtail;
    uint64_t big_hdr[(BTL_TCP_FHDR_LEN + BTL_TCP_HDR_MAX) / 8];
    uint8_t *big;
    size_t big_cap, big_have, big_want;
    /* sending */
    btl_tcp_qfrag_t *qhead, *qtail;
    size_t queued;
    struct btl_tcp_conn *next, *prev;  /* all connections of the module */
} btl_tcp_conn_t;

enum btl_tcp_ep_state {
    BTL_TCP_EP_IDLE,               /* no connection, none being made */
    BTL_TCP_EP_CONNECTING,         /* our connection is being made */
    BTL_TCP_EP_WAIT_PEER,          /* ours lost a simultaneous connect: the peer's comes */
    BTL_TCP_EP_CONNECTED,
    BTL_TCP_EP_FAILED,
};

struct btl_endpoint {
    int rank;
    uint8_t state;
    bool local;                    /* same node */
    bool reported;                 /* failure already reported */
    btl_tcp_conn_t *conn;          /* the connection in use */
    btl_tcp_conn_t *out;           /* our connection being made */
    int n_addrs;
    struct sockaddr_in addrs[BTL_TCP_MAX_ADDRS];   /* in order of preference */
    int8_t addr_rail[BTL_TCP_MAX_ADDRS];            /* their rails */
    char addr_name[BTL_TCP_MAX_ADDRS][16];          /* their interfaces' names */
    int next_addr;
    int retries;                   /* of the current address (closed before answering) */
    uint64_t wait_deadline;        /* WAIT_PEER: when to try again ourselves */
    uint8_t (*seen)[BTL_TCP_NONCE_LEN];  /* nonces of greetings accepted from the peer */
    int n_seen, cap_seen;
    uint32_t max_frame;            /* largest frame the peer sends */
    uint8_t key[RAIL_SHA256_LEN];   /* pair key */
    bool lacks_my_rail;            /* the peer's host has no address on this process's rail */
    /* failover (tcp_failover.c) */
    bool failover;                 /* both ends keep frames until acknowledged */
    bool resuming;                 /* the next connection replaces a lost one */
    uint16_t tx_seq, rx_seq;       /* number of the next frame to send / to deliver */
    uint16_t acked_rx;             /* rx_seq last acknowledged to the peer */
    btl_tcp_qfrag_t *rt_head, *rt_tail;  /* frames sent but not acknowledged, oldest first */
    size_t rt_bytes;
    int rt_frames;
    int cur_addr;                  /* our connection's index in addrs, -1: the peer's */
    uint64_t down_until[BTL_TCP_MAX_ADDRS];  /* path not tried before (ms), 0: usable */
    uint8_t down_count[BTL_TCP_MAX_ADDRS];   /* consecutive failures (backoff) */
    char down_why[BTL_TCP_MAX_ADDRS][48];
    uint64_t recover_at;           /* when to try a better path again, 0: never */
    char why[256];                 /* what went wrong, for messages */
};

/* Spare receive buffers of one size (most connections hold none while idle). */
#define BTL_TCP_POOL_BUFS 8
typedef struct btl_tcp_bufpool {
    void *bufs[BTL_TCP_POOL_BUFS];
    int n;
    size_t size;
} btl_tcp_bufpool_t;

typedef struct btl_tcp_listener {
    int kind;                      /* BTL_TCP_KIND_LISTENER */
    int fd;
    struct sockaddr_in addr;
} btl_tcp_listener_t;

typedef struct btl_tcp_params {
    int priority;
    const char *if_include;
    const char *if_exclude;
    int port_min;
    int port_range;
    size_t eager_limit;
    size_t max_send_size;
    size_t sndbuf, rcvbuf;
    bool nodelay;
    size_t queue_limit;
    size_t recv_buf_size;
    int handshake_timeout_ms;
    int connect_wait_us;
    int failover;                  /* -1 auto (several rails), 0 off, 1 on */
    int user_timeout_ms;
    size_t failover_window;
    int reconnect_ms;
    int max_handshakes;
    int finalize_timeout_ms;
    int verbose;
} btl_tcp_params_t;

typedef struct btl_tcp_module {
    btl_module_t super;
    int epfd;
    int n_listeners;
    btl_tcp_listener_t listeners[BTL_TCP_MAX_ADDRS];
    bool listening;                /* listeners in the epoll set */
    int n_ifs;
    btl_tcp_if_t ifs[BTL_TCP_MAX_ADDRS];
    int n_rails;                   /* rails among ifs (btl/btl_rail.h) */
    int my_rail;                   /* the rail this process uses, -1: none */
    uint8_t secret[BTL_TCP_SECRET_LEN];
    uint8_t jobtag[BTL_TCP_JOBTAG_LEN];
    int my_rank, nprocs;
    uint32_t my_node;
    btl_endpoint_t **eps;          /* [nprocs], NULL where not reached */
    btl_tcp_conn_t *conns;         /* every connection */
    int n_handshakes;              /* accepted connections not yet authenticated */
    int n_timed;                   /* connections or endpoints with a deadline */
    int n_rejected;
    int n_dead;                    /* connections waiting to be freed */
    btl_tcp_qfrag_t *pool;         /* free queue fragments of pool_size bytes */
    int n_pool;
    size_t pool_size;
    btl_tcp_bufpool_t rbufs;       /* receive buffers (recv_buf_size) */
    btl_tcp_bufpool_t bigs;        /* large-payload buffers (largest frame of any peer) */
    bool finalizing;
    bool failover;                 /* this process offers failover (its card says so) */
    int n_recover;                 /* endpoints with a recover_at */
    /* MPI_T counters (tcp_failover.c) */
    uint64_t st_failovers, st_recoveries, st_resent, st_dups;
    /* statistics (reported at finalize with btl_tcp_verbose >= 2) */
    uint64_t st_frames, st_bytes;  /* frames and bytes accepted by send */
    uint64_t st_copied;            /* bytes copied to queues (socket full) */
    uint64_t st_again;             /* sends answered RAIL_AGAIN on a connection */
} btl_tcp_module_t;

extern btl_tcp_module_t btl_tcp_module;
extern btl_tcp_params_t btl_tcp_params;
extern const btl_component_t btl_tcp_component;

static inline int btl_tcp_verbosity(void)
{
    return RAIL_MAX(btl_tcp_params.verbose, btl_verbose);
}

/* tcp_component.c */
uint64_t btl_tcp_now_ms(void);
int btl_tcp_random(void *buf, size_t len);
const char *btl_tcp_addr_str(const struct sockaddr_in *a, char *buf, size_t len);

/* tcp_if.c */
int btl_tcp_if_discover(btl_tcp_if_t *ifs, int max);
/* Choose among n interfaces (include/exclude lists of names and CIDR
 * subnets, "" for none); single_node: the job runs on one node.  Returns
 * how many were put in out; warnings about the lists go to rail_warn. */
int btl_tcp_if_select(const btl_tcp_if_t *all, int n, const char *include, const char *exclude,
                      bool single_node, btl_tcp_if_t *out, int max);
/* Order the usable addresses of a peer's card for connecting from here. */
int btl_tcp_if_order_peer(const btl_tcp_card_t *card, bool same_node, const btl_tcp_if_t *mine,
                          int n_mine, struct sockaddr_in *out, int max);
/* The same, addresses on my_rail first (rail-aligned), their rails in rails. */
int btl_tcp_if_order_peer_rail(const btl_tcp_card_t *card, bool same_node,
                               const btl_tcp_if_t *mine, int n_mine, int my_rail,
                               struct sockaddr_in *out, int8_t *rails, int max);
/* The backend interfaces of btl tcp with their rails (btl/btl_rail.h). */
int btl_tcp_if_backend(btl_tcp_module_t *m, bool single_node);

/* tcp_module.c */
int btl_tcp_add_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_tcp_del_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps);
int btl_tcp_progress(btl_module_t *m);
/* Bytes accepted by send() that are still queued here, not yet in the
 * kernel: until this is 0, the process must keep progressing (a fence that
 * does not progress would leave a peer waiting for them forever). */
size_t btl_tcp_pending(btl_module_t *m);
void btl_tcp_listen_enable(btl_tcp_module_t *m, bool on);
void btl_tcp_close_all(btl_tcp_module_t *m);

/* tcp_conn.c */
btl_tcp_conn_t *btl_tcp_conn_new(btl_tcp_module_t *m, int fd, const struct sockaddr_in *peer);
void btl_tcp_conn_set_events(btl_tcp_conn_t *c, uint32_t events);
void btl_tcp_conn_close(btl_tcp_conn_t *c);
void btl_tcp_conn_reap(btl_tcp_module_t *m);
int btl_tcp_ep_connect(btl_endpoint_t *ep);
/* Open our connection to ep->addrs[idx] (not yet ep->out); NULL, with the
 * reason added to ep->why, when connect() fails at once. */
btl_tcp_conn_t *btl_tcp_conn_start(btl_endpoint_t *ep, int idx);
void btl_tcp_ep_fail(btl_endpoint_t *ep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void btl_tcp_conn_lost(btl_tcp_conn_t *c, const char *why);
void btl_tcp_attempt_failed(btl_tcp_conn_t *c, const char *why);
void btl_tcp_accept(btl_tcp_module_t *m, btl_tcp_listener_t *l);
void btl_tcp_conn_event(btl_tcp_conn_t *c, uint32_t events);
void btl_tcp_check_deadlines(btl_tcp_module_t *m);
void btl_tcp_conn_authenticated(btl_tcp_conn_t *c);
void btl_tcp_conn_established(btl_tcp_conn_t *c);
void btl_tcp_conn_error(btl_tcp_conn_t *c, const char *why);
void btl_tcp_conn_update_events(btl_tcp_conn_t *c);
void btl_tcp_ep_wait_peer(btl_endpoint_t *ep);
void btl_tcp_sockopts(int fd);

/* tcp_failover.c: frames kept until acknowledged, resent on another path */
int btl_tcp_ft_register_pvars(void);
void btl_tcp_ft_sockopts(int fd);
bool btl_tcp_ft_window_full(const btl_endpoint_t *ep, size_t frame);
int btl_tcp_ft_retain(btl_endpoint_t *ep, const struct iovec *iov, int n, size_t frame);
void btl_tcp_ft_unretain(btl_endpoint_t *ep);
void btl_tcp_ft_free(btl_endpoint_t *ep);
/* A sequenced frame arrived: true to deliver it, false for a duplicate. */
bool btl_tcp_ft_in_order(btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh);
void btl_tcp_ft_acked(btl_endpoint_t *ep, uint16_t next);
void btl_tcp_ft_send_ack(btl_tcp_conn_t *c);
/* c was lost: true when another path is being tried (else fail the peer). */
bool btl_tcp_ft_lost(btl_tcp_conn_t *c, const char *why);
/* Our attempt on a path failed: true when handled (a recovery attempt). */
bool btl_tcp_ft_attempt_failed(btl_tcp_conn_t *c, const char *why);
bool btl_tcp_ft_addr_usable(btl_endpoint_t *ep, int idx);
/* No path to ep is left: say so, naming both hosts and every path; ends the job. */
void btl_tcp_ft_no_path(btl_endpoint_t *ep) __attribute__((noreturn));
/* c (authenticated) is to replace ep->conn: close the old one. */
void btl_tcp_ft_replace(btl_tcp_conn_t *c);
/* c is established: acknowledge and resend what the peer may lack. */
void btl_tcp_ft_resume(btl_tcp_conn_t *c);
void btl_tcp_ft_check(btl_tcp_module_t *m);
size_t btl_tcp_ft_pending(const btl_endpoint_t *ep);

/* tcp_handshake.c */
void btl_tcp_pair_key(const btl_tcp_module_t *m, int peer, const uint8_t *peer_secret,
                      uint8_t key[RAIL_SHA256_LEN]);
void btl_tcp_jobtag(const char *nspace, uint8_t tag[BTL_TCP_JOBTAG_LEN]);
int btl_tcp_hs_start(btl_tcp_conn_t *c);      /* initiator, once connected */
void btl_tcp_hs_accepted(btl_tcp_conn_t *c);  /* acceptor, after accept() */
void btl_tcp_hs_input(btl_tcp_conn_t *c);
void btl_tcp_reject(btl_tcp_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Handshake messages (layout in tcp_handshake.c). */
#define BTL_TCP_GREETING_LEN 104
#define BTL_TCP_GREETING_MAC 72        /* offset of the MAC in the greeting */
#define BTL_TCP_VERDICT_LEN 40

/* tcp_frame.c */
int btl_tcp_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                 size_t hdr_len, const btl_payload_t *payload);
/* Queue a copy of bytes on c (behind what is queued) and try to write. */
int btl_tcp_conn_write(btl_tcp_conn_t *c, const void *data, size_t len);
/* Write queued bytes; MPI_SUCCESS (some may remain) or an error (c failed). */
int btl_tcp_flush(btl_tcp_conn_t *c);
/* Read and deliver; the number of frames delivered. */
int btl_tcp_recv(btl_tcp_conn_t *c);
void btl_tcp_queue_free(btl_tcp_conn_t *c);
/* Give c's receive buffers back (c is closed, or has nothing buffered). */
void btl_tcp_recv_bufs_release(btl_tcp_conn_t *c);
void btl_tcp_pool_free(btl_tcp_module_t *m);

#endif
