#!/usr/bin/python3
"""Rail MPI benchmark driver.

Builds the programs in bench/ with every MPI it finds (Rail MPI, Debian's
Open MPI and MPICH), runs them interleaved so that machine drift hits all
alike, validates every result, and writes a CSV, a summary with ratios
Rail/best-peer, gnuplot PNGs and a comparison with the machine's physical
limits (../shared/tools/hwlimits.c), and every collective's time as a
multiple of its memory-bandwidth bound (collbound.c).  See bench/README.md.

Exit status: 0 all runs passed; 1 a run failed, timed out or did not build;
2 bad usage or no MPI found (77 with --check, so that make check can skip).
"""

import argparse
import csv
import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
TOP_DIR = os.path.dirname(BENCH_DIR)
HWLIMITS_SRC = os.path.join(os.path.dirname(TOP_DIR), "shared", "tools", "hwlimits.c")
BOUND_SRC = os.path.join(BENCH_DIR, "collbound.c")
# the pseudo-MPI whose rows are collbound's times (no MPI: the data movement alone)
BOUND = "bound"
BOUND_BENCHES = ("bcast", "reduce", "allreduce", "reduce_scatter", "allgather", "gather",
                 "scatter", "alltoall")
BOUND_FROM = 64 << 10  # the bound is about bandwidth: reported from this size
# the pseudo-MPI whose rows are collbound -k's times: every copy between two
# processes by cross-memory attach, the kernel's single copy (the bound for an
# MPI without XPMEM); the copying collectives only
CMA_BOUND = "cma_bound"
CMA_BENCHES = ("bcast", "allgather", "gather", "scatter", "alltoall")
PSEUDO = (BOUND, CMA_BOUND)
APT_PACKAGES = ["openmpi-bin", "libopenmpi-dev", "mpich", "libmpich-dev", "gnuplot-nox"]
PEER_ORDER = ["openmpi", "mpich"]
# --rail-base: a second Rail MPI (an earlier build) run in the same rotation;
# the tables add Rail's figure over its figure
BASE = "rail_base"
OURS = ("rail", BASE)
CORES = len(os.sched_getaffinity(0))

# metric: what a row's value means.  "time" values (us, ms) are better when
# lower; "MB/s" and "Mmsg/s" when higher.
LATENCY, BANDWIDTH, RATE, STARTUP = "us", "MB/s", "Mmsg/s", "ms"


class Bench:
    def __init__(self, name, metric, pairs=False, max_size=None, what=""):
        self.name, self.metric, self.pairs = name, metric, pairs
        self.max_size, self.what = max_size, what

    @property
    def source(self):
        if self.name.startswith("rma_"):
            return "rma.c"  # one source; the executable's name picks the benchmark
        return "init_finalize.c" if self.name == "startup" else self.name + ".c"

    @property
    def exe(self):
        return "init_finalize" if self.name == "startup" else self.name


BENCHES = [
    Bench("pingpong", LATENCY, pairs=True, what="half round trip"),
    Bench("bw", BANDWIDTH, pairs=True, what="one direction, windowed"),
    Bench("bibw", BANDWIDTH, pairs=True, what="both directions summed"),
    Bench("msgrate", RATE, pairs=True, max_size=8192, what="all pairs summed"),
    Bench("barrier", LATENCY, what="time per call"),
    Bench("bcast", LATENCY, what="time per call"),
    Bench("reduce", LATENCY, what="time per call, doubles"),
    Bench("allreduce", LATENCY, what="time per call, doubles"),
    Bench("reduce_scatter", LATENCY, what="time per call, size = block per rank"),
    Bench("allgather", LATENCY, what="time per call, size = block per rank"),
    Bench("gather", LATENCY, what="time per call, size = block per rank"),
    Bench("scatter", LATENCY, what="time per call, size = block per rank"),
    Bench("alltoall", LATENCY, what="time per call, size = block per pair"),
    Bench("startup", STARTUP, what="wall clock of mpirun of MPI_Init+MPI_Finalize"),
]
# One-sided (bench/rma.c): under lock_all + flush, and under fence.
RMA_BENCHES = [
    Bench("rma_%sput_lat" % f, LATENCY, pairs=True, max_size=4096, what="Put + %s" % s)
    for f, s in (("", "flush"), ("fence_", "fence"))
] + [
    Bench("rma_%sget_lat" % f, LATENCY, pairs=True, max_size=4096, what="Get + %s" % s)
    for f, s in (("", "flush"), ("fence_", "fence"))
] + [
    Bench("rma_%s%s_lat" % (f, op), LATENCY, pairs=True, max_size=8, what="8 B %s + %s" % (w, s))
    for op, w in (("fop", "Fetch_and_op"), ("cas", "Compare_and_swap"))
    for f, s in (("", "flush"), ("fence_", "fence"))
] + [
    Bench("rma_%sput_bw" % f, BANDWIDTH, pairs=True, what="window of Puts + %s" % s)
    for f, s in (("", "flush"), ("fence_", "fence"))
] + [
    Bench("rma_%sacc_rate" % f, RATE, pairs=True, max_size=65536,
          what="window of Accumulate SUM (doubles) + %s" % s)
    for f, s in (("", "flush"), ("fence_", "fence"))
]
BENCH_BY_NAME = {b.name: b for b in BENCHES + RMA_BENCHES}
GROUPS = {
    "all": [b.name for b in BENCHES],
    "p2p": ["pingpong", "bw", "bibw", "msgrate"],
    # not in "all" until Rail MPI has one-sided communication (issue 53)
    "rma": [b.name for b in RMA_BENCHES],
    "coll": ["barrier", "bcast", "reduce", "allreduce", "reduce_scatter", "allgather",
             "gather", "scatter", "alltoall"],
}


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_size(text):
    text = text.strip()
    shift = {"k": 10, "m": 20, "g": 30}.get(text[-1:].lower(), 0)
    return int(text[:-1] if shift else text) << shift


def size_label(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


def fmt(v):
    if v is None:
        return "-"
    if v >= 1000:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    return "%.2f" % v if v >= 1 else "%.3f" % v


# ---------------------------------------------------------------- MPIs

class Mpi:
    """One MPI: how to compile (mpicc) and how to launch (mpirun)."""

    def __init__(self, name, mpicc, mpirun, flavour):
        self.name, self.mpicc, self.mpirun, self.flavour = name, mpicc, mpirun, flavour
        self.library = ""  # MPI_Get_library_version, from the first run
        # the driver's own RAIL_MPICC / RAIL_MPIRUN / RAIL_RAILINFO are not
        # Rail MPI parameters: keep them from the jobs (Rail would warn)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("RAIL_MPICC", "RAIL_MPIRUN", "RAIL_RAILINFO")}
        if flavour == "openmpi" and os.geteuid() == 0:
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def launch(self, np, bind, argv):
        cmd = [self.mpirun, "-n", str(np)]
        if self.flavour == "openmpi":
            if np > CORES:
                cmd.append("--oversubscribe")
            cmd += ["--bind-to", bind]
        elif self.flavour == "mpich":
            cmd += ["-bind-to", bind]
        elif self.flavour in PSEUDO:  # collbound forks its own processes, unpinned
            return [argv[0], "-n", str(np)] + (["-k"] if self.flavour == CMA_BOUND else []) + \
                argv[1:]
        else:  # Rail MPI: oversubscription needs no flag
            cmd += ["--bind-to", bind]
        return cmd + argv


def is_exe(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_rail(args):
    if args.rail_prefix:
        cc, run = (os.path.join(args.rail_prefix, "bin", x) for x in ("mpicc", "mpirun"))
    else:
        cc = os.environ.get("RAIL_MPICC") or os.path.join(TOP_DIR, "tools", "mpicc")
        run = os.environ.get("RAIL_MPIRUN") or os.path.join(TOP_DIR, "runtime", "mpirun")
    if is_exe(cc) and is_exe(run):
        return Mpi("rail", cc, run, "rail"), None
    return None, "Rail MPI not found (looked for %s and %s)" % (cc, run)


def discover(args):
    found, missing = {}, {}
    rail, why = find_rail(args)
    if rail:
        found["rail"] = rail
    else:
        missing["rail"] = why
    if args.rail_base:
        cc, run = (os.path.join(args.rail_base, "bin", x) for x in ("mpicc", "mpirun"))
        if is_exe(cc) and is_exe(run):
            found[BASE] = Mpi(BASE, cc, run, "rail")
        else:
            missing[BASE] = "--rail-base: no %s and %s" % (cc, run)
    for name in PEER_ORDER:
        cc, run = shutil.which("mpicc." + name), shutil.which("mpirun." + name)
        if cc and run:
            found[name] = Mpi(name, cc, run, name)
        else:
            missing[name] = "%s not found (mpicc.%s, mpirun.%s; try --install)" % (
                name, name, name)
    return found, missing


def select_mpis(args):
    found, missing = discover(args)
    wanted = args.mpi.split(",") if args.mpi else ["rail"] + PEER_ORDER
    if args.rail_base and BASE not in wanted:
        wanted.insert(1, BASE)
    for name in wanted:
        if name not in found and name not in missing:
            sys.exit("run_bench: unknown MPI %r (choose from rail, openmpi, mpich, and "
                     "rail_base with --rail-base)" % name)
    present = [found[n] for n in wanted if n in found]
    for name in wanted:
        if name not in found:
            peers_only = name == "rail" and present
            note(missing[name] + ("; measuring the peers only" if peers_only else ""))
    return present


def install():
    cmd = ["apt-get", "install", "-y"] + APT_PACKAGES
    pre = [] if os.geteuid() == 0 else ["sudo"]
    note("installing: " + " ".join(APT_PACKAGES))
    for c in (["apt-get", "update"], cmd):
        if subprocess.call(pre + c) != 0:
            sys.exit("run_bench: %s failed" % " ".join(pre + c))


# ---------------------------------------------------------------- build

def build_one(mpi, bench, build_dir):
    exe = os.path.join(build_dir, mpi.name, bench.exe)
    srcs = [os.path.join(BENCH_DIR, bench.source)]
    if bench.name != "startup":
        srcs.append(os.path.join(BENCH_DIR, "bench_common.c"))
    cmd = [mpi.mpicc, "-std=c11", "-O2", "-o", exe] + srcs
    p = subprocess.run(cmd, capture_output=True, text=True, env=mpi.env)
    log = "$ %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr)
    return (mpi.name, bench.name), (exe if p.returncode == 0 else None), log


def build_all(mpis, benches, out):
    """Returns {(mpi, bench): executable or None}."""
    build_dir = os.path.join(out, "build")
    for mpi in mpis:
        os.makedirs(os.path.join(build_dir, mpi.name), exist_ok=True)
    jobs = [(m, b) for m in mpis for b in benches]
    exes = {}
    with ThreadPoolExecutor(CORES) as pool, \
            open(os.path.join(out, "logs", "build.log"), "w") as log:
        for key, exe, text in pool.map(lambda j: build_one(j[0], j[1], build_dir), jobs):
            log.write(text)
            exes[key] = exe
            if exe is None:
                note("build of %s with %s FAILED (see %s/logs/build.log)" % (key[1], key[0], out))
    return exes


def build_bound(out, exes):
    """collbound (no MPI) as the pseudo-MPIs BOUND and, where this machine
    lets one process read another's memory, CMA_BOUND: a list, maybe empty."""
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = os.path.join(out, "build", "collbound")
    if not cc or subprocess.call([cc, "-O2", "-o", exe, BOUND_SRC]) != 0:
        note("collbound: no C compiler or the build failed; no memory-bandwidth bound")
        return []
    for name in BOUND_BENCHES:
        exes[(BOUND, name)] = exe
    bounds = [Mpi(BOUND, None, None, BOUND)]
    probe = [exe, "-k", "-b", "bcast", "-n", "2", "-s", "4096:4096", "-t", "1", "-i", "1"]
    if subprocess.call(probe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        for name in CMA_BENCHES:
            exes[(CMA_BOUND, name)] = exe
        bounds.append(Mpi(CMA_BOUND, None, None, CMA_BOUND))
    else:
        note("collbound -k: cross-memory attach refused here; no single-copy bound")
    return bounds


# ---------------------------------------------------------------- running

def descendants(pid):
    """Processes started by pid: its children's tree and its session (the
    launcher was started as a session leader), found in /proc."""
    children, session = {}, []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
                if int(fields[3]) == pid and int(entry) != pid:
                    session.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out + [p for p in session if p not in out]


def kill_tree(proc):
    """End a launcher and everything it started (ranks may leave its group)."""
    pids = [proc.pid] + descendants(proc.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=3)
            pids = [p for p in pids if os.path.exists("/proc/%d" % p)]
            if not pids:
                return
        except subprocess.TimeoutExpired:
            pass


def run_cmd(cmd, env, timeout):
    """Runs cmd; returns (status, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        status = "ok" if proc.returncode == 0 else "ERROR"
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        status = "TIMEOUT"
    except BaseException:
        kill_tree(proc)
        raise
    if status != "TIMEOUT" and any(l.startswith("FAIL bench=")
                                   for l in (out + err).splitlines()):
        status = "FAIL"
    return status, out or "", err or "", time.monotonic() - t0


def parse_output(text):
    """RESULT lines as dicts, the planned sizes, the library line."""
    results, plan, library = [], [], ""
    for line in text.splitlines():
        if line.startswith("RESULT ") or line.startswith("PLAN "):
            kv = dict(tok.split("=", 1) for tok in line.split()[1:] if "=" in tok)
            if line.startswith("PLAN "):
                plan = [int(s) for s in kv.get("sizes", "").split(",") if s]
            else:
                results.append(kv)
        elif line.startswith("# ") and " library: " in line and not library:
            library = line.split(" library: ", 1)[1].strip()
    return results, plan, library


def metric_value(bench, size, median_us):
    if bench.metric == BANDWIDTH:
        return size / median_us if median_us > 0 else 0.0
    if bench.metric == RATE:
        return 1 / median_us if median_us > 0 else 0.0
    if bench.metric == STARTUP:
        return median_us / 1000
    return median_us


class Runner:
    """Runs one (mpi, bench, np, rep) at a time, logs it, returns CSV rows."""

    def __init__(self, args, exes, out, csv_writer):
        self.args, self.exes, self.out, self.csv = args, exes, out, csv_writer
        self.log = open(os.path.join(out, "logs", "runs.log"), "w")
        self.failures = []
        self.detail = None  # what the last run that did not pass printed

    def bench_args(self, bench):
        a = self.args
        lo, hi = a.size_range
        if bench.max_size:
            hi = max(lo, min(hi, bench.max_size))
        argv = ["-s", "%d:%d" % (lo, hi), "-t", str(a.trials), "-T", str(a.target_ms)]
        if a.iters:
            argv += ["-i", str(a.iters), "-w", "1"]
        if a.warmup_ms is not None:
            argv += ["-m", str(a.warmup_ms)]
        elif a.iters:
            argv += ["-m", "0"]   # a fixed count checks, it does not time
        if a.window:
            argv += ["-W", str(a.window)]
        return argv

    def run(self, mpi, bench, np, rep, order):
        self.detail = None
        exe = self.exes.get((mpi.name, bench.name))
        busy = wait_idle(self.args.idle_wait) if self.args.idle_wait else None
        base = dict(mpi=mpi.name, bench=bench.name, np=np, rep=rep, order=order,
                    unit=bench.metric, load="%.2f" % os.getloadavg()[0],
                    busy="" if busy is None else "%.2f" % busy)
        if exe is None:
            self.failures.append("%s %s: did not build" % (mpi.name, bench.name))
            return self.emit([dict(base, size="", status="BUILD")])
        if bench.name == "startup":
            return self.run_startup(mpi, exe, np, base)
        argv = [exe] + self.bench_args(bench)
        if mpi.flavour in PSEUDO:
            argv[1:1] = ["-b", bench.name]
        cmd = mpi.launch(np, self.args.bind, argv)
        status, out, err, secs = run_cmd(cmd, mpi.env, self.args.timeout)
        self.record(cmd, status, out, err, secs)
        results, plan, library = parse_output(out)
        mpi.library = mpi.library or library
        if status == "ok" and not results:
            status, err = "ERROR", err + "\nno RESULT line in the output"
        rows, done = [], set()
        for r in results:
            size, med = int(r["size"]), float(r["median_us"])
            done.add(size)
            rows.append(dict(base, size=size, status="ok", median_us=med,
                             min_us=float(r["min_us"]), max_us=float(r["max_us"]),
                             value=metric_value(bench, size, med), iters=r.get("iters"),
                             trials=r.get("trials"), seconds="%.2f" % secs))
        if status != "ok":
            self.fail(mpi, bench, np, rep, status, out + err, done)
            missing = [s for s in plan if s not in done] or [""]
            rows += [dict(base, size=s, status=status, seconds="%.2f" % secs) for s in missing]
        return self.emit(rows)

    def run_startup(self, mpi, exe, np, base):
        times, status = [], "ok"
        for _ in range(self.args.startup_runs):
            cmd = mpi.launch(np, self.args.bind, [exe])
            status, out, err, secs = run_cmd(cmd, mpi.env, self.args.timeout)
            self.record(cmd, status, out, err, secs)
            if status != "ok":
                self.fail(mpi, BENCH_BY_NAME["startup"], np, base["rep"], status, out + err,
                          ())
                return self.emit([dict(base, size=0, status=status)])
            times.append(secs * 1e6)
        med = statistics.median(times)
        return self.emit([dict(base, size=0, status="ok", median_us=med, min_us=min(times),
                               max_us=max(times), value=med / 1000, trials=len(times),
                               seconds="%.2f" % (sum(times) / 1e6))])

    def record(self, cmd, status, out, err, secs):
        self.log.write("=== %s  [%s, %.2f s]\n%s%s" % (" ".join(cmd), status, secs, out, err))
        self.log.flush()

    def fail(self, mpi, bench, np, rep, status, text, done):
        self.failures.append("%s %s np=%d rep %d: %s" % (mpi.name, bench.name, np, rep, status))
        if status == "TIMEOUT":
            self.detail = "    killed after %g s; last size measured: %s" % (
                self.args.timeout, size_label(max(done)) if done else "none")
            return
        lines = [l for l in text.splitlines() if l.startswith("FAIL ")] or [
            l for l in text.splitlines() if l.strip("- ")][-3:]
        self.detail = "    " + (" | ".join(lines)[:500] or "(no output)")

    def emit(self, rows):
        for r in rows:
            self.csv.writerow(r)
        return rows


# ---------------------------------------------------------------- schedule

def plan_rounds(args, benches):
    rounds = []
    for bench in benches:
        for np in args.np_list:
            if bench.pairs and np % 2:
                note("skipping %s at np=%d: it needs pairs (an even rank count)" % (bench.name, np))
                continue
            rounds.append((bench, np))
    return rounds


def progress_line(i, total, t_start, bench, np, rep, reps, mpi):
    elapsed = time.monotonic() - t_start
    eta = "" if i == 1 else "  eta %dm%02ds" % divmod(int(elapsed / (i - 1) * (total - i + 1)), 60)
    return "[%3d/%d %2dm%02ds%s] %-14s np=%-2d rep %d/%d %-8s" % (
        i, total, *divmod(int(elapsed), 60), eta, bench.name, np, rep, reps, mpi.name)


def short_result(rows, bench):
    status = next((r["status"] for r in rows if r["status"] != "ok"), "ok")
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return status
    pick = next((r for r in ok if r["size"] == 8), ok[-1])
    return "%s  %s s  (%s B: %s %s)" % (status, rows[-1].get("seconds") or "?",
                                       size_label(pick["size"]), fmt(pick["value"]), bench.metric)


def run_interleaved(args, mpis, runner, rounds, hw, bounds):
    """For every (bench, np): reps rounds of A B C (and the bounds, for a
    collective they model), rotated each time."""
    def who(bench):
        return mpis + [b for b in bounds
                       if bench.name in (CMA_BENCHES if b.flavour == CMA_BOUND else BOUND_BENCHES)]
    total = sum(len(who(b)) for b, _ in rounds) * args.reps
    i, t_start = 0, time.monotonic()
    for round_no, (bench, np) in enumerate(rounds, 1):
        hw.sample(round_no)
        group = who(bench)
        for rep in range(args.reps):
            order = group[rep % len(group):] + group[:rep % len(group)]
            for pos, mpi in enumerate(order, 1):
                i += 1
                print(progress_line(i, total, t_start, bench, np, rep + 1, args.reps, mpi),
                      end=" ", file=sys.stderr, flush=True)
                got = runner.run(mpi, bench, np, rep + 1, pos)
                note(short_result(got, bench))
                if runner.detail:
                    note(runner.detail)


def run_check(mpis, runner, rounds):
    for bench, np in rounds:
        for mpi in mpis:
            got = runner.run(mpi, bench, np, 1, 1)
            bad = next((r["status"] for r in got if r["status"] != "ok"), None)
            note("%-4s %-14s np=%-2d %s" % ("FAIL" if bad else "PASS", bench.name, np,
                                            mpi.name + (" (%s)" % bad if bad else "")))
            if runner.detail:
                note(runner.detail)
    note("check: %d run(s), %d did not pass" % (len(rounds) * len(mpis), len(runner.failures)))


# ---------------------------------------------------------------- hwlimits

class HwLimits:
    """The machine's limits (hwlimits.c), sampled at the start and before every
    round, since on a shared or virtual machine they drift too.  The limit is
    the best sample: interference only ever makes a sample worse."""

    SIZES = (1 << 20, 4 << 20)

    def __init__(self):
        self.exe, self.writer, self.pp, self.copy = None, None, [], {}

    def build(self, args, out, writer):
        self.writer = writer
        cc = shutil.which("cc") or shutil.which("gcc")
        if not os.path.isfile(args.hwlimits) or not cc:
            note("hwlimits: %s or a C compiler not found; no physical limits" % args.hwlimits)
            return
        exe = os.path.join(out, "build", "hwlimits")
        if subprocess.call([cc, "-O2", "-o", exe, args.hwlimits]) != 0:
            note("hwlimits: build failed; no physical limits")
            return
        self.exe = exe

    def sample(self, round_no):
        for size in self.SIZES if self.exe else ():
            # a busy machine can stretch the ping-pong to minutes: then skip
            status, line, _, _ = run_cmd([self.exe, str(size)], None, 30)
            kv = dict(t.split("=", 1) for t in line.split() if "=" in t)
            if status != "ok" or "copy_GBps" not in kv:
                note("hwlimits: no sample (%s)" % status)
                continue
            gbps, us = float(kv["copy_GBps"]), float(kv["pingpong_us"])
            self.add(size, gbps, us)
            base = dict(mpi="hwlimits", rep=round_no, status="ok")
            self.writer.writerow(dict(base, bench="memcpy", np=1, size=size, value=gbps,
                                      unit="GB/s"))
            self.writer.writerow(dict(base, bench="cacheline_pingpong", np=2, size=0,
                                      median_us=us, value=us, unit=LATENCY))

    def add(self, size, gbps, us):
        if gbps is not None:
            self.copy.setdefault(size, []).append(gbps)
        if us is not None:
            self.pp.append(us)

    def result(self):
        """{"pingpong_us": best, "copy_GBps": {size: best}, and their medians}"""
        if not self.pp:
            return None
        return {"pingpong_us": min(self.pp), "pingpong_median": statistics.median(self.pp),
                "samples": len(self.pp),
                "copy_GBps": {s: max(v) for s, v in self.copy.items()},
                "copy_median": {s: statistics.median(v) for s, v in self.copy.items()}}


# ---------------------------------------------------------------- summary

def aggregate(rows):
    """{(bench, np): {size: {mpi: (value or None, status, fastest or None)}}}: the
    median over reps, and the best rep (least time, most bandwidth)."""
    cells = {}
    for r in rows:
        if r.get("size") == "":
            continue
        cells.setdefault((r["bench"], r["np"]), {}).setdefault(r["size"], {}).setdefault(
            r["mpi"], []).append(r)
    table = {}
    for key, sizes in cells.items():
        for size, per_mpi in sizes.items():
            for mpi, rs in per_mpi.items():
                vals = [r["value"] for r in rs if r["status"] == "ok"]
                bad = [r["status"] for r in rs if r["status"] != "ok"]
                metric = BENCH_BY_NAME[key[0]].metric if key[0] in BENCH_BY_NAME else LATENCY
                fastest = (min if metric in (LATENCY, STARTUP) else max)(vals) if vals else None
                cell = (statistics.median(vals) if vals else None, bad[0] if bad else "ok",
                        fastest)
                table.setdefault(key, {}).setdefault(size, {})[mpi] = cell
    return table


def better(metric, a, b):
    return a < b if metric in (LATENCY, STARTUP) else a > b


def time_ratio(metric, rail, best):
    """Rail's time over the best peer's time: below 1 means Rail is faster."""
    if rail is None or best is None or rail <= 0 or best <= 0:
        return None
    return rail / best if metric in (LATENCY, STARTUP) else best / rail


def best_peer(metric, cells, peers, field=0):
    """(peer, value) of the best peer by the median (field 0) or by its
    fastest rep (field 2)."""
    best = None
    for p in peers:
        v = cells.get(p, (None, "", None))[field]
        if v is not None and (best is None or better(metric, v, best[1])):
            best = (p, v)
    return best


def cell_text(cell):
    if cell is None:
        return "-"
    v, status = cell[0], cell[1]
    if v is None:
        return status
    return fmt(v) + ("" if status == "ok" else "*")


def table_lines(bench, np, sizes, names, markdown):
    """One table: a row per size, a column per MPI, best peer, ratio."""
    peers = [n for n in names if n not in OURS]
    head = ["size"] + names + ["best peer", "rail/best", "fastest reps"]
    if BASE in names:
        head.append("rail/base")
    body = []
    for size in sorted(sizes):
        if size == 0 and bench.metric == BANDWIDTH:
            continue  # no bytes, no bandwidth
        cells = sizes[size]
        best = best_peer(bench.metric, cells, peers)
        rail = cells.get("rail", (None, ""))[0]
        ratio = time_ratio(bench.metric, rail, best and best[1])
        fbest = best_peer(bench.metric, cells, peers, 2)
        fratio = time_ratio(bench.metric, cells.get("rail", (None, "", None))[2],
                            fbest and fbest[1])
        body.append([size_label(size)] + [cell_text(cells.get(n)) for n in names] +
                    [best[0] if best else "-", "%.2f" % ratio if ratio else "-",
                     "%.2f" % fratio if fratio else "-"])
        if BASE in names:
            bratio = time_ratio(bench.metric, rail, cells.get(BASE, (None, ""))[0])
            body[-1].append("%.2f" % bratio if bratio else "-")
    if markdown:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + [
            "| " + " | ".join(r) + " |" for r in body]
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [head] + body]


def describe(bench):
    good = "lower is better" if bench.metric in (LATENCY, STARTUP) else "higher is better"
    return "%s (%s; %s, %s)" % (bench.name, bench.what, bench.metric, good)


def summary(args, table, names, lim, key_sizes):
    """Returns (terminal text, markdown text)."""
    term, md = [], []
    note_ratio = ("rail/best = Rail's time / best peer's time (for bandwidth and rate: best "
                  "peer's / Rail's), so below 1 means Rail MPI is faster; medians over the "
                  "repetitions.  fastest reps = the same ratio between each MPI's best "
                  "repetition (robust to a machine whose speed changes between runs).  "
                  "'*' = some repetitions failed or timed out; TIMEOUT/FAIL/ERROR = all did.")
    term.append(note_ratio)
    md.append(note_ratio)
    for bench in BENCHES + RMA_BENCHES:
        for np in args.np_list:
            sizes = table.get((bench.name, np))
            if not sizes:
                continue
            title = "%s, np=%d" % (describe(bench), np)
            shown = {s: c for s, c in sizes.items() if key_sizes is None or s in key_sizes}
            term += ["", title] + table_lines(bench, np, shown or sizes, names, False)
            md += ["", "### " + title, ""] + table_lines(bench, np, sizes, names, True)
    if lim:
        lines = hwlimit_lines(table, names, lim)
        term += [""] + lines
        md += ["", "### Physical limits (hwlimits)", ""] + ["- " + l for l in lines[1:]]
    t, m = bound_lines(args, table, names, key_sizes)
    term += t
    md += m
    return "\n".join(term), "\n".join(md)


def bound_lines(args, table, names, key_sizes):
    """Each MPI's median time as a multiple of collbound's (and of collbound
    -k's, the kernel's single copy), from BOUND_FROM: (terminal lines,
    markdown lines)."""
    kinds = [(BOUND, BOUND_BENCHES, "Memory-bandwidth bound (collbound)",
              "Memory-bandwidth bound (bench/collbound.c: the same operation with every "
              "process's buffers shared and each byte moved once, no MPI; its median time, "
              "and each MPI's median as a multiple of it):"),
             (CMA_BOUND, CMA_BENCHES, "Single-copy bound by the kernel (collbound -k)",
              "Single-copy bound by the kernel (bench/collbound.c -k: as above, but every "
              "copy between two processes by cross-memory attach, process_vm_readv, the "
              "mechanism an MPI has on a node without XPMEM; its median time, and each "
              "MPI's median as a multiple of it):")]
    term, md = [], []
    for kind, benches, title, head in kinds:
        t, m = [], []
        for name in benches:
            for np in args.np_list:
                sizes = {s: c for s, c in table.get((name, np), {}).items()
                         if s >= BOUND_FROM and c.get(kind, (None,))[0]}
                if not sizes:
                    continue
                rows = []
                for size in sorted(sizes):
                    b = sizes[size][kind][0]
                    xs = [sizes[size].get(n, (None,))[0] for n in names]
                    rows.append((size, b, ["%.2fx" % (x / b) if x else "-" for x in xs]))
                m += ["", "#### %s, np=%d" % (name, np), "",
                      "| size | bound (us) | " + " | ".join(names) + " |",
                      "|" + "---|" * (len(names) + 2)]
                m += ["| %s | %s | %s |" % (size_label(s), fmt(b), " | ".join(x))
                      for s, b, x in rows]
                shown = [r for r in rows if key_sizes is None or r[0] in key_sizes]
                if shown:
                    t.append("  %-14s np=%-2d " % (name, np) + "; ".join(
                        "%s %s us: %s" % (size_label(s), fmt(b), " ".join(
                            "%s %s" % (n, x) for n, x in zip(names, xs))) for s, b, xs in shown))
        if m:
            term += [""] + [head] + t
            md += ["", "### " + title, "", head] + m
    return term, md


def hwlimit_lines(table, names, lim):
    pp = table.get(("pingpong", 2), {})
    bw = table.get(("bw", 2), {})
    floor = lim["pingpong_us"]
    out = ["Physical limits (hwlimits; best of %d samples, median in brackets) and how close "
           "each MPI comes:" % lim["samples"],
           "cache-line ping-pong between two processes: %.3f us (%.3f), the latency floor" % (
               floor, lim["pingpong_median"])]
    for n in names:
        v = pp.get(8, {}).get(n, (None, ""))[0]
        if v is not None:
            out.append("  %-8s pingpong 8 B np=2: %s us = %.1fx the floor" % (n, fmt(v),
                                                                              v / floor))
    for size, gbps in sorted(lim["copy_GBps"].items()):
        out.append("single-core memcpy of %s: %.1f GB/s (%.1f), the single-copy ceiling" % (
            size_label(size), gbps, lim["copy_median"][size]))
        for n in names:
            v = bw.get(size, {}).get(n, (None, ""))[0]
            if v is not None:
                out.append("  %-8s bw %s np=2: %.2f GB/s = %.0f%% of memcpy" % (
                    n, size_label(size), v / 1000, v / 10 / gbps))
    return out


# ---------------------------------------------------------------- plots

COLORS = {"rail": "#d62728", BASE: "#ff9896", "openmpi": "#1f77b4", "mpich": "#2ca02c",
          BOUND: "#000000", CMA_BOUND: "#7f7f7f"}
LABELS = {"rail": "Rail MPI", BASE: "Rail MPI (base)", "openmpi": "Open MPI", "mpich": "MPICH",
          BOUND: "bound (collbound, no MPI)", CMA_BOUND: "single copy by the kernel (collbound -k)"}
YLABELS = {LATENCY: "time (us), lower is better", BANDWIDTH: "MB/s, higher is better",
           RATE: "million messages/s, higher is better", STARTUP: "ms, lower is better"}
# size axis labels: every 4x on a full-size plot, every 16x on a grid panel
SIZE_TICS = {step: ", ".join('"%s" %d' % (size_label(1 << k), 1 << k) for k in range(0, 41, step))
             for step in (2, 4)}


def write_data(points, names, path):
    """points: {x: {mpi: (value, status)}}; x <= 0 is left out (log axes)."""
    with open(path, "w") as f:
        f.write("# x " + " ".join(names) + "\n")
        for x in sorted(p for p in points if p > 0):
            vals = [points[x].get(n, (None, ""))[0] for n in names]
            f.write("%d %s\n" % (x, " ".join("?" if v is None else repr(v) for v in vals)))


def panel(title, xlabel, ylabel, xtics, data, names):
    """gnuplot commands for one log-log panel, one line per MPI."""
    lines = ["'%s' using 1:%d with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' title '%s'" % (
        data, i + 2, COLORS.get(n, "black"), LABELS.get(n, n)) for i, n in enumerate(names)]
    return ['set title "%s"' % title, "set xlabel '%s'" % xlabel, "set ylabel '%s'" % ylabel,
            "set logscale x 2", "set logscale y", "set grid", "set xtics (%s)" % xtics,
            "set key below horizontal samplen 2 width 2", "set datafile missing '?'",
            "plot " + ", ".join(lines)]


def render(png, panels, cols):
    """Draws panels (lists of commands) on a grid of cols columns."""
    rows = (len(panels) + cols - 1) // cols
    width, height = (800, 500) if len(panels) == 1 else (450 * cols, 330 * rows)
    script = ["set terminal pngcairo noenhanced size %d,%d font ',%d'" % (
        width, height, 10 if len(panels) == 1 else 9), "set output '%s'" % png,
              "set multiplot layout %d,%d" % (rows, cols)]
    for p in panels:
        script += p
    p = subprocess.run(["gnuplot"], input="\n".join(script + ["unset multiplot"]),
                       capture_output=True, text=True)
    if p.returncode != 0:
        note("gnuplot failed for %s: %s" % (png, p.stderr.strip()[:300]))


def missing_note(points, names):
    """' (MPICH: TIMEOUT from 1K)' for the sizes a line lacks."""
    notes = []
    for n in names:
        bad = [(s, c[1]) for s, cells in sorted(points.items()) for m, c in cells.items()
               if m == n and c[0] is None and s > 0]
        if bad:
            notes.append("%s: %s from %s" % (LABELS.get(n, n), bad[0][1], size_label(bad[0][0])))
    return "  (%s)" % "; ".join(notes) if notes else ""


def size_panels(table, names, pdir, np, group):
    """One PNG per benchmark of the group at this np; returns the panels."""
    panels = []
    for name in GROUPS[group]:
        points = table.get((name, np))
        if not points or not any(s > 0 for s in points):
            continue  # barrier: no size axis
        bench, data = BENCH_BY_NAME[name], os.path.join(pdir, "%s_np%d.dat" % (name, np))
        lines = names + [k for k in PSEUDO if any(k in c for c in points.values())]
        write_data(points, lines, data)
        title = "%s, np=%d%s" % (name, np, missing_note(points, names))
        for step in (2, 4):
            p = panel(title, "message size (bytes)", YLABELS[bench.metric], SIZE_TICS[step],
                      data, lines)
            if step == 2:
                render(os.path.join(pdir, "%s_np%d.png" % (name, np)), [p], 1)
        panels.append(p)
    return panels


def np_panels(args, table, names, pdir):
    """Figures without a size axis (barrier, startup) against the rank count."""
    panels = []
    for name in ("barrier", "startup"):
        points = {np: table.get((name, np), {}).get(0, {}) for np in args.np_list}
        if not any(points.values()):
            continue
        data = os.path.join(pdir, "%s_by_np.dat" % name)
        write_data(points, names, data)
        ylabel = YLABELS[BENCH_BY_NAME[name].metric]
        panels.append(panel(name, "ranks (np)", ylabel, ", ".join(map(str, args.np_list)),
                            data, names))
    return panels


def plots(args, table, names, out):
    if not shutil.which("gnuplot"):
        note("gnuplot not found: no plots (install gnuplot-nox, or use --install)")
        return
    pdir = os.path.join(out, "plots")
    os.makedirs(pdir, exist_ok=True)
    for old in os.listdir(pdir):  # a reused --out folder: no stale figures
        if old.endswith((".png", ".dat")):
            os.remove(os.path.join(pdir, old))
    for np in args.np_list:
        for group, cols in (("p2p", 2), ("coll", 3)):
            panels = size_panels(table, names, pdir, np, group)
            if len(panels) > 1:
                render(os.path.join(pdir, "%s_np%d.png" % (group, np)), panels, cols)
    panels = np_panels(args, table, names, pdir)
    if panels:
        render(os.path.join(pdir, "barrier_startup.png"), panels, len(panels))
    note("plots: %s/*.png" % pdir)


# ---------------------------------------------------------------- main

# option: full run, --quick, --check (explicit options win over all three)
DEFAULTS = [("sizes", "0:16M", "0:64K", "0:4K"), ("reps", 3, 1, 1), ("trials", 5, 3, 1),
            ("target_ms", 5, 2, 2), ("iters", 0, 0, 3), ("window", 0, 0, 0),
            ("startup_runs", 5, 3, 1)]


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Build and run the Rail MPI benchmarks with every MPI found, interleaved.",
        epilog="Benchmarks: %s; groups: all, p2p, coll, rma (not in all)." %
        ", ".join(b.name for b in BENCHES + RMA_BENCHES))
    ap.add_argument("--bench", default="all", help="comma-separated benchmarks or groups")
    ap.add_argument("--np", help="rank counts, e.g. 2,4,8 (default 2,4)")
    ap.add_argument("--sizes", help="MIN:MAX bytes, powers of two (default 0:16M)")
    ap.add_argument("--reps", type=int, help="interleaved repetitions (default 3)")
    ap.add_argument("--trials", type=int, help="trials per size in one run (default 5)")
    ap.add_argument("--target-ms", type=int, help="length of one trial in ms (default 5)")
    ap.add_argument("--iters", type=int, help="fixed iterations per trial (default: by time)")
    ap.add_argument("--warmup-ms", type=int, metavar="MS",
                    help="untimed calls per size for at least MS ms, the first size four "
                         "times as long (default 50; 0 with --iters)")
    ap.add_argument("--window", type=int, help="messages in flight in bw, bibw, msgrate (64)")
    ap.add_argument("--startup-runs", type=int, help="launches per startup figure (default 5)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    ap.add_argument("--idle-wait", type=float, default=0, metavar="S",
                    help="on a shared machine: before each run wait up to S seconds for "
                         "idle cores (default 0: do not wait)")
    ap.add_argument("--mpi", help="comma-separated: rail,openmpi,mpich (default: all found)")
    ap.add_argument("--rail-prefix", help="use PREFIX/bin/mpicc and PREFIX/bin/mpirun")
    ap.add_argument("--rail-base", metavar="PREFIX",
                    help="also run the Rail MPI installed under PREFIX (an earlier build) in "
                         "the same rotation, as rail_base; the tables add rail/base")
    ap.add_argument("--bind", choices=["none", "core"], default="none", help="rank pinning")
    ap.add_argument("--out", help="results folder (default bench-results/<time>)")
    ap.add_argument("--hwlimits", default=HWLIMITS_SRC, help="path of hwlimits.c")
    ap.add_argument("--table-sizes", default="0,8,1K,64K,1M,4M,16M",
                    help="sizes shown on the terminal ('all' for every size)")
    ap.add_argument("--no-bound", dest="bound", action="store_false",
                    help="do not run collbound (the collectives' memory-bandwidth bound)")
    ap.add_argument("--install", action="store_true", help="apt-get install the peer MPIs first")
    ap.add_argument("--quick", action="store_true", help="small fast sweep (smoke test)")
    ap.add_argument("--report", metavar="DIR",
                    help="only redo the tables and plots from DIR/results.csv")
    ap.add_argument("--check", action="store_true",
                    help="run each benchmark once at tiny sizes; exit 1 on any failure")
    args = ap.parse_args(argv)
    for opt, full, quick, check in DEFAULTS:
        if getattr(args, opt) is None:
            setattr(args, opt, check if args.check else quick if args.quick else full)
    try:
        args.size_range = tuple(parse_size(s) for s in args.sizes.split(":", 1))
        if len(args.size_range) == 1:
            args.size_range *= 2
        args.np_given = args.np is not None
        args.np_list = [int(n) for n in (args.np or "2,4").split(",")]
        args.key_sizes = (None if args.table_sizes == "all" else
                          {parse_size(s) for s in args.table_sizes.split(",")})
    except ValueError:
        ap.error("bad --sizes, --np or --table-sizes")
    names = []
    for item in args.bench.split(","):
        if item not in GROUPS and item not in BENCH_BY_NAME:
            ap.error("unknown benchmark %r" % item)
        names += [n for n in GROUPS.get(item, [item]) if n not in names]
    args.benches = [b for b in BENCHES + RMA_BENCHES if b.name in names]
    if args.reps < 1 or args.trials < 1 or min(args.np_list) < 1 or \
            args.size_range[0] > args.size_range[1]:
        ap.error("--reps, --trials and --np must be positive, and MIN <= MAX")
    return args


def cpu_busy(interval=0.3):
    """Fraction of all cores busy over a short interval (from /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)  # idle + iowait, total
    (i0, t0), _, (i1, t1) = sample(), time.sleep(interval), sample()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_idle(limit_s):
    """With --idle-wait: wait, at most limit_s, until the cores are nearly idle.
    Returns the busy fraction seen last."""
    deadline, said = time.monotonic() + limit_s, False
    while True:
        busy = cpu_busy()
        if busy < 0.15 or time.monotonic() > deadline:
            return busy
        if not said:
            print("(waiting for idle cores: %.0f%% busy) " % (busy * 100), end="",
                  file=sys.stderr, flush=True)
            said = True
        time.sleep(1)


def busy_warning():
    load = os.getloadavg()[0]
    if load > CORES / 2:
        note("warning: load average %.1f on %d cores: other work shares this machine, so "
             "timings will be noisy (the interleaving spreads it over all MPIs alike)" % (
                 load, CORES))


def make_out_dir(args):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(args.out or os.path.join(TOP_DIR, "bench-results", stamp))
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    if not args.out:
        latest = os.path.join(TOP_DIR, "bench-results", "latest")
        if os.path.islink(latest):
            os.remove(latest)
        if not os.path.exists(latest):
            os.symlink(stamp, latest)
    return out


def write_env(mpis, out):
    uname = os.uname()
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    lines = ["date: %s" % datetime.datetime.now().isoformat(timespec="seconds"),
             "command: %s" % " ".join(sys.argv),
             "machine: %s %s, %s, %d cores" % (uname.sysname, uname.release, model,
                                                CORES),
             "load average at the end: %.1f %.1f %.1f" % os.getloadavg()]
    lines += ["%s: %s (mpicc %s, mpirun %s)" % (m.name, m.library or "version not seen",
                                                 m.mpicc, m.mpirun)
              for m in mpis]
    with open(os.path.join(out, "env.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


CSV_FIELDS = ["mpi", "bench", "np", "size", "rep", "order", "status", "median_us", "min_us",
              "max_us", "value", "unit", "iters", "trials", "seconds", "load", "busy"]


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    args = parse_args(argv)
    # Ctrl-C or a kill: end the running job, then summarise what was measured
    # (a background job of a shell may have started with SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupted)
    if args.report:
        return report_again(args)
    if args.install:
        install()
    mpis = select_mpis(args)
    if not mpis:
        note("run_bench: no MPI to measure")
        return 77 if args.check else 2
    out = make_out_dir(args)
    note("results: %s" % out)
    exes = build_all(mpis, args.benches, out)
    csv_path = os.path.join(out, "results.csv")
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        runner = Runner(args, exes, out, writer)
        rounds = plan_rounds(args, args.benches)
        if args.check:
            run_check(mpis, runner, rounds)
            write_env(mpis, out)
            return 1 if runner.failures else 0
        hw = HwLimits()
        hw.build(args, out, writer)
        bounds = build_bound(out, exes) if args.bound else []
        try:
            measure(args, mpis, runner, rounds, hw, bounds)
        except KeyboardInterrupt:
            note("interrupted: summarising what was measured")
            runner.failures.append("interrupted")
    rows, hw = read_results(csv_path)
    env = write_env(mpis, out)
    report(args, out, [m.name for m in mpis], rows, hw.result(), env)
    if runner.failures:
        print("\n%d run(s) did not pass:\n  %s" % (len(runner.failures),
                                                  "\n  ".join(runner.failures)))
    return 1 if runner.failures else 0


def measure(args, mpis, runner, rounds, hw, bounds):
    for _ in range(3):
        hw.sample(0)
    lim = hw.result()
    if lim:
        note("hwlimits: cache-line ping-pong %.3f us, memcpy %s" % (
            lim["pingpong_us"], ", ".join("%.1f GB/s at %s" % (g, size_label(s))
                                          for s, g in lim["copy_GBps"].items())))
    busy_warning()
    run_interleaved(args, mpis, runner, rounds, hw, bounds)


def report(args, out, names, rows, lim, env):
    """Tables on stdout and in summary.md, plots."""
    table = aggregate(rows)
    text, md = summary(args, table, names, lim, args.key_sizes)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("# Benchmark results\n\n" + "\n".join("- " + l for l in env) + "\n\n" + md + "\n")
    plots(args, table, names, out)
    print("\n".join(env) + "\n\n" + text)
    print("\nfull tables: %s/summary.md   raw: %s/results.csv" % (out, out))


def report_again(args):
    """--report DIR: tables and plots again from DIR/results.csv."""
    out = os.path.abspath(args.report)
    rows, hw = read_results(os.path.join(out, "results.csv"))
    names = []
    for r in rows:
        if r["mpi"] not in names and r["mpi"] not in PSEUDO:
            names.append(r["mpi"])
    names.sort(key=lambda n: (["rail", BASE] + PEER_ORDER + [n]).index(n))
    if not args.np_given:
        args.np_list = sorted({r["np"] for r in rows})
    try:
        with open(os.path.join(out, "env.txt")) as f:
            env = f.read().splitlines()
    except OSError:
        env = []
    report(args, out, names, rows, hw.result(), env)
    return 0


def read_results(path):
    """The measurement rows of a results.csv, and its hwlimits samples."""
    rows, hw = [], HwLimits()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            value = float(r["value"]) if r["value"] else None
            if r["mpi"] == "hwlimits":
                if r["bench"] == "memcpy":
                    hw.add(int(r["size"]), value, None)
                else:
                    hw.add(None, None, value)
                continue
            r["np"] = int(r["np"])
            r["size"] = int(r["size"]) if r["size"] else ""
            r["value"] = value
            rows.append(r)
    return rows, hw


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
