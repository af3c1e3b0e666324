#!/usr/bin/env python3
"""Point-to-point between two network-namespace hosts, side by side.

Makes two namespaces joined by a veth pair (addresses only inside them),
runs one rank in each with every path it can launch, and prints latency,
bandwidth and message rate as ratios to Rail MPI's default path:

  rail          Rail MPI, defaults (btl tcp between the hosts)
  rail_ofi      Rail MPI, btl ofi on libfabric's tcp;ofi_rxm provider
                (when the build has btl ofi)
  openmpi       Open MPI, btl tcp, mpi_yield_when_idle 1 (else it spins
                and starves the kernel's network work: see MACHINE-NOTES)
  openmpi_ofi   Open MPI, mtl ofi on tcp;ofi_rxm

Each launcher runs inside the first namespace; nothing connects from the
root namespace.  The namespaces are removed however the run ends.  Needs
root and iproute2.  Timings are printed, never judged.

  bench/netns_bench.py [--out DIR] [--reps N] [--paths rail,openmpi]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench as rb  # noqa: E402

SUBNET = "10.215.%d" % (os.getpid() % 200 + 20)
IFACE = "rail0"
SIZES = {"pingpong": "8:4194304", "bw": "4096:4194304", "msgrate": "8:8192"}


class Net:
    def __init__(self):
        tag = "nb%d" % os.getpid()
        self.hosts = [tag + "a", tag + "b"]
        self.ifs = ["v%da" % os.getpid(), "v%db" % os.getpid()]
        self.made = []

    def sh(self, *cmd):
        subprocess.run(cmd, check=True)

    def up(self):
        for h in self.hosts:
            self.sh("ip", "netns", "add", h)
            self.made.append(h)
            self.sh("ip", "-n", h, "link", "set", "lo", "up")
        self.sh("ip", "link", "add", self.ifs[0], "type", "veth", "peer", "name", self.ifs[1])
        # the same name on every host, for FI_TCP_IFACE
        for i, (h, ifc) in enumerate(zip(self.hosts, self.ifs)):
            self.sh("ip", "link", "set", ifc, "netns", h)
            self.sh("ip", "-n", h, "link", "set", ifc, "name", IFACE)
            self.sh("ip", "-n", h, "addr", "add", "%s.%d/24" % (SUBNET, i + 1), "dev", IFACE)
            self.sh("ip", "-n", h, "link", "set", IFACE, "up")

    def down(self):
        for h in self.made:
            pids = subprocess.run(["ip", "netns", "pids", h], capture_output=True,
                                  text=True).stdout.split()
            for p in pids:
                try:
                    os.kill(int(p), 9)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", h])


def rail_has_ofi(mpi):
    info = os.path.join(os.path.dirname(mpi.mpirun), "railinfo")
    if not rb.is_exe(info):
        info = os.path.join(rb.TOP_DIR, "tools", "railinfo")
    p = subprocess.run([info, "--all"], capture_output=True, text=True)
    return "btl_ofi_provider" in p.stdout


def paths(mpis, net, agent):
    """(name, mpi, launch-prefix-maker) for every path we can run."""
    h = net.hosts
    out = []
    rail, ompi = mpis.get("rail"), mpis.get("openmpi")
    if rail:
        base = [rail.mpirun, "--launch-agent", "ip netns exec {host}", "--host",
                "%s:1,%s:1" % tuple(h), "-n", "2"]
        out.append(("rail", rail, base, {}))
        if rail_has_ofi(rail):
            out.append(("rail_ofi", rail, base + [
                "--param", "btl=self,ofi", "--param", "btl_ofi_provider=tcp;ofi_rxm",
                "-x", "FI_TCP_IFACE"], {"FI_TCP_IFACE": IFACE}))
    if ompi:
        base = [ompi.mpirun, "-n", "2", "--host", "%s,%s" % tuple(h),
                "--mca", "plm_rsh_agent", agent, "--mca", "routed", "direct",
                "--mca", "plm_rsh_no_tree_spawn", "1",
                "--mca", "oob_tcp_if_include", SUBNET + ".0/24",
                "--mca", "mpi_yield_when_idle", "1"]
        out.append(("openmpi", ompi, base + [
            "--mca", "pml", "ob1", "--mca", "btl", "self,tcp",
            "--mca", "btl_tcp_if_include", SUBNET + ".0/24"], {}))
        out.append(("openmpi_ofi", ompi, base + [
            "--mca", "pml", "cm", "--mca", "mtl", "ofi",
            "--mca", "mtl_ofi_provider_include", "tcp;ofi_rxm", "-x", "FI_PROVIDER", "-x",
            "FI_TCP_IFACE"], {"FI_PROVIDER": "tcp;ofi_rxm", "FI_TCP_IFACE": IFACE}))
    return out


def write_agent(tmp):
    path = os.path.join(tmp, "agent.sh")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nh="$1"; shift\nexec ip netns exec "$h" sh -c "$*"\n')
    os.chmod(path, 0o755)
    return path


def run_path(name, mpi, launch, env, exe, bench, net, timeout):
    e = dict(mpi.env)
    e.update(env)
    cmd = ["ip", "netns", "exec", net.hosts[0]] + launch + [exe, "-s", SIZES[bench]]
    status, out, err, secs = rb.run_cmd(cmd, e, timeout)
    results, _, lib = rb.parse_output(out)
    if status != "ok" or not results:
        tail = (err or out).strip().splitlines()[-3:]
        rb.note("%s %s: %s %s" % (name, bench, status, " | ".join(tail)))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench-results/netns")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--paths", default="", help="comma list (default: every path found)")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("netns_bench: needs root (network namespaces)")
    found, _ = rb.discover(argparse.Namespace(rail_prefix=None, rail_base=None))
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    benches = [rb.BENCH_BY_NAME[b] for b in SIZES]
    exes = rb.build_all(list(found.values()), benches, args.out)
    net = Net()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        agent = write_agent(tmp)
        try:
            net.up()
            todo = paths(found, net, agent)
            if args.paths:
                todo = [p for p in todo if p[0] in args.paths.split(",")]
            for rep in range(args.reps):
                for bench in benches:
                    for name, mpi, launch, env in todo:
                        exe = exes.get((mpi.name, bench.name))
                        if not exe:
                            continue
                        for r in run_path(name, mpi, launch, env, exe, bench.name, net,
                                          args.timeout):
                            size = int(r["size"])
                            v = rb.metric_value(bench, size, float(r["median_us"]))
                            rows.append((name, bench.name, size, rep, v))
        finally:
            net.down()
    report(rows, args.out)


def report(rows, out):
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "bench", "size", "rep", "value"])
        w.writerows(rows)
    cells = {}
    for name, bench, size, _, v in rows:
        cells.setdefault((bench, size), {}).setdefault(name, []).append(v)
    names = sorted({r[0] for r in rows}, key=lambda n: (n != "rail", n))
    for bench in SIZES:
        metric = rb.BENCH_BY_NAME[bench].metric
        print("\n%s (%s; ratio to rail: %s)" % (
            bench, metric, "lower is better" if metric == rb.LATENCY else "higher is better"))
        print("%10s " % "size" + " ".join("%16s" % n for n in names))
        for (b, size) in sorted(k for k in cells if k[0] == bench):
            c = cells[(b, size)]
            med = {n: statistics.median(c[n]) for n in c}
            ref = med.get("rail")
            line = "%10s " % rb.size_label(size)
            for n in names:
                if n not in med:
                    line += "%16s" % "-"
                elif n == "rail" or not ref:
                    line += "%16s" % rb.fmt(med[n])
                else:
                    line += "%16s" % ("%s (%.2fx)" % (rb.fmt(med[n]), med[n] / ref))
            print(line)


if __name__ == "__main__":
    main()
