#!/usr/bin/python3
"""Measure again, on this machine, a Rail MPI parameter whose default was
timed on one machine (RAIL_PARAM_F_MEASURED; "measured on one machine" in
docs/params.md and railinfo).

The parameter's help names the benchmark that measures it ("Measured on
one machine: bench bw at np 2").  tune_params.py builds that bench/
program with Rail MPI's mpicc, runs it under Rail's mpirun once per
candidate value (RAIL_<PARAM>=<value> in the environment), interleaving
the candidates and repeating them, and prints per message size the best
value and every candidate's time over the best's (1.00 = the best; the
default is marked *).  Candidates: --values, else the choices of a string
parameter, else the default divided and multiplied by 2 and 4.

    bench/tune_params.py --list
    bench/tune_params.py btl_sm_eager_limit --sizes 1K:64K
    bench/tune_params.py coll_tuned_allreduce_algorithm --np 4,8
    bench/tune_params.py btl_sm_fbox_size --check     (tiny sizes, one iteration)

Exit status: 0 done; 1 a run failed or the build failed; 2 bad usage, an
unknown or unmeasured parameter, or Rail MPI not found (77 with --check,
so that make check can skip).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench as rb  # noqa: E402  (the driver's build and run helpers)

# "Measured on one machine: bench NAME at np N[,N...]" in a parameter's help
BENCH_RE = re.compile(r"bench (\w+) at np ([\d,]+)")


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def railinfo_params(rail):
    exe = os.environ.get("RAIL_RAILINFO") or os.path.join(os.path.dirname(rail.mpicc), "railinfo")
    if not rb.is_exe(exe):
        exe = os.path.join(rb.TOP_DIR, "tools", "railinfo")
    out = subprocess.run([exe, "--all", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("tune_params: %s --all --json failed: %s" % (exe, out.stderr.strip()))
    return {p["name"]: p for p in json.loads(out.stdout)["parameters"]}


def candidates(p, given):
    """Values to try, as text; the default among them."""
    if given:
        vals = [v for v in given.split(",") if v]
    elif p["type"] == "string" and p.get("choices"):
        vals = p["choices"].split("|")
    elif p["type"] in ("size", "int") and p["default"].lstrip("-").isdigit():
        d = int(p["default"])
        vals = [str(v) for v in (d // 4, d // 2, d, d * 2, d * 4)] if d > 0 else ["0"]
    else:
        raise SystemExit("tune_params: give --values for %s (%s, default %r)" %
                         (p["name"], p["type"], p["default"]))
    if p["default"] not in vals:
        vals.append(p["default"])
    return list(dict.fromkeys(vals))


def measure(args, rail, exe, param, values, nps):
    """{(value, np, size): [us, ...]}; failures as text."""
    times, failures = {}, []
    env_name = "RAIL_" + param.upper()
    argv = [exe, "-s", "%d:%d" % args.size_range, "-t", str(args.trials), "-T",
            str(args.target_ms)] + (["-i", str(args.iters)] if args.iters else [])
    for rep in range(args.reps):
        for np in nps:
            k = rep % len(values)
            for v in values[k:] + values[:k]:   # each repetition starts elsewhere
                env = dict(rail.env, **{env_name: v})
                if param.startswith("coll_tuned_"):
                    env.setdefault("RAIL_COLL", "tuned,basic,nbc")
                status, out, err, secs = rb.run_cmd(rail.launch(np, "none", argv), env,
                                                    args.timeout)
                note("  rep %d np %d %s=%s: %s %.1f s" % (rep + 1, np, param, v, status, secs))
                if status != "ok":
                    failures.append("np %d %s=%s: %s %s" % (np, param, v, status,
                                                           (err or out).strip()[-300:]))
                for r in rb.parse_output(out)[0]:
                    times.setdefault((v, np, int(r["size"])), []).append(float(r["median_us"]))
    return times, failures


def report(param, default, values, nps, times):
    """Per np and size: the best value and each candidate's time over the best's."""
    lines = []
    for np in nps:
        sizes = sorted({s for (_, n, s) in times if n == np})
        head = ["size", "best", "us"] + [("*" if v == default else "") + v for v in values]
        lines += ["", "%s, np %d (time / best; * the default)" % (param, np),
                  "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for s in sizes:
            med = {v: statistics.median(times[(v, np, s)]) for v in values if (v, np, s) in times}
            if not med:
                continue
            best = min(med, key=med.get)
            cells = ["%.2f" % (med[v] / med[best]) if v in med and med[best] > 0 else "-"
                     for v in values]
            lines.append("| " + " | ".join([rb.size_label(s), best, "%.2f" % med[best]] + cells)
                         + " |")
    return lines


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("param", nargs="?", help="the parameter (railinfo name)")
    ap.add_argument("--list", action="store_true", help="list the measured parameters")
    ap.add_argument("--values", help="comma-separated candidate values")
    ap.add_argument("--np", help="rank counts (default: those in the parameter's help)")
    ap.add_argument("--sizes", default="1K:4M", help="MIN:MAX bytes (default 1K:4M)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (default 3)")
    ap.add_argument("--trials", type=int, default=5, help="trials per size (default 5)")
    ap.add_argument("--target-ms", type=int, default=5, help="length of a trial (default 5)")
    ap.add_argument("--iters", type=int, help="fixed iterations per trial (default: by time)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    ap.add_argument("--rail-prefix", help="Rail MPI installed under PREFIX")
    ap.add_argument("--out", help="build folder (default bench-results/tune-params)")
    ap.add_argument("--check", action="store_true",
                    help="smoke test: sizes 8:64, one repetition, trial and iteration, np 2")
    args = ap.parse_args(argv)
    if args.check:
        args.sizes, args.reps, args.trials, args.target_ms, args.iters = "8:64", 1, 1, 1, 1
        args.np = args.np or "2"
    try:
        args.size_range = tuple(rb.parse_size(x) for x in args.sizes.split(":"))
    except ValueError:
        ap.error("bad --sizes %r" % args.sizes)
    if not args.list and not args.param:
        ap.error("name a parameter, or --list")
    return args


def main(argv):
    args = parse_args(argv)
    unusable = 77 if args.check else 2
    rail, why = rb.find_rail(args)
    if not rail:
        note("tune_params: " + why)
        return unusable
    params = railinfo_params(rail)
    measured = {n: p for n, p in params.items() if p.get("use") == "measured"}
    if args.list:
        for n, p in sorted(measured.items()):
            m = BENCH_RE.search(p["help"])
            print("%-40s default %-10s %s" % (n, p["default"], "bench %s at np %s" % m.groups()
                                                if m else "(no bench named in its help)"))
        return 0
    p = measured.get(args.param)
    if not p:
        note("tune_params: %s is %s" % (args.param, "not measured (a principle sets it)"
                                        if args.param in params else "no parameter"))
        return 2
    m = BENCH_RE.search(p["help"])
    if not m or m.group(1) not in rb.BENCH_BY_NAME:
        note("tune_params: %s's help names no bench/ program (\"bench NAME at np N\")" % p["name"])
        return 2
    nps = [int(x) for x in (args.np or m.group(2)).split(",") if x]
    values = candidates(p, args.values)
    out = args.out or os.path.join(rb.TOP_DIR, "bench-results", "tune-params")
    os.makedirs(os.path.join(out, rail.name), exist_ok=True)
    _, exe, log = rb.build_one(rail, rb.BENCH_BY_NAME[m.group(1)], out)
    if not exe:
        note("tune_params: building %s failed:\n%s" % (m.group(1), log))
        return 1
    note("tune_params: %s with %s at np %s, values %s" % (
        p["name"], m.group(1), ",".join(map(str, nps)), ",".join(values)))
    times, failures = measure(args, rail, exe, p["name"], values, nps)
    for line in report(p["name"], p["default"], values, nps, times):
        print(line)
    for f in failures:
        note("tune_params: FAILED " + f)
    if not times:
        note("tune_params: no results")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
