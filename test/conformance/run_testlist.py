#!/usr/bin/env python3
"""Run directories of the MPICH test suite (test/mpi of MPICH's source)
under an mpirun and compare with a list of expected failures.

usage: run_testlist.py --suite DIR --mpirun MPIRUN [--expected FILE]
                       [--not-built FILE] [--only SUBSTRING] [--log FILE] SUBDIR...

Each SUBDIR's `testlist` names a test program, its process count and
options (arg=, env=, timeLimit=, resultTest=, xfail=, mpiversion=), the
format of MPICH's own runtests script.  A test passes, as there, when it
exits with 0 and prints a "No Errors" line; a test with resultTest=TestStatus
or TestErrFatal must end the job with a nonzero status (it checks that an
error or exit status reaches mpirun), TestStatusNoErrors both.  Tests marked
xfail= (known to fail in MPICH itself) are skipped, as MPICH's runtests
does by default; so are the programs the --not-built file names (they use
functions the MPI standard removed, or MPICH's extensions); any other
program missing is a failure.  A testlist line naming a directory is
followed into it.

The expected-failures file has one line per test: `subdir/name np  reason`
(np may be `*`; the not-built file has `-` there); a reason that begins
with "not run:" skips the test (one that would hang until its time limit).  Exit status: 0 when every test that ran either passed or
is expected to fail, 1 otherwise.  The last line reads
"N passed, N failed, N expected failures, N skipped".
"""
import argparse
import fcntl
import os
import re
import shlex
import subprocess
import sys
import time

NO_ERRORS = re.compile(r"^\s*No [Ee]rrors\s*$", re.M)


def read_expected(path):
    exp = {}
    if not path:
        return exp
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                sys.exit(f"{path}: '{line}': want 'subdir/name np reason'")
            exp[(parts[0], parts[1])] = parts[2]
    return exp


def parse_testlist(suite, sub):
    """(subdir, name, np, {key: [values]}) for each test of sub's testlist
    and of the subdirectories it names."""
    tests = []
    with open(os.path.join(suite, sub, "testlist")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            fields = line.split()
            if len(fields) == 1 and os.path.isfile(os.path.join(suite, sub, fields[0], "testlist")):
                tests += parse_testlist(suite, sub + "/" + fields[0])
            if len(fields) < 2 or not fields[1].isdigit():
                continue
            opts = {}
            for kv in fields[2:]:
                k, _, v = kv.partition("=")
                opts.setdefault(k, []).append(v)
            tests.append((sub, fields[0], int(fields[1]), opts))
    return tests


def run_one(exe, np, opts, mpirun, cwd, default_limit):
    args = []
    for a in opts.get("arg", []):
        args += shlex.split(a)
    env = dict(os.environ)
    for e in opts.get("env", []):
        k, _, v = e.partition("=")
        env[k] = v
    limit = int(opts.get("timeLimit", [default_limit])[0])
    # As MPICH's runtests: the launcher is told the limit too (tests such
    # as init/timeout check that it ends the job).
    env["MPIEXEC_TIMEOUT"] = str(limit)
    # one MPI job at a time under `make -j check` (test/run-test.sh);
    # taken before the clock and the time limit start
    lock = None
    if os.environ.get("RAILTEST_MPI_LOCK", "0") not in ("", "0"):
        try:
            lock = open(os.environ["RAILTEST_MPI_LOCK"], "a")
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:
            lock = None
    try:
        return run_locked(exe, np, args, opts, mpirun, cwd, env, limit)
    finally:
        if lock is not None:
            lock.close()


def run_locked(exe, np, args, opts, mpirun, cwd, env, limit):
    t0 = time.time()
    p = subprocess.Popen([mpirun, "-np", str(np), exe] + args, cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        data, _ = p.communicate(timeout=limit + 30)
        out, rc = data.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired:
        # mpirun did not end the job itself: SIGTERM first, which it
        # forwards to the ranks before cleaning up, then SIGKILL.
        p.terminate()
        try:
            data, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            data, _ = p.communicate()
        out = data.decode(errors="replace") + "\n(ended: no end after the time limit)"
        rc = None
    kind = opts.get("resultTest", ["default"])[0]
    if rc is None:
        ok = False
    elif kind in ("TestStatus", "TestErrFatal"):
        ok = rc != 0
    elif kind == "TestStatusNoErrors":
        ok = rc != 0 and bool(NO_ERRORS.search(out))
    else:
        ok = rc == 0 and bool(NO_ERRORS.search(out))
    return ok, rc, out, time.time() - t0


def skipped_why(label, np, opts, expected):
    """Why the test is skipped whatever the build holds, or None."""
    listed = expected.get((label, str(np))) or expected.get((label, "*")) or ""
    if "xfail" in opts:
        return "xfail in MPICH's testlist (" + ",".join(opts["xfail"]) + ")"
    if listed.startswith("not run:"):
        return listed
    return None


def print_programs(a, expected, not_built):
    """The programs to build, one line per directory: 'subdir name...'
    (a test's program is a make target of its directory)."""
    progs = {}
    for top in a.subdirs:
        for sub, name, np, opts in parse_testlist(a.suite, top):
            label = f"{sub}/{name}"
            if (a.only and a.only not in label) or label in not_built or \
                    skipped_why(label, np, opts, expected):
                continue
            names = progs.setdefault(sub, [])
            if name not in names:
                names.append(name)
    for sub, names in progs.items():
        print(sub, " ".join(names))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True, help="MPICH's test/mpi, configured and built")
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--expected")
    ap.add_argument("--not-built", help="programs that do not build, as 'subdir/name - reason'")
    ap.add_argument("--only")
    ap.add_argument("--log")
    # MPICH's runtests gives 180 s; pt2pt/sendflood (100000 rounds of 7
    # messages in and out at np 8), 4 s alone, took 28 s beside another 8
    # ranks on 2 cores and once over 120 s under make -j2 check
    ap.add_argument("--time-limit", default="180", help="seconds per test without timeLimit=")
    ap.add_argument("--programs", action="store_true",
                    help="print, per directory, the programs the run would need: "
                    "'subdir name...' (not those skipped by xfail=, 'not run:' or the "
                    "not-built list); run nothing")
    ap.add_argument("subdirs", nargs="+")
    a = ap.parse_args()

    expected = read_expected(a.expected)
    not_built = {k[0]: v for k, v in read_expected(a.not_built).items()}
    if a.programs:
        return print_programs(a, expected, not_built)
    seen = set()
    log = open(a.log, "w") if a.log else None
    npass = nfail = nxfail = nskip = 0
    unexpected = []
    for top in a.subdirs:
        for sub, name, np, opts in parse_testlist(a.suite, top):
            path = os.path.join(a.suite, sub)
            label = f"{sub}/{name}"
            if a.only and a.only not in label:
                continue
            exe = os.path.join(path, name)
            why = skipped_why(label, np, opts, expected)
            if why and "xfail" not in opts:   # 'not run:' in the expected failures
                seen.add((label, str(np)) if (label, str(np)) in expected else (label, "*"))
            elif why is None and not os.access(exe, os.X_OK):
                why = not_built.get(label)
                if not why:
                    nfail += 1
                    unexpected.append(label + " (not built)")
                    print(f"FAIL {label} {np}: not built (see the suite's build log)", flush=True)
                    continue
                why = "not built: " + why
            if why:
                nskip += 1
                print(f"SKIP {label} {np}: {why}", flush=True)
                continue
            ok, rc, out, dt = run_one(exe, np, opts, a.mpirun, path, a.time_limit)
            reason = expected.get((label, str(np))) or expected.get((label, "*"))
            if reason:
                seen.add((label, str(np)) if (label, str(np)) in expected else (label, "*"))
            head = f"{label} {np} {' '.join(f[0] + '=' + v for f in opts.items() for v in f[1])}"
            if ok and not reason:
                npass += 1
                status = "PASS"
            elif ok:
                npass += 1
                status = "PASS (listed as expected to fail: " + reason + ")"
            elif reason:
                nxfail += 1
                status = "XFAIL (" + reason + ")"
            else:
                nfail += 1
                status = "FAIL"
                unexpected.append(head)
            line = f"{status.split(' ')[0]} {head} rc={rc} {dt:.1f}s"
            if status.startswith("PASS ("):
                line += " " + status[5:]
            print(line, flush=True)
            if log:
                log.write(f"==== {status} {head} rc={rc} {dt:.1f}s\n{out}\n")
            if status == "FAIL":
                tail = out.strip().splitlines()[-20:]
                print("\n".join("    " + t for t in tail), flush=True)
    for (label, np), reason in sorted(expected.items()):
        if (label, np) not in seen and (not a.only or a.only in label) and \
                label.split("/")[0] in [t.split("/")[0] for t in a.subdirs]:
            print(f"note: {label} {np} is listed as expected to fail but did not run")
    if unexpected:
        print("failed: " + "; ".join(unexpected))
    print(f"{npass} passed, {nfail} failed, {nxfail} expected failures, {nskip} skipped")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
