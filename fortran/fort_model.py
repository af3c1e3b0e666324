"""How each C parameter of the spec looks in Fortran, for gen_fortran.py.

A Param of mpi_api.spec becomes a FortArg: its declaration in the `mpi`
module (and mpif.h callers), in `mpi_f08`, its C glue parameter(s), and
the code that converts it before and after the call to the C procedure.
Procedures whose parameters have no rule here are not bound (the generator
lists them): callbacks, argv arrays, MPI_Fint conversions, MPI_T_*.
"""

import re

HANDLE_TYPES = ["MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Op", "MPI_Info",
                "MPI_Errhandler", "MPI_Request", "MPI_Message", "MPI_Win", "MPI_File",
                "MPI_Session"]
# The C functions converting a handle kind (PMPI_<x>_f2c / PMPI_<x>_c2f).
CONV = {h: "PMPI_" + h[4:].capitalize() if h != "MPI_Datatype" else "PMPI_Type"
        for h in HANDLE_TYPES}
INT_KINDS = {"int": "INTEGER", "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
             "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)",
             "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)"}
C_INTS = {"int": "MPI_Fint", "MPI_Aint": "MPI_Aint", "MPI_Count": "MPI_Count",
          "MPI_Offset": "MPI_Offset"}

# Lengths of arrays of handles (converted element by element): a parameter,
# or "size"/"peer_size" of the procedure's communicator.
HANDLE_ARRAY_LEN = {
    "MPI_Waitall": "count", "MPI_Testall": "count", "MPI_Waitany": "count",
    "MPI_Testany": "count", "MPI_Waitsome": "incount", "MPI_Testsome": "incount",
    "MPI_Startall": "count", "MPI_Request_get_status_all": "count",
    "MPI_Request_get_status_any": "count", "MPI_Request_get_status_some": "incount",
    "MPI_Type_create_struct": "count", "MPI_Type_get_contents": "max_datatypes",
    "MPI_Alltoallw": "peer_size", "MPI_Ialltoallw": "peer_size",
    "MPI_Alltoallw_init": "peer_size",
}
# Index outputs: Fortran counts from 1.
INDEX_OUT = {"index": "one", "array_of_indices": "outcount"}
# Procedures whose buffers stay in use after the call returns.
RETAINED = {"MPI_Buffer_attach", "MPI_Comm_attach_buffer", "MPI_Session_attach_buffer",
            "MPI_Win_create", "MPI_Win_attach"}
# Buffers that are only addresses (no data moves through them).
ADDRESS_ONLY = {"MPI_Free_mem", "MPI_Win_detach", "MPI_Get_address", "MPI_Address"}


class Unbound(Exception):
    pass


class FortArg:
    """One C parameter seen from Fortran.

    f77: declaration lines in the `mpi` module; f08: in `mpi_f08`;
    cparams: C glue parameters; pre/post: C statements; arg: the C call's
    argument; hidden: trailing hidden-length parameters (character)."""

    def __init__(self, name):
        self.name = name
        self.f77, self.f08, self.cparams, self.pre, self.post = [], [], [], [], []
        self.hidden = []
        self.arg = name
        self.fname = name   # name of the Fortran dummy (None: no Fortran argument)


def intent(d):
    return {"in": "IN", "out": "OUT", "inout": "INOUT"}[d]


def base_of(t):
    return t.replace("const", "").replace("*", "").strip()


class ArgMaker:
    def __init__(self, proc, big):
        self.proc, self.big = proc, big
        self.params = proc.params_of(big)
        self.names = {p.name for p in self.params}

    def ctype(self, p):
        return p.big_type if self.big else p.std_type

    def length(self, p):
        n = HANDLE_ARRAY_LEN.get(self.proc.name)
        if n is None:
            raise Unbound("array of handles %s has no known length" % p.name)
        if n in ("size", "peer_size"):
            return "fort_comm_peer_size(%s)" % self.comm_expr()
        return "(*%s)" % n

    def comm_expr(self):
        return "PMPI_Comm_f2c(*comm)"

    def make(self, p, f08):
        t = self.ctype(p)
        b, stars, nm = base_of(t), t.count("*"), p.name
        a = FortArg(nm)
        if p.varargs:
            a.fname = None
            a.arg = None
            return a
        if p.kind in ("ARGUMENT_COUNT", "ARGUMENT_LIST") and self.proc.name.startswith("MPI_Init"):
            a.fname = None     # MPI_INIT(IERROR): the command line is not passed
            a.arg = "NULL"
            return a
        if p.kind in ("F90_STATUS", "F08_STATUS"):
            return self.status_conversion(a, p, f08)
        if "(" in t or b.endswith("_function") or b.endswith("_function_c") or b == "MPI_Fint" \
                or "char **" in t or "char ***" in t or (b == "char" and p.array and stars):
            raise Unbound("parameter %s of type %s" % (nm, t))
        if b == "void" and p.kind.startswith("BUFFER"):
            return self.buffer(a, p, f08)
        if b == "void":
            return self.address(a, p, f08)
        if b == "char":
            return self.string(a, p, f08)
        if b in ("MPI_Status", "MPI_F08_status"):
            return self.status(a, p, f08)
        if b in HANDLE_TYPES:
            return self.handle(a, p, f08)
        if b in INT_KINDS:
            return self.integer(a, p, f08)
        if b == "double":
            raise Unbound("double parameter %s" % nm)
        raise Unbound("parameter %s of type %s" % (nm, t))

    def integer(self, a, p, f08):
        b = base_of(self.ctype(p))
        logical = p.kind.startswith("LOGICAL")
        ft = "LOGICAL" if logical else INT_KINDS[b]
        dim = "(*)" if p.array else ""
        if p.array == "[][3]":
            dim = "(3,*)"
        direc = "IN" if p.dir == "in" else intent(p.dir)
        decl = "%s, INTENT(%s) :: %s%s" % (ft, direc, p.name, dim)
        a.f77 = a.f08 = [decl]
        ct = C_INTS[b]
        const = "const " if p.dir == "in" else ""
        a.cparams = ["%s%s *%s" % (const, ct, p.name)]
        scalar_in = p.dir == "in" and not p.array and self.ctype(p).count("*") == 0
        a.arg = ("*%s" % p.name) if scalar_in else p.name
        if p.array == "[][3]":
            a.arg = "(int (*)[3])%s" % p.name
        if p.name in INDEX_OUT and p.kind == "INDEX" and p.dir == "out":
            a.post = ["fort_index_out(rc, %s, %s);" % (p.name, "1" if p.name == "index"
                                                       else "*outcount")]
        return a

    def handle(self, a, p, f08):
        h = base_of(self.ctype(p))
        conv = CONV[h]
        stars = self.ctype(p).count("*")
        ftype = "TYPE(%s)" % h if f08 else "INTEGER"
        dim = "(*)" if p.array else ""
        a.f77 = ["INTEGER, INTENT(%s) :: %s%s" % (intent(p.dir), p.name, dim)]
        a.f08 = ["%s, INTENT(%s) :: %s%s" % (ftype, intent(p.dir), p.name, dim)]
        const = "const " if p.dir == "in" and stars == 0 else ""
        a.cparams = ["%sMPI_Fint *%s" % (const, p.name)]
        if p.array:
            a.pre = ["MPI_Count n_%s = %s;" % (p.name, self.length(p))]
            n = "n_" + p.name
            a.pre.append("%s *c_%s = fort_halloc(%s, sizeof(%s), &rc);" % (h, p.name, n, h))
            if p.dir != "out":
                a.pre.append("for (MPI_Count i = 0; c_%s && i < %s; i++) c_%s[i] = %s_f2c(%s[i]);"
                             % (p.name, n, p.name, conv, p.name))
            a.arg = "c_" + p.name
            if p.dir != "in":
                a.post = ["for (MPI_Count i = 0; rc == MPI_SUCCESS && i < %s; i++) "
                          "%s[i] = %s_c2f(c_%s[i]);" % (n, p.name, conv, p.name)]
            a.post.append("free(c_%s);" % p.name)
            return a
        if stars == 0:
            a.arg = "%s_f2c(*%s)" % (conv, p.name)
            return a
        init = "%s_f2c(*%s)" % (conv, p.name) if p.dir != "out" else "%s" % NULLS[h]
        a.pre = ["%s c_%s = %s;" % (h, p.name, init)]
        a.arg = "&c_" + p.name
        if p.dir != "in":
            a.post = ["if (rc == MPI_SUCCESS) *%s = %s_c2f(c_%s);" % (p.name, conv, p.name)]
        return a

    def status(self, a, p, f08):
        ftype = "TYPE(MPI_Status)" if f08 else "INTEGER"
        if p.array:
            dim77, dim08 = "(MPI_STATUS_SIZE,*)", "(*)"
        else:
            dim77, dim08 = "(MPI_STATUS_SIZE)", ""
        a.f77 = ["INTEGER, INTENT(%s) :: %s%s" % (intent(p.dir), p.name, dim77)]
        a.f08 = ["%s, INTENT(%s) :: %s%s" % (ftype, intent(p.dir), p.name, dim08)]
        const = "const " if p.dir == "in" else ""
        a.cparams = ["%sMPI_Fint *%s" % (const, p.name)]
        if p.dir == "in":
            a.arg = "(%s)%s" % (self.ctype(p), p.name)
        else:
            fn = "fort_statuses" if p.array else "fort_status"
            a.arg = "%s(%s)" % (fn, p.name)
        return a

    def status_conversion(self, a, p, f08):
        """MPI_Status_f2f08 / MPI_Status_f082f: both forms, in mpi_f08 only."""
        if not f08:
            raise Unbound("converts to TYPE(MPI_Status), an mpi_f08 type")
        if p.kind == "F90_STATUS":
            a.f08 = ["INTEGER, INTENT(%s) :: %s(MPI_STATUS_SIZE)" % (intent(p.dir), p.name)]
        else:
            a.f08 = ["TYPE(MPI_Status), INTENT(%s) :: %s" % (intent(p.dir), p.name)]
        a.cparams = ["%sMPI_Fint *%s" % ("const " if p.dir == "in" else "", p.name)]
        a.arg = "(%s)%s" % (self.ctype(p), p.name)
        return a

    def string(self, a, p, f08):
        a.f77 = ["CHARACTER(LEN=*), INTENT(%s) :: %s" % (intent(p.dir), p.name)]
        a.f08 = list(a.f77)
        if f08:
            a.cparams = ["CFI_cdesc_t *%s" % p.name]
            ptr, ln = "(char *)%s->base_addr" % p.name, "%s->elem_len" % p.name
        else:
            a.cparams = ["char *%s" % p.name]
            a.hidden = ["size_t %s_len" % p.name]
            ptr, ln = p.name, "%s_len" % p.name
        if p.dir == "in":
            a.pre = ["char *c_%s = fort_cstr(%s, %s);" % (p.name, ptr, ln)]
            a.post = ["free(c_%s);" % p.name]
        else:
            a.pre = ["char *c_%s = fort_cbuf(%s, %s);" % (p.name, ptr, ln)]
            a.post = ["fort_fstr(rc, %s, %s, c_%s);" % (ptr, ln, p.name)]
        a.arg = "c_" + p.name
        return a

    def address(self, a, p, f08):
        """void * that is not a choice buffer: attribute values, extra state,
        memory returned by the library (C_BUFFER)."""
        k = p.kind
        if k.startswith("ATTRIBUTE_VAL"):
            ft = "INTEGER" if k.endswith("_10") else "INTEGER(KIND=MPI_ADDRESS_KIND)"
            a.f77 = a.f08 = ["%s, INTENT(%s) :: %s" % (ft, intent(p.dir), p.name)]
            ct = "MPI_Fint" if k.endswith("_10") else "MPI_Aint"
            a.cparams = ["%s *%s" % (ct, p.name)]
            if p.dir == "in":
                a.arg = "(void *)(intptr_t)*%s" % p.name
            else:
                a.pre = ["void *c_%s = NULL;" % p.name]
                a.arg = "&c_" + p.name
                kv = [q.name for q in self.params if "keyval" in q.name][0]
                a.post = ["if (rc == MPI_SUCCESS && *flag) *%s = (%s)fort_attr_value(*%s, c_%s);"
                          % (p.name, ct, kv, p.name)]
            return a
        if k.startswith("C_BUFFER"):
            a.f77 = ["INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT) :: %s" % p.name]
            a.f08 = ["TYPE(C_PTR), INTENT(OUT) :: %s" % p.name]
            a.cparams = ["void *%s" % p.name]
            a.arg = p.name
            return a
        raise Unbound("parameter %s of kind %s" % (p.name, k))

    def buffer(self, a, p, f08):
        retained = (any(q.name == "request" and q.dir == "out" for q in self.params)
                    or self.proc.name in RETAINED or self.proc.chapter == "rma")
        asyn = ", ASYNCHRONOUS" if retained else ""
        io = intent(p.dir) if p.dir != "out" else "INOUT"
        if p.dir == "in" and not self.ctype(p).startswith("const"):
            io = "IN"
        a.f77 = ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % p.name,
                 "TYPE(*), DIMENSION(*)%s :: %s" % (asyn, p.name)]
        a.f08 = ["TYPE(*), DIMENSION(..)%s, INTENT(%s) :: %s" % (asyn, io, p.name)]
        if not f08:
            a.cparams = ["void *%s" % p.name]
            a.arg = "fort_addr(%s)" % p.name
            return a
        a.cparams = ["CFI_cdesc_t *%s" % p.name]
        if self.proc.name in ADDRESS_ONLY:
            a.arg = "fort_addr(%s->base_addr)" % p.name
            return a
        cnt, dt = "-1", "MPI_DATATYPE_NULL"
        spec = p.ann.get("buf")
        shared = [q for q in self.params if q is not p and q.ann.get("buf") == spec]
        if shared:
            spec = None    # one datatype serves two buffers: no section datatype
        if isinstance(spec, str):
            c, d = spec.split(":")
            cnt = "(MPI_Count)*%s" % c
            dt = "PMPI_Type_f2c(*%s)" % d
        mode = {"in": "FORT_IN", "out": "FORT_OUT", "inout": "FORT_IN | FORT_OUT"}[p.dir]
        if retained:
            mode += " | FORT_RETAINED"
        a.pre = ["fort_buf_t b_%s = {0};" % p.name,
                 "if (rc == MPI_SUCCESS) rc = fort_buf_begin(&b_%s, %s, %s, %s, %s);"
                 % (p.name, p.name, cnt, dt, mode)]
        a.arg = "b_%s.addr" % p.name
        a.post = ["fort_buf_end(&b_%s, rc);" % p.name]
        if isinstance(spec, str):
            a.count_of = (spec.split(":")[0], spec.split(":")[1], p.name)
        return a


NULLS = {h: h.upper() + "_NULL" if h != "MPI_Datatype" else "MPI_DATATYPE_NULL"
         for h in HANDLE_TYPES}
NULLS["MPI_Errhandler"] = "MPI_ERRHANDLER_NULL"


def c_identifier(name):
    return re.sub(r"\W", "_", name)
