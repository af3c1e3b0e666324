/*
 * btl tcp pieces that need no peer: SHA-256 (FIPS 180-4 / NIST examples),
 * HMAC-SHA-256 (RFC 4231), interface selection (btl_tcp_if_include /
 * exclude), the order in which a peer's addresses are tried, frame sizes.
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "btl/btl_rail.h"

#include <arpa/inet.h>
#include <string.h>

static bool hex_equal(const uint8_t *d, const char *hex)
{
    char buf[2 * RAIL_SHA256_LEN + 1];
    for (int i = 0; i < RAIL_SHA256_LEN; i++)
        snprintf(buf + 2 * i, 3, "%02x", d[i]);
    if (strcmp(buf, hex) == 0)
        return true;
    fprintf(stderr, "  got      %s\n  expected %s\n", buf, hex);
    return false;
}

static void test_sha256(void)
{
    static const struct {
        const char *msg;
        const char *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
         "lmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    uint8_t d[RAIL_SHA256_LEN];
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        rail_sha256(v[i].msg, strlen(v[i].msg), d);
        char name[64];
        snprintf(name, sizeof(name), "sha256 of a %zu-byte NIST example", strlen(v[i].msg));
        check_case(name, hex_equal(d, v[i].hex));
    }
    /* One million 'a', fed in pieces of odd sizes. */
    static char a[1000];
    memset(a, 'a', sizeof(a));
    rail_sha256_t c;
    rail_sha256_init(&c);
    for (size_t done = 0, k = 1; done < 1000000; k = k % 997 + 1) {
        size_t n = RAIL_MIN(k, 1000000 - done);
        rail_sha256_update(&c, a, n);
        done += n;
    }
    rail_sha256_final(&c, d);
    check_case("sha256 of a million 'a' in pieces",
               hex_equal(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* Every split point of a 1000-byte message gives the same digest. */
    uint8_t m[1000], one[RAIL_SHA256_LEN];
    for (int i = 0; i < 1000; i++)
        m[i] = (uint8_t)((i * 7 + 3) % 251);
    rail_sha256(m, sizeof(m), one);
    bool ok = hex_equal(one, "a9425c416f534025a4e2422bd14adba4ec3d4a68d10c3329be8df612964d2b6e");
    for (size_t split = 0; split <= 200 && ok; split++) {
        rail_sha256_init(&c);
        rail_sha256_update(&c, m, split);
        rail_sha256_update(&c, m + split, sizeof(m) - split);
        rail_sha256_final(&c, d);
        ok = memcmp(d, one, sizeof(d)) == 0;
    }
    check_case("sha256 independent of how the input is split", ok);
}

static void test_hmac(void)
{
    uint8_t k1[20], k3[20], d3[50], k4[25], d4[50], k6[131], d[RAIL_SHA256_LEN];
    memset(k1, 0x0b, sizeof(k1));
    memset(k3, 0xaa, sizeof(k3));
    memset(d3, 0xdd, sizeof(d3));
    for (int i = 0; i < 25; i++)
        k4[i] = (uint8_t)(i + 1);
    memset(d4, 0xcd, sizeof(d4));
    memset(k6, 0xaa, sizeof(k6));
    const char *t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    const char *t7 = "This is a test using a larger than block-size key and a larger than block-size "
                     "data. The key needs to be hashed before being used by the HMAC algorithm.";
    const struct {
        const void *key;
        size_t key_len;
        const void *data;
        size_t len;
        const char *hex;
    } v[] = {
        {k1, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", 4, "what do ya want for nothing?", 28,
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {k3, 20, d3, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {k4, 25, d4, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {k6, 131, t6, strlen(t6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {k6, 131, t7, strlen(t7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    int tc[] = {1, 2, 3, 4, 6, 7};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        rail_hmac_t h;
        rail_hmac_init(&h, v[i].key, v[i].key_len);
        rail_hmac_update(&h, v[i].data, v[i].len);
        rail_hmac_final(&h, d);
        char name[64];
        snprintf(name, sizeof(name), "hmac-sha256, RFC 4231 test case %d", tc[i]);
        check_case(name, hex_equal(d, v[i].hex));
    }
    uint8_t x[32] = {1}, y[32] = {1};
    bool ok = rail_mac_equal(x, y, 32);
    y[31] ^= 0x80;
    ok = ok && !rail_mac_equal(x, y, 32);
    check_case("mac comparison", ok);
}

/* ------------------------------------------------------------ interfaces */

static btl_tcp_if_t mk_if(const char *name, const char *addr, int prefix, bool lo)
{
    btl_tcp_if_t f;
    struct in_addr in;
    memset(&f, 0, sizeof(f));
    snprintf(f.name, sizeof(f.name), "%s", name);
    inet_pton(AF_INET, addr, &in);
    f.addr = ntohl(in.s_addr);
    f.prefix = (uint8_t)prefix;
    f.loopback = lo;
    return f;
}

/* Names of the selected interfaces, comma-separated. */
static bool select_is(const btl_tcp_if_t *all, int n, const char *inc, const char *exc,
                      bool single, const char *expect)
{
    btl_tcp_if_t out[16];
    char got[1024] = "";
    int k = btl_tcp_if_select(all, n, inc, exc, single, out, 16);
    for (int i = 0; i < k; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%.31s", i ? "," : "",
                 out[i].name);
    if (strcmp(got, expect) == 0)
        return true;
    fprintf(stderr, "  include \"%s\" exclude \"%s\" single node %d: got \"%s\", expected \"%s\"\n",
            inc, exc, single, got, expect);
    return false;
}

static void test_if_select(void)
{
    btl_tcp_if_t all[] = {mk_if("lo", "127.0.0.1", 8, true), mk_if("eth0", "10.0.0.5", 24, false),
                          mk_if("eth1", "192.168.1.7", 16, false),
                          mk_if("ib0", "10.200.3.4", 24, false)};
    int n = 4;
    bool ok = true;
    ok &= select_is(all, n, "", "", false, "eth0,eth1,ib0");
    ok &= select_is(all, n, "", "", true, "eth0,eth1,ib0,lo");
    ok &= select_is(all, n, "lo", "", false, "lo");
    ok &= select_is(all, n, "10.0.0.0/8", "", false, "eth0,ib0");
    ok &= select_is(all, n, "eth1, 10.200.3.4", "", false, "eth1,ib0");
    ok &= select_is(all, n, "127.0.0.0/8", "eth0", true, "lo");
    ok &= select_is(all, n, "", "eth0,192.168.0.0/16", false, "ib0");
    ok &= select_is(all, n, "", "eth0,eth1,ib0", false, "lo");
    ok &= select_is(all, n, "", "lo", true, "eth0,eth1,ib0");
    ok &= select_is(all, n, "", "0.0.0.0/0", true, "");
    ok &= select_is(all, 1, "", "", false, "lo");
    check_case("interface selection (include / exclude / loopback rule)", ok);
    fprintf(stderr, "(warnings about bad entries expected below)\n");
    ok = select_is(all, n, "10.0.0.0/33,eth0,nosuch", "", false, "eth0");
    ok &= select_is(all, n, "1.2.3.4.5", "", false, "");
    check_case("interface lists with bad entries", ok);
}

static void test_peer_order(void)
{
    btl_tcp_if_t mine[] = {mk_if("eth0", "10.0.0.5", 24, false), mk_if("lo", "127.0.0.1", 8, true)};
    btl_tcp_card_t card;
    struct sockaddr_in out[BTL_TCP_MAX_ADDRS];
    const char *ips[] = {"172.16.0.1", "127.0.0.1", "10.0.0.9"};
    memset(&card, 0, sizeof(card));
    card.n_addrs = 3;
    for (int i = 0; i < 3; i++) {
        struct in_addr in;
        inet_pton(AF_INET, ips[i], &in);
        card.addrs[i].ip = in.s_addr;
        card.addrs[i].port = htons((uint16_t)(1000 + i));
        card.addrs[i].flags = i == 1 ? BTL_TCP_ADDR_LOOPBACK : 0;
    }
    int k = btl_tcp_if_order_peer(&card, true, mine, 2, out, BTL_TCP_MAX_ADDRS);
    bool ok = k == 3 && ntohs(out[0].sin_port) == 1001 && ntohs(out[1].sin_port) == 1002 &&
              ntohs(out[2].sin_port) == 1000;
    k = btl_tcp_if_order_peer(&card, false, mine, 2, out, BTL_TCP_MAX_ADDRS);
    ok = ok && k == 2 && ntohs(out[0].sin_port) == 1002 && ntohs(out[1].sin_port) == 1000;
    card.n_addrs = 2;
    card.addrs[0] = card.addrs[1];
    k = btl_tcp_if_order_peer(&card, false, mine, 2, out, BTL_TCP_MAX_ADDRS);
    ok = ok && k == 0;
    /* An address we have ourselves is not the remote peer's. */
    struct in_addr in;
    inet_pton(AF_INET, "10.0.0.5", &in);
    card.addrs[1].ip = in.s_addr;
    card.addrs[1].flags = 0;
    k = btl_tcp_if_order_peer(&card, false, mine, 2, out, BTL_TCP_MAX_ADDRS);
    ok = ok && k == 0;
    k = btl_tcp_if_order_peer(&card, true, mine, 2, out, BTL_TCP_MAX_ADDRS);
    ok = ok && k == 2;
    check_case("peer addresses: loopback and our own addresses only on the same node, own "
               "subnet first",
               ok);
}

/* Rails: by name order, or by btl_rails; the process's rail; peer order. */
static void test_rails(void)
{
    btl_tcp_if_t ifs[] = {mk_if("eth2", "10.2.0.5", 24, false), mk_if("lo", "127.0.0.1", 8, true),
                          mk_if("eth1", "10.1.0.5", 24, false)};
    int n_rails = 0, k;
    char why[128];
    k = btl_rail_assign(ifs, 3, &n_rails, "test");
    bool ok = k == 3 && n_rails == 2 && !strcmp(ifs[0].name, "eth1") && ifs[0].rail == 0 &&
              ifs[1].rail == 1 && ifs[2].rail == -1;
    for (int i = 0; i < k; i++)
        ifs[i].local = -1;
    ok = ok && btl_rail_choose(ifs, k, n_rails, 0, why, sizeof(why)) == 0 &&
         btl_rail_choose(ifs, k, n_rails, 3, why, sizeof(why)) == 1;
    ifs[1].local = 1;              /* eth2 near our cores: every local rank takes it */
    ok = ok && btl_rail_choose(ifs, k, n_rails, 0, why, sizeof(why)) == 1;
    check_case("rails by interface name; local rank modulo rails; locality first", ok);

    btl_tcp_if_t named[] = {mk_if("eth1", "10.1.0.5", 24, false), mk_if("eth2", "10.2.0.5", 24, false),
                            mk_if("eth3", "10.3.0.5", 24, false)};
    btl_rail_names = "10.2.0.0/24,eth1";
    fprintf(stderr, "(no warning expected here)\n");
    k = btl_rail_assign(named, 3, &n_rails, "test");
    ok = k == 2 && n_rails == 2 && named[0].rail == 1 && named[1].rail == 0;
    btl_rail_names = "";
    check_case("btl_rails names the rails in order (subnets, names); others are left out", ok);

    /* The peer's addresses: our rail first among those on our subnets. */
    btl_tcp_if_t mine[] = {mk_if("eth1", "10.1.0.5", 24, false), mk_if("eth2", "10.2.0.5", 24, false)};
    btl_tcp_card_t card;
    struct sockaddr_in out[BTL_TCP_MAX_ADDRS];
    int8_t rails[BTL_TCP_MAX_ADDRS];
    memset(&card, 0, sizeof(card));
    card.n_addrs = 2;
    for (int i = 0; i < 2; i++) {
        struct in_addr in;
        inet_pton(AF_INET, i ? "10.2.0.9" : "10.1.0.9", &in);
        card.addrs[i].ip = in.s_addr;
        card.addrs[i].port = htons((uint16_t)(2000 + i));
        card.addrs[i].rail = (int8_t)i;
    }
    k = btl_tcp_if_order_peer_rail(&card, false, mine, 2, 1, out, rails, BTL_TCP_MAX_ADDRS);
    ok = k == 2 && rails[0] == 1 && ntohs(out[0].sin_port) == 2001 && rails[1] == 0;
    k = btl_tcp_if_order_peer_rail(&card, false, mine, 2, 0, out, rails, BTL_TCP_MAX_ADDRS);
    ok = ok && k == 2 && rails[0] == 0 && rails[1] == 1;
    check_case("peer addresses: this process's rail first, the other rails next", ok);
}

/* Failover numbering: kept frames leave when acknowledged, duplicates drop. */
static void test_failover_numbers(void)
{
    btl_endpoint_t ep;
    btl_tcp_conn_t c;
    btl_tcp_fhdr_t frame[2];
    struct iovec iov = {frame, sizeof(frame)};
    memset(frame, 0, sizeof(frame));
    memset(&ep, 0, sizeof(ep));
    memset(&c, 0, sizeof(c));
    c.ep = &ep;
    ep.failover = true;
    ep.tx_seq = 65534;             /* across the wrap */
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        frame[0].reserved = ep.tx_seq++;
        ok = ok && btl_tcp_ft_retain(&ep, &iov, 1, sizeof(frame)) == MPI_SUCCESS;
    }
    btl_tcp_ft_acked(&ep, 0);      /* 65534 and 65535 arrived */
    ok = ok && ep.rt_frames == 2 && ep.rt_bytes == 2 * sizeof(frame);
    btl_tcp_ft_unretain(&ep);
    ok = ok && ep.rt_frames == 1 && ep.tx_seq == 1;
    btl_tcp_ft_acked(&ep, 1);
    ok = ok && ep.rt_frames == 0 && ep.rt_head == NULL && ep.rt_tail == NULL;
    btl_tcp_fhdr_t fh = {.reserved = 65535};
    ep.rx_seq = 65535;
    ok = ok && btl_tcp_ft_in_order(&c, &fh) && ep.rx_seq == 0;
    ok = ok && !btl_tcp_ft_in_order(&c, &fh) && ep.rx_seq == 0;   /* a duplicate */
    btl_tcp_ft_free(&ep);
    check_case("failover: frames kept until acknowledged (across the wrap), duplicates dropped",
               ok);
}

static void test_frames(void)
{
    bool ok = btl_tcp_frame_size(0, 0) == 8 && btl_tcp_frame_size(1, 0) == 16 &&
              btl_tcp_frame_size(64, 1) == 80 && btl_tcp_frame_size(16, 8) == 32 &&
              btl_tcp_frame_size(17, 9) == 48;
    check_case("frame sizes (header and payload padded to 8)", ok);
}

int main(void)
{
    test_sha256();
    test_hmac();
    test_if_select();
    test_peer_order();
    test_rails();
    test_failover_numbers();
    test_frames();
    return tcp_test_summary("test_btl_tcp_unit");
}
