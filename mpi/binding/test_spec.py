#!/usr/bin/env python3
"""Checks of the API spec and of what gen_bindings.py makes from it.

    test_spec.py [--json mpi-4.0-apis.json] [--keep DIR]

1. Every C procedure of the MPI Forum's JSON (if given, or found at
   $MPI_FORUM_JSON or /work/shared/data/mpi-4.0-apis.json) is in the spec,
   with the same parameters.
2. The generated mpi.h has an MPI_ and a PMPI_ prototype for every procedure
   (and its _c form) and compiles as C99 and as C++ with -Wall -Wextra -pedantic.
   Every big-count (_c) procedure of MPI-4.1 (the JSON's and the MPI-4.1
   additions) is in the spec, and in the built mpi.h and libmpi.so.
3. The generated entry points compile with -std=c11 -Wall -Wextra -Werror
   -fvisibility=hidden, both with no implementation at all and with a few
   throwaway implementations, and link into a shared library that exports
   only MPI_* / PMPI_* / MPIX_* symbols.
4. A small program calls the entry points and checks the argument checks,
   the errhandler routing, the int -> big-count conversions and narrowing.

Needs python3, cc (or $CC) and c++ (or $CXX).  Exit status 0 on success,
77 (skipped) when no C compiler is found.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True    # leave no __pycache__ in the source tree
sys.path.insert(0, HERE)
import gen_bindings  # noqa: E402

CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "c++")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    return p.returncode, p.stdout


# ----------------------------------------------------------------- stubs of the lead's API

STUBS = r'''
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/rail.h"
#include "mpi/mpi_err.h"
#include "obj/comm.h"
#include "obj/datatype.h"

obj_t *obj_predef_table[OBJ_PREDEF_MAX];
volatile int mpi_api_ready = 1;
static char detail[512], last[640];
static int raised_on;   /* 0 default, 1 comm, 2 win, 3 file, 4 session */

int obj_errf(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return code;
}
static int raise_(int on, int code, const char *fname)
{
    raised_on = on;
    snprintf(last, sizeof last, "%s: %s", fname, detail);
    detail[0] = 0;
    return code;
}
int mpi_err_raise_comm(obj_comm_t *c, int code, const char *f) { return raise_(c ? 1 : 0, code, f); }
int mpi_err_raise_win(obj_win_t *w, int code, const char *f) { return raise_(w ? 2 : 0, code, f); }
int mpi_err_raise_file(obj_file_t *x, int code, const char *f) { return raise_(x ? 3 : 0, code, f); }
int mpi_err_raise_session(obj_session_t *s, int code, const char *f) { return raise_(s ? 4 : 0, code, f); }
int mpi_err_raise_default(int code, const char *f) { return raise_(0, code, f); }
int mpi_err_unsupported(const char *f) { return obj_errf(MPI_ERR_UNSUPPORTED_OPERATION, "%s is not implemented", f); }
int mpi_err_not_ready(const char *f) { fprintf(stderr, "%s: MPI is not initialized\n", f); return MPI_ERR_OTHER; }
obj_comm_t *mpi_message_comm_of(const MPI_Message *m) { (void)m; return NULL; }
void mpi_coll_check_abandon(obj_comm_t *c, const char *name, int rc) { (void)c; (void)name; (void)rc; }
int obj_lookup_error(obj_kind_t kind, const void *h, int allow_null)
{
    (void)allow_null;
    switch (kind) {
    case OBJ_COMM: return obj_errf(MPI_ERR_COMM, "invalid communicator %p", h);
    case OBJ_DATATYPE: return obj_errf(MPI_ERR_TYPE, "invalid datatype %p", h);
    default: return obj_errf(MPI_ERR_ARG, "invalid handle %p", h);
    }
}

/* test hooks */
static struct MPI_ABI_Comm world, inter;
static struct MPI_ABI_Datatype dt_int, dt_vec;
RAIL_EXPORT const char *MPIX_Test_last(int *on) { *on = raised_on; return last; }
RAIL_EXPORT void MPIX_Test_setup(int ready)
{
    mpi_api_ready = ready;
    world.obj.kind = OBJ_COMM; world.size = world.remote_size = 4; world.rank = 1;
    obj_predef_table[(uintptr_t)MPI_COMM_WORLD] = &world.obj;
    inter.obj.kind = OBJ_COMM; inter.size = 2; inter.remote_size = 3; inter.is_inter = 1;
    obj_predef_table[(uintptr_t)MPI_COMM_SELF] = &inter.obj;   /* an intercomm, for tests */
    dt_int.obj.kind = OBJ_DATATYPE; dt_int.committed = 1; dt_int.predefined = 1;
    obj_predef_table[(uintptr_t)MPI_INT] = &dt_int.obj;
    dt_vec.obj.kind = OBJ_DATATYPE; dt_vec.committed = 0;
    obj_predef_table[(uintptr_t)MPI_BYTE] = &dt_vec.obj;        /* an uncommitted type */
}
'''

IMPLS = r'''
#include <stdarg.h>
#include <string.h>
#include "base/rail.h"
#include "obj/comm.h"
#include "mpi/binding/gen/mpi_impl.h"

static long long rec[16];
RAIL_EXPORT long long MPIX_Test_rec(int i) { return rec[i]; }

int mpii_send(const void *buf, MPI_Count count, obj_datatype_t *datatype, int dest, int tag,
              obj_comm_t *comm)
{
    (void)buf; (void)datatype;
    rec[0] = count; rec[1] = dest; rec[2] = tag; rec[3] = comm->size;
    return MPI_SUCCESS;
}

int mpii_get_count(const MPI_Status *status, obj_datatype_t *datatype, MPI_Count *count)
{
    (void)datatype;
    *count = status->MPI_TAG ? (MPI_Count)1 << 40 : 42;
    return MPI_SUCCESS;
}

int mpii_gatherv(const void *sendbuf, MPI_Count sendcount, obj_datatype_t *sendtype, void *recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[], obj_datatype_t *recvtype,
                 int root, obj_comm_t *comm)
{
    (void)sendbuf; (void)sendcount; (void)recvbuf; (void)root; (void)comm;
    rec[4] = recvcounts ? recvcounts[3] : -1;
    rec[5] = displs ? displs[3] : -1;
    rec[6] = sendtype != NULL;
    rec[7] = recvtype != NULL;
    return MPI_SUCCESS;
}

int mpii_comm_rank(obj_comm_t *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_ERR_INTERN;    /* to see the implementation's error raised */
}

double mpii_wtime(void) { return 1.5; }

int mpii_pcontrol(const int level, ...)
{
    rec[8] = level;
    return MPI_SUCCESS;
}
'''

MAIN = r'''
#include <stdio.h>
#include <string.h>
#include <mpi.h>

const char *MPIX_Test_last(int *on);
void MPIX_Test_setup(int ready);
long long MPIX_Test_rec(int i);
static int bad;

static void expect(int line, int rc, int want, const char *msg, int on)
{
    int got_on;
    const char *last = MPIX_Test_last(&got_on);
    if (rc != want || (msg && (strstr(last, msg) == NULL || got_on != on))) {
        printf("line %d: rc %d (want %d), last error \"%s\" on %d (want \"%s\" on %d)\n",
               line, rc, want, last, got_on, msg ? msg : "", on);
        bad++;
    }
}
#define EXPECT(rc, want, msg, on) expect(__LINE__, rc, want, msg, on)
#define REC(i, v) do { if (MPIX_Test_rec(i) != (v)) { printf("line %d: rec[%d] = %lld, want %lld\n", \
    __LINE__, i, MPIX_Test_rec(i), (long long)(v)); bad++; } } while (0)

int main(void)
{
    int buf[8] = {0}, counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6}, n = 0, rank = -1;
    MPI_Status st;
    MPIX_Test_setup(1);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 7, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
           "MPI_Send: invalid rank 7 (communicator of size 4)", 1);
    EXPECT(MPI_Send(buf, -1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "count -1", 1);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 1, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "invalid tag -5", 1);
    EXPECT(MPI_Send(buf, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "not committed", 1);
    EXPECT(MPI_Send(NULL, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "'buf' is NULL", 1);
    EXPECT(MPI_Send(MPI_IN_PLACE, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_IN_PLACE", 1);
    EXPECT(MPI_Send(buf, 1, MPI_FLOAT, 1, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "invalid datatype", 1);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_NULL), MPI_ERR_COMM, "invalid communicator", 0);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 3, 0, MPI_COMM_SELF), MPI_ERR_RANK, "invalid rank 3 (remote group of size 3)", 1);
    EXPECT(MPI_Send(buf, 3, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD), MPI_SUCCESS, NULL, 0);
    REC(0, 3); REC(1, MPI_PROC_NULL); REC(2, 9); REC(3, 4);
    EXPECT(MPI_Send_c(buf, (MPI_Count)1 << 33, MPI_INT, 0, 1, MPI_COMM_WORLD), MPI_SUCCESS, NULL, 0);
    REC(0, (MPI_Count)1 << 33);
    EXPECT(PMPI_Send(buf, 2, MPI_INT, 0, 1, MPI_COMM_WORLD), MPI_SUCCESS, NULL, 0);
    REC(0, 2);
    /* not implemented: the checks still run, then MPI_ERR_UNSUPPORTED_OPERATION */
    EXPECT(MPI_Recv(buf, 1, MPI_INT, 9, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "invalid rank 9", 1);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
           MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Recv: MPI_Recv is not implemented", 1);
    /* narrowing of outputs of the int binding */
    st.MPI_TAG = 0;
    EXPECT(MPI_Get_count(&st, MPI_INT, &n), MPI_SUCCESS, NULL, 0);
    if (n != 42) { printf("Get_count: %d\n", n); bad++; }
    st.MPI_TAG = 1;
    EXPECT(MPI_Get_count(&st, MPI_INT, &n), MPI_SUCCESS, NULL, 0);
    if (n != MPI_UNDEFINED) { printf("Get_count (large): %d\n", n); bad++; }
    EXPECT(MPI_Get_count(&st, MPI_INT, NULL), MPI_ERR_ARG, "'count' must not be NULL", 0);
    /* arrays converted to the big-count types; root-only arguments */
    EXPECT(MPI_Gatherv(buf, 1, MPI_INT, buf, counts, displs, MPI_INT, 1, MPI_COMM_WORLD),
           MPI_SUCCESS, NULL, 0);
    REC(4, 4); REC(5, 6); REC(6, 1); REC(7, 1);
    EXPECT(MPI_Gatherv(buf, 1, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD),
           MPI_SUCCESS, NULL, 0);
    REC(4, -1); REC(7, 0);
    EXPECT(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, 1,
                       MPI_COMM_WORLD), MPI_SUCCESS, NULL, 0);
    REC(6, 0);
    EXPECT(MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
           MPI_ERR_BUFFER, "only allowed at the root", 1);
    counts[2] = -1;
    EXPECT(MPI_Gatherv(buf, 1, MPI_INT, buf, counts, displs, MPI_INT, 1, MPI_COMM_WORLD),
           MPI_ERR_COUNT, "recvcounts[2]", 1);
    EXPECT(MPI_Gatherv(buf, 1, MPI_INT, buf, counts, displs, MPI_INT, 4, MPI_COMM_WORLD),
           MPI_ERR_ROOT, "invalid root 4 (communicator of size 4)", 1);
    EXPECT(MPI_Gatherv(NULL, 1, MPI_FLOAT, NULL, NULL, NULL, MPI_FLOAT, MPI_PROC_NULL, MPI_COMM_SELF),
           MPI_SUCCESS, NULL, 0);
    /* the implementation's error goes through the errhandler */
    EXPECT(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_ERR_INTERN, "MPI_Comm_rank", 1);
    if (rank != 1) { printf("Comm_rank: %d\n", rank); bad++; }
    EXPECT(MPI_Comm_free(NULL), MPI_ERR_ARG, "'comm' must not be NULL", 0);
    if (MPI_Wtime() != 1.5) { printf("Wtime\n"); bad++; }
    EXPECT(MPI_Pcontrol(2, 40), MPI_SUCCESS, NULL, 0);
    REC(8, 2);
    EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, &n), MPI_T_ERR_NOT_SUPPORTED, NULL, 0);
    if (MPI_Comm_c2f(MPI_COMM_WORLD) != 0) { printf("Comm_c2f\n"); bad++; }
    printf("%s\n", bad ? "FAILED" : "all entry-point checks passed");
    return bad != 0;
}
'''


# ----------------------------------------------------------------- the checks

def check_json(spec, path):
    with open(path) as f:
        api = json.load(f)
    procs = {p.name: p for p in spec.procs}
    n = 0
    for v in api.values():
        a = v["attributes"]
        if not a["c_expressible"] or a["callback"] or a["predefined_function"] \
                or v["name"] in ("MPI_F_sync_reg", "MPI_Sizeof"):
            continue
        n += 1
        p = procs.get(v["name"])
        if p is None:
            fail("%s (in the MPI Forum JSON) is missing from the spec" % v["name"])
            continue
        want = [x["name"] for x in v["parameters"] if "c_parameter" not in x["suppress"]]
        got = [x.name for x in p.params]
        if want != got:
            fail("%s: parameters %s, JSON has %s" % (p.name, got, want))
    print("spec covers the %d C procedures of the MPI Forum JSON" % n)


# Big-count procedures of MPI-4.1 that the Forum's MPI-4.0 JSON does not mark:
# MPI_Status_set_elements_c is in MPI-4.0, but the JSON gives its count the
# kind XFER_NUM_ELEM_SMALL; the buffer procedures are new in MPI-4.1.
BIG_NOT_IN_JSON = {"MPI_Status_set_elements", "MPI_Comm_attach_buffer", "MPI_Comm_detach_buffer",
                   "MPI_Session_attach_buffer", "MPI_Session_detach_buffer"}


def bigcount_names(path):
    """Every procedure of MPI-4.1 with a _c form: the JSON's, plus the above."""
    with open(path) as f:
        api = json.load(f)
    names = set(BIG_NOT_IN_JSON)
    for v in api.values():
        a = v["attributes"]
        if a["c_expressible"] and not a["callback"] and not a["predefined_function"] \
                and any(p["kind"].startswith("POLY") for p in v["parameters"]):
            names.add(v["name"])
    return names


def check_bigcount(spec, path, build):
    """The _c procedures of MPI-4.1 are those of the spec, of mpi.h and of libmpi."""
    want = bigcount_names(path)
    have = {p.name for p in spec.procs if p.big}
    for n in sorted(want - have):
        fail("%s_c (MPI-4.1) is not in the spec" % n)
    for n in sorted(have - want):
        fail("%s_c is in the spec but not in MPI-4.1" % n)
    header = os.path.join(build, "include", "mpi.h")
    lib = os.path.join(build, ".libs", "libmpi.so")
    if not (os.path.exists(header) and os.path.exists(lib)):
        print("skip: big-count check of the built mpi.h and libmpi (%s not built)" % build)
        return
    with open(header) as f:
        text = f.read()
    rc, out = run(["nm", "-D", "--defined-only", lib])
    syms = {line.split()[-1] for line in out.splitlines() if line.strip()} if rc == 0 else set()
    for n in sorted(want):
        for name in (n + "_c", "P" + n + "_c"):
            if not re.search(r"^\w+\s+%s\(" % name, text, re.M):
                fail("%s is not declared in the built mpi.h" % name)
            if rc == 0 and name not in syms:
                fail("%s is not exported by the built libmpi" % name)
    print("%d big-count procedures of MPI-4.1 checked in the spec, mpi.h and libmpi" % len(want))


def check_header(spec, build, tmp):
    with open(os.path.join(build, "include", "mpi.h")) as f:
        text = f.read()
    n = 0
    for proc in spec.procs:
        for big in proc.variants():
            for prefix in ("MPI_", "PMPI_"):
                name = prefix + proc.fname(big)[4:]
                if not re.search(r"^%s\s+%s\(" % (re.escape(proc.ret), name), text, re.M):
                    fail("no prototype of %s in mpi.h" % name)
                n += 1
    print("mpi.h declares %d functions (%d procedures, MPI_ and PMPI_)" % (n, len(spec.procs)))
    src = os.path.join(tmp, "use_mpi.c")
    with open(src, "w") as f:
        f.write("#include <mpi.h>\nint main(void) { MPI_Comm c = MPI_COMM_WORLD; (void)c; "
                "return MPI_SUCCESS; }\n")
    inc = "-I" + os.path.join(build, "include")
    for cmd in ([CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, "-c", src,
                 "-o", os.path.join(tmp, "c99.o")],
                [CC, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, "-c", src,
                 "-o", os.path.join(tmp, "c11.o")],
                [CXX, "-x", "c++", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, "-c", src,
                 "-o", os.path.join(tmp, "cxx.o")]):
        if shutil.which(cmd[0]) is None:
            print("skip: %s not found" % cmd[0])
            continue
        rc, out = run(cmd)
        if rc:
            fail("mpi.h does not compile: %s\n%s" % (" ".join(cmd), out))
    print("mpi.h compiles as C99, C11 and C++")


def compile_objs(build, tmp, tag, extra_sources=()):
    gen = os.path.join(build, "mpi", "binding", "gen")
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden", "-fPIC", "-O1",
             "-I" + os.path.join(build, "include"), "-I" + TOP, "-I" + build]
    jobs = []
    for name in sorted(os.listdir(gen)) + list(extra_sources):
        if not name.endswith(".c"):
            continue
        src = name if os.path.isabs(name) else os.path.join(gen, name)
        obj = os.path.join(tmp, "%s_%s.o" % (tag, os.path.basename(name)[:-2]))
        jobs.append((src, obj))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        results = pool.map(lambda j: run([CC] + flags + ["-c", j[0], "-o", j[1]]), jobs)
        for (src, obj), (rc, out) in zip(jobs, results):
            if rc:
                fail("%s does not compile (%s):\n%s" % (src, tag, out[:4000]))
    return [obj for src, obj in jobs]


def compile_lib(build, tmp, extra_sources, tag):
    objs = compile_objs(build, tmp, tag, extra_sources)
    lib = os.path.join(tmp, "libmpi_%s.so" % tag)
    rc, out = run([CC, "-shared", "-o", lib] + objs)
    if rc:
        fail("cannot link %s:\n%s" % (lib, out[:4000]))
        return None
    return lib


def check_exports(lib):
    rc, out = run(["nm", "-D", "--defined-only", lib])
    if rc:
        print("skip: nm failed")
        return
    bad = []
    n = 0
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        sym = f[2]
        if sym.startswith(("MPI_", "PMPI_", "MPIX_")):
            n += 1
        elif sym not in ("_init", "_fini") and not sym.startswith("__"):
            bad.append(sym)
    if bad:
        fail("symbols exported besides MPI_/PMPI_/MPIX_: %s" % ", ".join(bad[:20]))
    print("%s exports %d MPI_/PMPI_/MPIX_ symbols and nothing else" % (os.path.basename(lib), n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.environ.get("MPI_FORUM_JSON",
                                                     "/work/shared/data/mpi-4.0-apis.json"))
    ap.add_argument("--keep", help="work in this folder and keep it")
    args = ap.parse_args()
    if shutil.which(CC) is None:
        print("skip: no C compiler (%s)" % CC)
        return 77
    tmp = args.keep or tempfile.mkdtemp(prefix="rail_binding_test_")
    os.makedirs(tmp, exist_ok=True)
    try:
        spec_path = os.path.join(HERE, "mpi_api.spec")
        spec = gen_bindings.parse_spec(spec_path)
        if os.path.exists(args.json):
            check_json(spec, args.json)
            check_bigcount(spec, args.json, os.environ.get("top_builddir", TOP))
        else:
            print("skip: JSON cross-check (%s not found)" % args.json)
        # 1. nothing implemented
        b0 = os.path.join(tmp, "build0")
        if gen_bindings.main(["--spec", spec_path, "--outdir", b0]):
            fail("gen_bindings.py failed")
            return 1
        open(os.path.join(b0, "config.h"), "w").close()
        check_header(spec, b0, tmp)
        stubs = os.path.join(tmp, "stubs.c")
        with open(stubs, "w") as f:
            f.write(STUBS)
        lib0 = compile_lib(b0, tmp, [stubs], "none")
        if lib0:
            check_exports(lib0)
        # 2. everything "implemented" (compile only): all conversions and narrowings
        b2 = os.path.join(tmp, "build2")
        every = os.path.join(tmp, "every_impl.c")
        with open(every, "w") as f:
            for name, ret, params, proc, big in gen_bindings.impl_functions(spec):
                f.write("%s %s(%s)\n" % (ret, name, params))
        if gen_bindings.main(["--spec", spec_path, "--outdir", b2, every]):
            fail("gen_bindings.py failed with all implementations")
            return 1
        open(os.path.join(b2, "config.h"), "w").close()
        compile_objs(b2, tmp, "all")
        # 3. a few implementations
        b1 = os.path.join(tmp, "build1")
        impls = os.path.join(tmp, "impls.c")
        with open(impls, "w") as f:
            f.write(IMPLS)
        if gen_bindings.main(["--spec", spec_path, "--outdir", b1, impls]):
            fail("gen_bindings.py failed with implementations")
            return 1
        open(os.path.join(b1, "config.h"), "w").close()
        lib1 = compile_lib(b1, tmp, [stubs, impls], "some")
        with open(os.path.join(b1, "mpi", "binding", "gen", "mpi_api_status.c")) as f:
            status = f.read()
        if '"MPI_Send",' not in status.split("mpi_api_unimplemented")[0]:
            fail("MPI_Send not listed as implemented")
        if lib1:
            check_exports(lib1)
            main_c = os.path.join(tmp, "main.c")
            with open(main_c, "w") as f:
                f.write(MAIN)
            exe = os.path.join(tmp, "entry_test")
            rc, out = run([CC, "-std=c99", "-Wall", "-I" + os.path.join(b1, "include"), main_c,
                           "-o", exe, lib1, "-Wl,-rpath," + tmp])
            if rc:
                fail("test program does not build:\n" + out)
            else:
                rc, out = run([exe])
                print(out.strip())
                if rc:
                    fail("entry-point behaviour")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures) if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
