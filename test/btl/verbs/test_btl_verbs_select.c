/*
 * btl verbs' choices from what devices report: the device (by name, else
 * an active one close to our cores), and the GID of a RoCE port (v2 over
 * v1, IPv4-mapped over link-local, inside btl_verbs_roce_subnet when set),
 * on made-up tables and on the table of the emulated HCA, which reports a
 * RoCE v2 port with a GID for each IPv4 interface of the machine.
 */
#include "test/check.h"
#include "btl/verbs/verbs.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>

static struct ibv_gid_entry gid(const char *ip4, bool linklocal, int type)
{
    struct ibv_gid_entry e;
    memset(&e, 0, sizeof(e));
    if (linklocal) {
        e.gid.raw[0] = 0xfe;
        e.gid.raw[1] = 0x80;
        e.gid.raw[15] = 1;
    } else if (ip4) {
        e.gid.raw[10] = e.gid.raw[11] = 0xff;
        inet_pton(AF_INET, ip4, e.gid.raw + 12);
    }
    e.gid_type = (uint32_t)type;
    return e;
}

static void test_device(void)
{
    btl_verbs_devinfo_t d[] = {{"mlx5_0", false, 1}, {"mlx5_1", true, 0}, {"mlx5_2", true, 1},
                               {"mlx5_3", true, -1}};
    bool ok = EXPECT(btl_verbs_choose_device(d, 4, NULL) == 2, "close and active first");
    ok &= EXPECT(btl_verbs_choose_device(d, 4, "mlx5_1") == 1, "by name");
    ok &= EXPECT(btl_verbs_choose_device(d, 4, "mlx5_0") == -1, "named but inactive");
    ok &= EXPECT(btl_verbs_choose_device(d, 4, "hfi1_0") == -1, "named but missing");
    ok &= EXPECT(btl_verbs_choose_device(d + 1, 1, "") == 0, "a far one when alone");
    ok &= EXPECT(btl_verbs_choose_device(d + 1, 3, "") == 1, "close over unknown over far");
    btl_verbs_devinfo_t u[] = {{"a", true, -1}, {"b", true, -1}};
    ok &= EXPECT(btl_verbs_choose_device(u, 2, NULL) == 0, "ties: the first");
    ok &= EXPECT(btl_verbs_choose_device(d, 1, NULL) == -1, "none active");
    check_case("device choice", ok);
}

static void test_gid(void)
{
    struct ibv_gid_entry g[] = {
        gid(NULL, true, IBV_GID_TYPE_ROCE_V1), gid(NULL, true, IBV_GID_TYPE_ROCE_V2),
        gid("10.1.0.5", false, IBV_GID_TYPE_ROCE_V1), gid("10.1.0.5", false, IBV_GID_TYPE_ROCE_V2),
        gid("192.168.3.4", false, IBV_GID_TYPE_ROCE_V2), gid(NULL, false, IBV_GID_TYPE_ROCE_V2)};
    bool bad = false, ok = true;
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_ETHERNET, "", &bad) == 3 && !bad);
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_ETHERNET, "192.168.0.0/16", &bad) == 4);
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_ETHERNET, "10.1.0.5", &bad) == 3);
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_ETHERNET, "172.16.0.0/12", &bad) == -1 &&
                 !bad, "no GID in the subnet");
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_ETHERNET, "ten/8", &bad) == -1 && bad);
    ok &= EXPECT(btl_verbs_choose_gid(g, 3, IBV_LINK_LAYER_ETHERNET, "", &bad) == 1, "type first");
    ok &= EXPECT(btl_verbs_choose_gid(g + 2, 1, IBV_LINK_LAYER_ETHERNET, "", &bad) == 0, "v1");
    ok &= EXPECT(btl_verbs_choose_gid(g, 2, IBV_LINK_LAYER_ETHERNET, "", &bad) == 1, "v2 link-local");
    ok &= EXPECT(btl_verbs_choose_gid(g + 5, 1, IBV_LINK_LAYER_ETHERNET, "", &bad) == -1, "zero");
    ok &= EXPECT(btl_verbs_choose_gid(g, 6, IBV_LINK_LAYER_INFINIBAND, "", &bad) == 0, "IB: 0");
    check_case("GID choice", ok);
}

/* The fake's port: RoCE v2, a GID per IPv4 interface; the choice by subnet. */
static void test_fake_port(void)
{
    const btl_verbs_ops_t *V = &btl_verbs_ops_fake;
    char jobid[64];
    snprintf(jobid, sizeof(jobid), "vsel%d", (int)getpid());
    CHECK_OK(btl_verbs_fake_setup(jobid, "", -1));
    struct ibv_device **l = V->get_device_list(NULL);
    struct ibv_context *ctx = l ? V->open_device(l[0]) : NULL;
    CHECK(ctx != NULL);
    struct ibv_port_attr pa;
    CHECK_OK(V->query_port(ctx, 1, &pa));
    bool ok = EXPECT(pa.link_layer == IBV_LINK_LAYER_ETHERNET && pa.state == IBV_PORT_ACTIVE);
    struct ibv_gid_entry g[16];
    int n = 0;
    while (n < pa.gid_tbl_len && n < 16 && V->query_gid_ex(ctx, 1, (uint32_t)n, &g[n]) == 0)
        n++;
    bool bad;
    int k = btl_verbs_choose_gid(g, n, pa.link_layer, "", &bad);
    ok &= EXPECT(k >= 0 && g[k].gid_type == IBV_GID_TYPE_ROCE_V2, "chose %d", k);
    struct ifaddrs *ifa = NULL, *i;
    CHECK(getifaddrs(&ifa) == 0);
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK))
            break;
    if (i) {
        char net[64];
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, net, sizeof(net));
        strcat(net, "/32");
        k = btl_verbs_choose_gid(g, n, pa.link_layer, net, &bad);
        ok &= EXPECT(k >= 0 && g[k].gid_type == IBV_GID_TYPE_ROCE_V2 &&
                     memcmp(g[k].gid.raw + 12, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4) == 0 &&
                     g[k].ndev_ifindex == if_nametoindex(i->ifa_name), "subnet %s: %d", net, k);
    } else {
        check_skip_part("the fake's subnet choice: no IPv4 interface but loopback");
    }
    freeifaddrs(ifa);
    V->close_device(ctx);
    V->free_device_list(l);
    check_case("the fake HCA's RoCE v2 port", ok);
}

int main(void)
{
    test_device();
    test_gid();
    test_fake_port();
    return check_report("test_btl_verbs_select");
}
