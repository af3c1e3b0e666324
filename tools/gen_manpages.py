#!/usr/bin/env python3
"""Writes one man page (section 3) per MPI procedure of mpi/binding/mpi_api.spec.

Each page: the C synopsis (and the big-count MPI_Name_c form), a Fortran 2008
synopsis where the spec's types map onto the mpi_f08 ones, the parameters with
their direction and type, the error classes the procedure can raise (from the
argument checks the spec declares, plus the ones every procedure can raise),
and what in Rail MPI affects it.  MPI_Name_c gets a page that sources
MPI_Name's.

    gen_manpages.py --spec mpi/binding/mpi_api.spec --version X -o DIR
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi", "binding"))
import gen_bindings  # noqa: E402  (the spec's parser, one source of truth)

# The error class an argument check raises, by annotation, and by handle type.
ANN_ERRORS = {"nni": "MPI_ERR_COUNT", "nniarg": "MPI_ERR_ARG", "nonnull": "MPI_ERR_ARG",
              "committed": "MPI_ERR_TYPE", "buf": "MPI_ERR_BUFFER", "tag": "MPI_ERR_TAG",
              "len": "MPI_ERR_ARG"}
HANDLE_ERRORS = {"MPI_Comm": "MPI_ERR_COMM", "MPI_Datatype": "MPI_ERR_TYPE",
                 "MPI_Group": "MPI_ERR_GROUP", "MPI_Op": "MPI_ERR_OP", "MPI_Info": "MPI_ERR_INFO",
                 "MPI_Errhandler": "MPI_ERR_ARG", "MPI_Request": "MPI_ERR_REQUEST",
                 "MPI_Message": "MPI_ERR_REQUEST", "MPI_Win": "MPI_ERR_WIN",
                 "MPI_File": "MPI_ERR_FILE", "MPI_Session": "MPI_ERR_SESSION"}
ALWAYS_ERRORS = [("MPI_ERR_OTHER", "an error without a more specific class"),
                 ("MPI_ERR_UNSUPPORTED_OPERATION",
                  "the procedure is not implemented yet in this version (docs/status.md)")]

# What in Rail MPI affects a procedure, by chapter (railinfo --param NAME
# shows each parameter's value and help).
CHAPTER_NOTES = {
    "pt2pt": "Point-to-point messages go through the pml (pml_* parameters: eager and "
             "rendezvous limits) and a btl per peer (btl=self,sm,tcp,ofi,verbs; btl_sm_*, "
             "btl_tcp_*, btl_ofi_*).  Device buffers are accepted (accel_* parameters).",
    "coll": "The algorithm is chosen per call by the coll components (coll=...; coll_tuned_*, "
            "coll_sm_*, coll_han_* parameters; coll_check=1 checks that all processes agree "
            "on the arguments first).",
    "coll_nb": "Nonblocking collectives progress inside MPI calls (coll_* parameters choose "
               "the algorithm, as for the blocking forms).",
    "coll_persist": "Persistent collectives fix their algorithm at initialisation "
                    "(coll_* parameters).",
    "rma": "One-sided communication runs over the btls (btl_* parameters).",
    "io": "File access: see docs/status.md for what is implemented.",
    "comm": "Communicator creation exchanges information through the runtime (PMIx).",
    "datatype": "Datatypes are described by base/dt; packing of device buffers uses the "
                "accel component.",
    "env": "Parameters are read at initialisation: environment (RAIL_NAME), mpirun --param, "
           "~/.rail/params.conf and <prefix>/etc/rail-params.conf.",
    "tools": "The MPI tool information interface shows every registered parameter as a "
             "control variable and the pvar.h counters as performance variables.",
}

F08_HANDLES = {"MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Op", "MPI_Info", "MPI_Errhandler",
               "MPI_Request", "MPI_Message", "MPI_Win", "MPI_File", "MPI_Session"}
F08_INTEGERS = {"int": "INTEGER", "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)",
                "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
                "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)"}


def roff(text):
    """Escapes text for a roff line."""
    t = text.replace("\\", "\\e").replace("-", "\\-")
    return ("\\&" + t) if t.startswith((".", "'")) else t


def f08_type(proc, p, big):
    """The Fortran 2008 declaration of parameter p, or None where the spec's type
    has no derivable mpi_f08 form."""
    t = p.base(big)
    stars = p.stars(big)
    array = bool(p.array) or (stars == 1 and p.dir == "in" and t in F08_INTEGERS
                              and "const" in (p.big_type if big else p.std_type))
    intent = {"in": "IN", "out": "OUT", "inout": "INOUT"}[p.dir]
    if p.kind in ("ARGUMENT_COUNT", "ARGUMENT_LIST"):
        return ""
    if p.kind == "BUFFER":
        asyn = ", ASYNCHRONOUS" if any(q.kind == "REQUEST" and q.dir == "out"
                                       for q in proc.params) else ""
        inout = ", INTENT(IN)" if p.dir == "in" else ""
        return "TYPE(*), DIMENSION(..)%s%s :: %s" % (inout, asyn, p.name)
    if p.kind.startswith("LOGICAL"):
        base = "LOGICAL"
    elif t in F08_INTEGERS:
        base = F08_INTEGERS[t]
    elif t in F08_HANDLES:
        base = "TYPE(%s)" % t
    elif t == "MPI_Status":
        base = "TYPE(MPI_Status)"
    elif t == "char" and p.kind == "STRING":
        return "CHARACTER(LEN=*), INTENT(%s) :: %s" % (intent, p.name)
    else:
        return None
    dim = "(*)" if array else ""
    return "%s, INTENT(%s) :: %s%s" % (base, intent, p.name, dim)


def f08_synopsis(proc, big):
    if proc.ret != "int" or proc.mpit or proc.name.startswith(("MPI_T_",)) \
            or any(p.varargs for p in proc.params) or proc.name.endswith(("_c2f", "_f2c")) \
            or "f08" in proc.name.lower() or "f2c" in proc.name.lower():
        return None
    decls = []
    names = []
    for p in proc.params_of(big):
        d = f08_type(proc, p, big)
        if d is None:
            return None
        if d:
            decls.append(d)
            names.append(p.name)
    names.append("ierror")
    decls.append("INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
    head = "%s(%s)" % (proc.fname(big) if not big else proc.name, ", ".join(names))
    return ["USE mpi_f08", "", head] + ["    " + d for d in decls]


def errors_of(proc):
    errs = {}
    for p in proc.params:
        for a, v in p.ann.items():
            if a == "rank":
                errs["MPI_ERR_ROOT" if v == "root" else "MPI_ERR_RANK"] = p.name
            elif a in ANN_ERRORS:
                errs.setdefault(ANN_ERRORS[a], p.name)
        if p.is_obj and p.std_type in HANDLE_ERRORS:
            errs.setdefault(HANDLE_ERRORS[p.std_type], p.name)
    return errs


def page(proc, version):
    out = ['.\\" ' + gen_bindings.GEN_NOTE.replace("gen_bindings.py", "gen_manpages.py"),
           '.TH %s 3 "" "Rail MPI %s" "MPI"' % (proc.name, version), ".SH NAME"]
    names = proc.name + (", " + proc.name + "_c" if proc.big else "")
    out.append("%s \\- the MPI-4.1 procedure %s" % (roff(names), roff(proc.name)))
    out += [".SH SYNOPSIS", ".SS C", ".nf", "#include <mpi.h>", ""]
    for big in proc.variants():
        ps = proc.params_of(big)
        args = ", ".join(p.decl_of(proc.impl_is_big(big) and big) for p in ps) or "void"
        out.append(roff("%s %s(%s);" % (proc.ret, proc.fname(big), args)))
    out.append(".fi")
    f08 = [f08_synopsis(proc, big) for big in proc.variants()]
    out.append(".SS Fortran 2008")
    if f08[0]:
        out.append(".nf")
        for i, syn in enumerate(s for s in f08 if s):
            if i:
                out.append("")
                syn = syn[2:]
            out += [roff(x) for x in syn]
        out.append(".fi")
    else:
        out.append("No mpi_f08 form is derived from the API spec for this procedure "
                   "(callbacks, tool-interface handles or a non-integer result).")
    out += param_section(proc)
    out += error_section(proc)
    out += [".SH RAIL MPI", roff(CHAPTER_NOTES.get(proc.chapter, "")),
            "Parameters: \\fBrailinfo \\-\\-all\\fR; each is set as RAIL_NAME in the "
            "environment or with \\fBmpirun \\-\\-param\\fR.",
            ".SH SEE ALSO", "\\fBmpicc\\fR(1), \\fBmpirun\\fR(1), \\fBrailinfo\\fR(1)", ""]
    return "\n".join(out)


def param_section(proc):
    out = [".SH PARAMETERS"]
    if not proc.params:
        return out + ["None."]
    for p in proc.params:
        kind = p.kind.lower().replace("_nni", " (non-negative)").replace("poly", "").replace("_", " ")
        t = p.std_type + (" (" + p.big_type + " in the _c form)" if p.dual else "")
        out += [".TP", "\\fI%s\\fR (%s)" % (roff(p.name), p.dir),
                roff("%s%s; %s." % (t, p.array, kind))]
        if "bigonly" in p.ann:
            out.append("Only in the _c form.")
        if "null" in p.ann:
            out.append(roff("The null handle is accepted."))
        if "inplace" in p.ann:
            out.append(roff("MPI_IN_PLACE is accepted%s." %
                            (" at the root" if p.ann["inplace"] == "root" else "")))
    return out


def error_section(proc):
    out = [".SH ERRORS",
           "Errors go through the error handler of %s; with MPI_ERRORS_RETURN the "
           "procedure returns the error code.  Classes this procedure raises:" %
           roff(proc.flags.get("errh", "the communicator, window, file or session involved"))]
    if proc.ret != "int":
        return [".SH ERRORS", "This procedure returns no error code."]
    for cls, pname in sorted(errors_of(proc).items()):
        out += [".TP", "\\fB%s\\fR" % roff(cls), "invalid \\fI%s\\fR." % roff(pname)]
    for cls, why in ALWAYS_ERRORS:
        out += [".TP", "\\fB%s\\fR" % roff(cls), roff(why) + "."]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("-o", "--outdir", required=True)
    a = ap.parse_args(argv)
    spec = gen_bindings.parse_spec(a.spec)
    os.makedirs(a.outdir, exist_ok=True)
    for proc in spec.procs:
        with open(os.path.join(a.outdir, proc.name + ".3"), "w") as f:
            f.write(page(proc, a.version))
        if proc.big:
            with open(os.path.join(a.outdir, proc.name + "_c.3"), "w") as f:
                f.write(".so man3/%s.3\n" % proc.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
