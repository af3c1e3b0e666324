#!/usr/bin/env python3
"""Generate the Fortran bindings of Rail MPI from mpi/binding/mpi_api.spec.

Writes (under --outdir): include/mpif.h, fortran/gen/mpi.f90 (module mpi),
fortran/gen/mpi_f08.f90 (module mpi_f08), fortran/gen/fort_f77.c (the
mpi_xxx_ glue for mpif.h and `use mpi`), fortran/gen/fort_f08.c (the
mpi_xxx_f08 glue for `use mpi_f08`) and fortran/gen/fort_bound.txt (which
procedures each binding has, and why the others are missing).
Standard library only; see fortran/README.md.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True    # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mpi", "binding"))
sys.path.insert(0, HERE)

import gen_bindings as gb  # noqa: E402
import fort_model as fm  # noqa: E402
import fort_text as ft  # noqa: E402

# Bound by hand in fortran/fort_callback.c and fort_text.py.
HANDWRITTEN = {"MPI_Op_create", "MPI_Comm_create_errhandler", "MPI_Comm_create_keyval"}
# C-only procedures (conversions between C and Fortran).
C_ONLY_SUFFIX = ("_c2f", "_f2c", "_c2f08", "_f082c")


class Binding:
    """One procedure variant (standard or _c) bound in one Fortran binding."""

    def __init__(self, proc, big, f08):
        self.proc, self.big, self.f08 = proc, big, f08
        maker = fm.ArgMaker(proc, big)
        self.args = [maker.make(p, f08) for p in maker.params]
        for a in self.args:
            if getattr(a, "count_of", None):
                cnt, dt, buf = a.count_of
                for o in self.args:
                    if o.name == cnt:
                        o.arg = "b_%s.count" % buf if big else "(int)b_%s.count" % buf
                    elif o.name == dt:
                        o.arg = "b_%s.type" % buf
        self.fargs = [a for a in self.args if a.fname]
        self.ret = proc.ret

    @property
    def cname(self):
        return self.proc.fname(self.big)

    def symbol(self):
        low = self.cname.lower()
        return low + "_f08" if self.f08 else low + "_"

    def fortran_args(self):
        names = [a.fname for a in self.fargs]
        return names + ([] if self.ret != "int" else ["ierror"])

    def decls(self):
        out = []
        for a in self.fargs:
            out += a.f08 if self.f08 else a.f77
        if self.ret == "int":
            out.append("INTEGER, OPTIONAL, INTENT(OUT) :: ierror" if self.f08
                       else "INTEGER, INTENT(OUT) :: ierror")
        return out

    def c_function(self):
        params = [c for a in self.args for c in a.cparams]
        hidden = [h for a in self.args for h in a.hidden]
        call_args = ", ".join(a.arg for a in self.args if a.arg is not None)
        if self.ret != "int":
            rt = {"double": "double", "MPI_Aint": "MPI_Aint"}[self.ret]
            return ["%s %s(%s)" % (rt, self.symbol(), ", ".join(params) or "void"), "{",
                    "    return P%s(%s);" % (self.cname, call_args), "}", ""]
        params.append("MPI_Fint *ierror")
        out = ["void %s(%s)" % (self.symbol(), ", ".join(params + hidden)), "{",
               "    int rc = MPI_SUCCESS;"]
        out += ["    " + s for a in self.args for s in a.pre]
        if any(a.pre for a in self.args):
            out += ["    if (rc != MPI_SUCCESS)", "        rc = fort_raise(rc);",
                    "    else"]
        else:
            out.append("    if (rc == MPI_SUCCESS)")
        out.append("        rc = P%s(%s);" % (self.cname, call_args))
        out += ["    " + s for a in self.args for s in a.post]
        out.append("    if (ierror)" if self.f08 else "    if (ierror)")
        out.append("        *ierror = rc;")
        out += ["}", ""]
        return out

    def interface(self):
        kw = "SUBROUTINE" if self.ret == "int" else "FUNCTION"
        head = "%s %s(%s)" % (kw, self.symbol().rstrip("_") if not self.f08 else self.symbol(),
                              ", ".join(self.fortran_args()))
        if not self.f08:
            head = "%s %s(%s)" % (kw, self.cname, ", ".join(self.fortran_args()))
        if self.f08:
            head += ' BIND(C, name="%s")' % self.symbol()
        if self.ret != "int":
            head += " RESULT(res)"
        out = ft.wrap(head) + ["  IMPORT"]
        out += ["  " + d for d in self.decls()]
        if self.ret == "double":
            out.append("  DOUBLE PRECISION :: res")
        elif self.ret == "MPI_Aint":
            out.append("  INTEGER(KIND=MPI_ADDRESS_KIND) :: res")
        out.append("END " + kw)
        return out

    def signature(self):
        """Types by position, for telling apart a generic's specifics."""
        sig = []
        for d in self.decls():
            if "TYPE(*)" in d:
                sig.append("*")
            else:
                t = d.split("::")[0].replace("INTENT(IN)", "").replace("INTENT(OUT)", "")
                t = t.replace("INTENT(INOUT)", "").replace("KIND=MPI_ADDRESS_KIND", "8")
                t = t.replace("KIND=MPI_COUNT_KIND", "8").replace("KIND=MPI_OFFSET_KIND", "8")
                sig.append(t.replace(" ", "") + ("(*)" if d.endswith("(*)") else ""))
        return sig


def distinguishable(a, b):
    sa, sb = a.signature(), b.signature()
    return any(x != y and "*" not in (x, y) for x, y in zip(sa, sb)) or len(sa) != len(sb)


def select(spec, f08):
    bound, missing = [], []
    for proc in spec.procs:
        if proc.mpit or proc.name.endswith(C_ONLY_SUFFIX) or proc.name in HANDWRITTEN:
            if proc.name in HANDWRITTEN:
                bound.append((proc, None))
            continue
        for big in (proc.variants() if f08 else (False,)):
            try:
                bound.append((proc, Binding(proc, big, f08)))
            except fm.Unbound as e:
                missing.append("%s: %s" % (proc.fname(big), e))
    return bound, missing


def gen_c(bindings, f08):
    out = ["/* " + gb.GEN_NOTE.replace("gen_bindings.py", "fortran/gen_fortran.py") + " */",
           '#include "fortran/fort_glue.h"', ""]
    for b in bindings:
        out += b.c_function()
    return "\n".join(out)


def gen_mpi_module(spec, bindings):
    out = ["! Module mpi of Rail MPI: constants and explicit interfaces.",
           "! " + ft.NOTE, "MODULE mpi", "  IMPLICIT NONE"]
    out += ["  " + s for s in ft.constants_f90(spec, f08=False)]
    out += ["  " + s for s in ft.sentinels(f08=False)]
    out.append("  INTERFACE")
    for b in bindings:
        out += ["    " + s for s in b.interface()]
    out += ["    " + s for s in ft.HAND_F77 + ft.attr_callbacks(False)]
    out += ["  END INTERFACE", "END MODULE mpi", ""]
    return "\n".join(out)


def gen_f08_module(spec, bindings):
    by_name = {}
    for b in bindings:
        by_name.setdefault(b.proc.name, []).append(b)
    out = ["! Module mpi_f08 of Rail MPI: handle types, constants, interfaces.",
           "! " + ft.NOTE, "MODULE mpi_f08", "  USE, INTRINSIC :: ISO_C_BINDING, ONLY: C_PTR",
           "  IMPLICIT NONE"]
    out += ["  " + s for s in ft.f08_types()]
    out += ["  " + s for s in ft.constants_f90(spec, f08=True)]
    out += ["  " + s for s in ft.sentinels(f08=True)]
    for name, bs in by_name.items():
        std = [b for b in bs if not b.big]
        big = [b for b in bs if b.big]
        together = std and big and distinguishable(std[0], big[0])
        groups = [(name, std + big)] if together else [(name, std), (name + "_c", big)]
        for gname, members in groups:
            if not members:
                continue
            out.append("  INTERFACE %s" % gname)
            for b in members:
                out += ["    " + s for s in b.interface()]
            out.append("  END INTERFACE %s" % gname)
    out += ["  " + s for s in ft.attr_callbacks(True) + ft.HAND_F08]
    out += ["  " + s for s in ft.handle_operators_decl()]
    out.append("CONTAINS")
    out += ["  " + s for s in ft.handle_operators_body()]
    out += ["END MODULE mpi_f08", ""]
    return "\n".join(out)


def gen_report(spec, b77, m77, b08, m08):
    def count(bs):
        return len([1 for _, b in bs])
    out = ["Fortran bindings generated from mpi_api.spec (" + ft.NOTE + ")",
           "mpif.h / use mpi: %d procedures bound" % count(b77),
           "use mpi_f08: %d procedures bound (with _c forms)" % count(b08),
           "", "Not bound in use mpi:"] + ["  " + m for m in m77]
    out += ["", "Not bound in use mpi_f08:"] + ["  " + m for m in m08]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--outdir", required=True)
    args = ap.parse_args(argv)
    try:
        spec = gb.parse_spec(args.spec)
    except gb.SpecError as e:
        sys.stderr.write("gen_fortran: %s\n" % e)
        return 1
    b77, m77 = select(spec, False)
    b08, m08 = select(spec, True)
    l77 = [b for _, b in b77 if b]
    l08 = [b for _, b in b08 if b]
    gen = os.path.join(args.outdir, "fortran", "gen")
    texts = {os.path.join(args.outdir, "include", "mpif.h"): ft.gen_mpif(spec),
             os.path.join(gen, "mpi.f90"): gen_mpi_module(spec, l77),
             os.path.join(gen, "mpi_f08.f90"): gen_f08_module(spec, l08),
             os.path.join(gen, "fort_f77.c"): gen_c(l77, False),
             os.path.join(gen, "fort_f08.c"): gen_c(l08, True),
             os.path.join(gen, "fort_bound.txt"): gen_report(spec, b77, m77, b08, m08)}
    for path, text in texts.items():
        gb.write_if_changed(path, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
