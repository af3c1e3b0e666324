#!/usr/bin/python3
"""Measure every algorithm of Rail MPI's tuned collective component on this
machine and write a rules file for it (coll/tuned/README.md).

For each operation, rank count and algorithm (and segment size or window,
for algorithms that take one) it runs the bench/ program of the operation
under Rail MPI's mpirun with the algorithm forced through the environment
(RAIL_COLL_TUNED_<OP>_ALGORITHM=<name>), interleaving the variants and
repeating them, and also measures the built-in decisions ("auto").  Then,
per operation and rank count, it picks the fastest algorithm at every
message size (keeping the previous size's choice when it is within
--tolerance of the best, so that noise does not fragment the rules), merges
neighbouring sizes into ranges and writes

    {"allreduce": [{"comm_size": [4, 4], "msg_size": [0, 16383],
                    "algorithm": "recursive_doubling"}, ...], ...}

with a summary of how the rules compare with the built-in decisions
(summary.md in --out).  Use the file with
RAIL_COLL_TUNED_RULES_FILE=<file> or `mpirun --param coll_tuned_rules_file=<file>`.

The algorithms, their parameters and restrictions come from the library
itself (railinfo); an algorithm that does not fit a rank count (e.g.
power-of-two only) is detected by its fallback message and left out there.

Exit status: 0 done, 1 a run failed, 2 bad usage or Rail MPI not found.
"""

import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench as rb  # noqa: E402  (the driver's build and run helpers)

# Operation of the tuned component -> bench program measuring it.  The
# programs' "size" is the message size of the rules (README.md): the buffer
# for bcast/reduce/allreduce, the block per process for the others.
PROGRAMS = {
    "barrier": "barrier", "bcast": "bcast", "reduce": "reduce", "allreduce": "allreduce",
    "allgather": "allgather", "alltoall": "alltoall", "reduce_scatter": "reduce_scatter",
    "gather": "gather", "scatter": "scatter",
}
# Operations without a program of their own, tuned from another one's
# measurements (same algorithms, same meaning of the size).
ALIASES = {"reduce_scatter_block": "reduce_scatter"}


def note(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- algorithms

def railinfo_path(mpi):
    exe = os.environ.get("RAIL_RAILINFO") or os.path.join(os.path.dirname(mpi.mpicc), "railinfo")
    return exe if rb.is_exe(exe) else None


def algorithms(railinfo):
    """{op: {"algs": [names], "params": {alg: (param name, kind)}}} from railinfo."""
    out = subprocess.run([railinfo, "--param", "coll_tuned_"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("coll_tune: %s failed: %s" % (railinfo, out.stderr.strip()))
    ops, text = {}, out.stdout
    for m in re.finditer(r"coll_tuned_(\w+)_algorithm = .*\n.*one of ([\w|]+)", text):
        ops[m.group(1)] = {"algs": [a for a in m.group(2).split("|") if a != "auto"],
                           "params": {}}
    for m in re.finditer(r"^\s*coll_tuned_(\w+)_(segsize|window) = ", text, re.M):
        name = m.group(1)
        for op, info in ops.items():
            for alg in info["algs"]:
                if name == op + "_" + alg:
                    info["params"][alg] = ("coll_tuned_%s_%s" % (name, m.group(2)), m.group(2))
    if not ops:
        sys.exit("coll_tune: %s lists no coll_tuned_*_algorithm parameter: is the tuned "
                 "component built in?" % railinfo)
    return ops


def variants(op, info, args):
    """[(label, algorithm or None for auto, env)] to measure for op."""
    envname = "RAIL_COLL_TUNED_%s_ALGORITHM" % op.upper()
    out = [("auto", None, None, {})]
    for alg in info["algs"]:
        param = info["params"].get(alg)
        values = [None]
        if param and param[1] == "segsize":
            values = args.segsize_list
        elif param and param[1] == "window":
            values = args.window_list
        for v in values:
            env = {envname: alg}
            label = alg
            if v is not None:
                env["RAIL_" + param[0].upper()] = str(v)
                label = "%s@%s" % (alg, rb.size_label(v) if v else "0")
            out.append((label, alg, v, env))
    return out


# ---------------------------------------------------------------- measuring

def measure(args, rail, exes, plan, log):
    """Runs the plan, interleaved; returns {(op, np, label): {size: [us, ...]}} and the
    set of (op, np, label) whose algorithm fell back."""
    times, fallbacks, failures = {}, set(), []
    total = sum(len(v) for _, _, v in plan) * args.reps
    i, t0 = 0, time.monotonic()
    for rep in range(args.reps):
        for op, np, vars_ in plan:
            k = rep % len(vars_)
            for label, alg, _, env in vars_[k:] + vars_[:k]:
                i += 1
                if args.idle_wait:
                    rb.wait_idle(args.idle_wait)
                full = dict(rail.env, RAIL_COLL=args.components, RAIL_COLL_TUNED_VERBOSE="1")
                full.update(env)
                bench = rb.BENCH_BY_NAME[PROGRAMS[op]]
                argv = [exes[bench.name], "-t", str(args.trials), "-T", str(args.target_ms)]
                if op != "barrier":
                    argv += ["-s", "%d:%d" % args.size_range]
                cmd = rail.launch(np, "none", argv)
                status, out, err, secs = rb.run_cmd(cmd, full, args.timeout)
                log.write("=== %s %s\n%s%s\n" % (" ".join("%s=%s" % kv for kv in env.items()),
                                                 " ".join(cmd), out, err))
                results, _, _ = rb.parse_output(out)
                if "cannot serve this call" in err:
                    fallbacks.add((op, np, label))
                if status != "ok":
                    failures.append("%s np=%d %s: %s" % (op, np, label, status))
                for r in results:
                    times.setdefault((op, np, label), {}).setdefault(int(r["size"]), []).append(
                        float(r["median_us"]))
                eta = (time.monotonic() - t0) / i * (total - i)
                note("[%4d/%d eta %dm%02ds] %-14s np=%-2d %-26s %s %.1f s%s" % (
                    i, total, *divmod(int(eta), 60), op, np, label, status, secs,
                    "  (falls back)" if (op, np, label) in fallbacks else ""))
    return times, fallbacks, failures


# ---------------------------------------------------------------- deciding

def median_of(times, key, size):
    """The figure of a variant at a size: the best of the repetitions' medians
    (other work on the machine only ever makes a run slower)."""
    v = times.get(key, {}).get(size)
    return min(v) if v else None


def choose(times, fallbacks, op, np, vars_, sizes, tolerance):
    """[(size, label)] best forced variant at each size, with hysteresis."""
    labels = [v[0] for v in vars_ if v[1] is not None and (op, np, v[0]) not in fallbacks]
    picks, prev = [], None
    for s in sizes:
        cand = [(median_of(times, (op, np, l), s), l) for l in labels]
        cand = [(t, l) for t, l in cand if t is not None]
        if not cand:
            continue
        best_t, best_l = min(cand)
        prev_t = median_of(times, (op, np, prev), s) if prev else None
        if prev_t is not None and prev_t <= best_t * (1 + tolerance):
            best_l = prev
        picks.append((s, best_l))
        prev = best_l
    # an island (A B A) where A is nearly as good as B at B's size is noise
    for i in range(1, len(picks) - 1):
        a, b = picks[i - 1][1], picks[i][1]
        if a != b and picks[i + 1][1] == a:
            ta, tb = (median_of(times, (op, np, x), picks[i][0]) for x in (a, b))
            if ta is not None and tb is not None and ta <= tb * (1 + 2 * tolerance):
                picks[i] = (picks[i][0], a)
    return picks


def to_rules(op, np, picks, vars_):
    """Merge neighbouring sizes with the same choice into rules."""
    by_label = {v[0]: v for v in vars_}
    rules = []
    for i, (s, label) in enumerate(picks):
        if rules and rules[-1]["_label"] == label:
            continue
        if rules:
            rules[-1]["msg_size"][1] = s - 1
        _, alg, param, _ = by_label[label]
        rule = {"comm_size": [np, np], "msg_size": [0 if not rules else s, None],
                "algorithm": alg, "_label": label}
        if param is not None:
            rule["segment_size"] = param
        rules.append(rule)
    for r in rules:
        del r["_label"]
    return rules


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# ---------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="all",
                    help="comma-separated operations (default: all the tuned component has)")
    ap.add_argument("--np", default="2,4,8", help="rank counts (default 2,4,8)")
    ap.add_argument("--sizes", default="8:4M", help="MIN:MAX bytes, powers of two (default 8:4M)")
    ap.add_argument("--segsizes", default="16K,64K,256K",
                    help="segment sizes tried for segmented algorithms (default 16K,64K,256K)")
    ap.add_argument("--windows", default="0,4",
                    help="windows tried for windowed algorithms (default 0,4; 0 = all)")
    ap.add_argument("--reps", type=int, default=2, help="interleaved repetitions (default 2)")
    ap.add_argument("--trials", type=int, default=3, help="trials per size (default 3)")
    ap.add_argument("--target-ms", type=int, default=2, help="length of a trial (default 2)")
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="keep the previous size's algorithm when within this fraction of "
                         "the best (default 0.10)")
    ap.add_argument("--idle-wait", type=float, default=0, metavar="S",
                    help="on a shared machine: before each run wait up to S seconds for idle "
                         "cores (default 0: do not wait)")
    ap.add_argument("--components", default="tuned,basic,nbc",
                    help="RAIL_COLL for the runs, so that tuned serves the operations "
                         "(default tuned,basic,nbc)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    ap.add_argument("--rail-prefix", help="Rail MPI installed under PREFIX")
    ap.add_argument("--out", help="results folder (default bench-results/tune-<time>)")
    ap.add_argument("--rules", help="where to write the rules (default OUT/rules.json)")
    ap.add_argument("--quick", action="store_true",
                    help="small sweep: np 2,4, sizes 8:256K, 1 repetition")
    args = ap.parse_args()
    if args.quick:
        args.np, args.sizes, args.reps = "2,4", "8:256K", 1
    try:
        lo, hi = (rb.parse_size(x) for x in args.sizes.split(":"))
        args.size_range = (lo, hi)
        args.np_list = [int(x) for x in args.np.split(",")]
        args.segsize_list = [rb.parse_size(x) for x in args.segsizes.split(",") if x]
        args.window_list = [int(x) for x in args.windows.split(",") if x]
    except ValueError:
        sys.exit("coll_tune: bad --sizes, --np, --segsizes or --windows")
    return args


def sweep_sizes(lo, hi):
    s, out = lo, []
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out


def main():
    args = parse_args()
    rail, why = rb.find_rail(args)
    if not rail:
        note("coll_tune: " + why)
        return 2
    railinfo = railinfo_path(rail)
    if not railinfo:
        note("coll_tune: railinfo not found next to %s (set RAIL_RAILINFO)" % rail.mpicc)
        return 2
    ops_info = algorithms(railinfo)
    wanted = list(ops_info) if args.ops == "all" else args.ops.split(",")
    for op in wanted:
        if op not in ops_info:
            sys.exit("coll_tune: the tuned component has no operation %r (it has %s)" %
                     (op, ", ".join(ops_info)))
    measured = [op for op in wanted if op in PROGRAMS]
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or os.path.join(rb.TOP_DIR, "bench-results", "tune-" + stamp)
    os.makedirs(os.path.join(out, "build", rail.name), exist_ok=True)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    exes = {}
    with open(os.path.join(out, "logs", "build.log"), "w") as blog:
        for name in sorted({PROGRAMS[op] for op in measured}):
            _, exe, text = rb.build_one(rail, rb.BENCH_BY_NAME[name], os.path.join(out, "build"))
            blog.write(text)
            if not exe:
                note("coll_tune: building %s failed (see %s/logs/build.log)" % (name, out))
                return 1
            exes[name] = exe
    plan = [(op, np, variants(op, ops_info[op], args)) for op in measured for np in args.np_list]
    note("coll_tune: %d operations x %d rank counts, %d runs per repetition; results in %s" % (
        len(measured), len(args.np_list), sum(len(v) for _, _, v in plan), out))
    with open(os.path.join(out, "logs", "runs.log"), "w") as log:
        times, fallbacks, failures = measure(args, rail, exes, plan, log)
    with open(os.path.join(out, "times.json"), "w") as f:
        json.dump({"%s|%d|%s" % k: v for k, v in times.items()}, f, indent=0)

    rules, lines = {"_comment": "written by bench/coll_tune.py on %s, %s; %s" % (
        os.uname().nodename, stamp, " ".join(sys.argv[1:]) or "defaults")}, []
    lines.append("| op | np | rules/auto (geomean over sizes) | worst size | choices |")
    lines.append("|---|---|---|---|---|")
    overall = []
    sizes = sweep_sizes(*args.size_range)
    for op in measured:
        for np_, vars_ in [(np, v) for o, np, v in plan if o == op]:
            op_sizes = [0] if op == "barrier" else sizes
            picks = choose(times, fallbacks, op, np_, vars_, op_sizes, args.tolerance)
            ratios = []
            for s, label in picks:
                a, b = median_of(times, (op, np_, "auto"), s), median_of(times, (op, np_, label), s)
                ratios.append((b / a if a and b else None, s))
            g = geomean([r for r, _ in ratios])
            worst = max((r for r in ratios if r[0]), default=(None, None))
            overall += [r for r, _ in ratios if r]
            rules.setdefault(op, []).extend(to_rules(op, np_, picks, vars_))
            lines.append("| %s | %d | %s | %s | %s |" % (
                op, np_, "%.3f" % g if g else "-",
                "%.2f at %s" % (worst[0], rb.size_label(worst[1])) if worst[0] else "-",
                ", ".join("%s from %s" % (r["algorithm"] + (
                    "@%s" % rb.size_label(r["segment_size"]) if "segment_size" in r else ""),
                    rb.size_label(r["msg_size"][0])) for r in rules[op] if r["comm_size"][0] == np_)))
    for alias, src in ALIASES.items():
        if alias in wanted and src in rules:
            rules[alias] = [dict(r) for r in rules[src]]
    path = args.rules or os.path.join(out, "rules.json")
    with open(path, "w") as f:
        f.write(format_rules(rules))
    g = geomean(overall)
    summary = ["# coll_tune: %s" % stamp, "",
               "Rules: `%s`. A ratio below 1 means the rules are faster than the built-in "
               "decisions (measured in the same runs)." % path, ""] + lines + [
        "", "Overall geometric mean rules/auto: %s" % ("%.3f" % g if g else "-"), "",
        "Algorithms that fell back (restrictions): %s" % (
            ", ".join("%s np=%d %s" % k for k in sorted(fallbacks)) or "none"),
        "", "Failed runs: %s" % ("; ".join(failures) or "none")]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 1 if failures else 0


def format_rules(rules):
    """One rule per line: readable and diff-friendly."""
    parts = []
    for key, val in rules.items():
        if not isinstance(val, list):
            parts.append("  %s: %s" % (json.dumps(key), json.dumps(val)))
            continue
        body = ",\n".join("    " + json.dumps(r) for r in val)
        parts.append("  %s: [\n%s\n  ]" % (json.dumps(key), body))
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":
    sys.exit(main())
