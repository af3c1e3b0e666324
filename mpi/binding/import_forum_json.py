#!/usr/bin/env python3
"""One-time importer: MPI Forum apis.json -> procedures section of mpi_api.spec.

    python3 import_forum_json.py /path/to/mpi-4.0-apis.json mpi_api.spec

The build never runs this.  It rewrites only the text between the lines
"# BEGIN imported procedures" and "# END imported procedures" of the spec
(creating the spec from scratch if it does not exist), so everything else
in the spec (types, constants, error classes, callbacks and the MPI-4.1
additions) is maintained by hand.  Re-running it discards hand edits made
inside the imported block; after the initial import, edit the spec itself.

What it adds on top of the JSON facts:
  * the C type of every parameter (from the parameter's kind, direction,
    pointer/const/array flags), written as "std|big" where the standard and
    the big-count (_c) bindings differ;
  * the check annotations used by gen_bindings.py (see mpi_api.spec's
    header for their meaning), chosen by the rules below;
  * procedure flags: chapter, big, separate, anytime, errh, rooted, raw,
    deprecated.
"""

import json
import os
import re
import sys

BEGIN = "# BEGIN imported procedures"
END = "# END imported procedures"

# ----------------------------------------------------------------- C types

VOIDPTR_KINDS = {
    "BUFFER", "C_BUFFER", "C_BUFFER2", "C_BUFFER3", "C_BUFFER4", "ATTRIBUTE_VAL",
    "ATTRIBUTE_VAL_10", "EXTRA_STATE", "EXTRA_STATE2", "TOOL_MPI_OBJ",
}
HANDLE_KINDS = {
    "COMMUNICATOR": "MPI_Comm", "DATATYPE": "MPI_Datatype", "GROUP": "MPI_Group",
    "OPERATION": "MPI_Op", "INFO": "MPI_Info", "ERRHANDLER": "MPI_Errhandler",
    "REQUEST": "MPI_Request", "MESSAGE": "MPI_Message", "WINDOW": "MPI_Win",
    "FILE": "MPI_File", "SESSION": "MPI_Session",
}
OTHER_KINDS = {
    "CVAR": "MPI_T_cvar_handle", "PVAR": "MPI_T_pvar_handle",
    "PVAR_SESSION": "MPI_T_pvar_session", "EVENT_REGISTRATION": "MPI_T_event_registration",
    "EVENT_INSTANCE": "MPI_T_event_instance", "TOOLS_ENUM": "MPI_T_enum",
    "CALLBACK_SAFETY": "MPI_T_cb_safety", "SOURCE_ORDERING": "MPI_T_source_order",
    "EVENT_CB_FUNCTION": "MPI_T_event_cb_function",
    "EVENT_FREE_CB_FUNCTION": "MPI_T_event_free_cb_function",
    "EVENT_DROP_CB_FUNCTION": "MPI_T_event_dropped_cb_function",
    "DISPLACEMENT": "MPI_Aint", "DISPLACEMENT_NNI": "MPI_Aint", "LOCATION_SMALL": "MPI_Aint",
    "WINDOW_SIZE": "MPI_Aint", "ALLOC_MEM_NUM_BYTES": "MPI_Aint",
    "RMA_DISPLACEMENT_NNI": "MPI_Aint", "WIN_ATTACH_SIZE": "MPI_Aint",
    "OFFSET": "MPI_Offset",
    "XFER_NUM_ELEM": "MPI_Count", "XFER_NUM_ELEM_NNI": "MPI_Count", "NUM_BYTES": "MPI_Count",
    "TOOLS_TICK_COUNT": "MPI_Count", "GENERIC_DTYPE_COUNT": "MPI_Count",
    "STATUS": "MPI_Status", "F90_STATUS": "MPI_Fint", "F08_STATUS": "MPI_F08_status",
    "STRING": "char",
}
POLY_KINDS = {
    "POLYXFER_NUM_ELEM": "int|MPI_Count", "POLYXFER_NUM_ELEM_NNI": "int|MPI_Count",
    "POLYDTYPE_NUM_ELEM": "int|MPI_Count", "POLYDTYPE_NUM_ELEM_NNI": "int|MPI_Count",
    "POLYDTYPE_NUM_ELEM_PI": "int|MPI_Count", "POLYNUM_BYTES": "int|MPI_Count",
    "POLYNUM_BYTES_NNI": "int|MPI_Count", "POLYNUM_PARAM_VALUES": "int|MPI_Count",
    "POLYDISPLACEMENT_COUNT": "int|MPI_Count", "POLYDISPLACEMENT": "int|MPI_Aint",
    "POLYRMA_DISPLACEMENT": "int|MPI_Aint", "POLYDISPLACEMENT_AINT_COUNT": "MPI_Aint|MPI_Count",
    "POLYDTYPE_PACK_SIZE": "MPI_Aint|MPI_Count", "POLYLOCATION": "MPI_Aint|MPI_Count",
    "POLYDISPOFFSET": "MPI_Aint|MPI_Count", "POLYDTYPE_STRIDE_BYTES": "MPI_Aint|MPI_Count",
}
RETURN_TYPES = {
    "ERROR_CODE": "int", "ERROR_CLASS": "int", "NOTHING": "void", "WALL_TIME": "double",
    "TICK_RESOLUTION": "double", "DISPLACEMENT": "MPI_Aint", "LOCATION_SMALL": "MPI_Aint",
}

# Declarators the generic rules cannot express.
SPECIAL_DECL = {
    ("MPI_Init", "argc"): "int *argc",
    ("MPI_Init", "argv"): "char ***argv",
    ("MPI_Init_thread", "argc"): "int *argc",
    ("MPI_Init_thread", "argv"): "char ***argv",
    ("MPI_Info_create_env", "argc"): "int argc",
    ("MPI_Info_create_env", "argv"): "char *argv[]",
    ("MPI_Comm_spawn", "argv"): "char *argv[]",
    ("MPI_Comm_spawn_multiple", "array_of_commands"): "char *array_of_commands[]",
    ("MPI_Comm_spawn_multiple", "array_of_argv"): "char **array_of_argv[]",
    ("MPI_Group_range_excl", "ranges"): "int ranges[][3]",
    ("MPI_Group_range_incl", "ranges"): "int ranges[][3]",
}


def ctype_decl(proc, p):
    """C declarator of parameter p, with "std|big" where the bindings differ."""
    kind, name, d = p["kind"], p["name"], p["param_direction"]
    if (proc, name) in SPECIAL_DECL:
        return SPECIAL_DECL[(proc, name)]
    if kind == "VARARGS":
        return "..."
    const = "const " if p["constant"] else ""
    is_array = p["length"] is not None
    if kind in VOIDPTR_KINDS:
        return "%svoid *%s" % (const, name)
    if kind == "FUNCTION":
        return "%s *%s" % (p["func_type"], name)
    if kind == "POLYFUNCTION":
        return "%s|%s_c *%s" % (p["func_type"], p["func_type"], name)
    if kind.startswith("F90_") and kind != "F90_STATUS":
        return "MPI_Fint %s" % name
    if kind in HANDLE_KINDS:
        base = HANDLE_KINDS[kind]
    elif kind in POLY_KINDS:
        base = POLY_KINDS[kind]
    elif kind in OTHER_KINDS:
        base = OTHER_KINDS[kind]
    else:
        base = "int"
    if kind.endswith("_FUNCTION"):
        return "%s %s" % (base, name)
    if kind == "STRING":
        if d == "in":
            return "const char %s[]" % name if is_array else "const char *%s" % name
        return "char *%s" % name
    if kind == "STATUS":
        if is_array:
            return "MPI_Status %s[]" % name
        return "%sMPI_Status *%s" % ("const " if d == "in" else "", name)
    if kind in ("F90_STATUS", "F08_STATUS"):
        return "%s%s *%s" % (const, base, name)
    if is_array:
        return "%s%s %s[]" % (const, base, name)
    if p["pointer"] is True or (p["pointer"] is None and d in ("out", "inout")):
        return "%s%s *%s" % (const, base, name)
    return "%s%s %s" % (const, base, name)


# ----------------------------------------------------------------- chapters

COLL_RE = re.compile(r"^MPI_I?(Allgatherv?|Allreduce|Alltoall[vw]?|Barrier|Bcast|Exscan|Gatherv?|"
                     r"Reduce(_scatter(_block)?)?|Scan|Scatterv?|Neighbor_(allgatherv?|alltoall[vw]?))"
                     r"(_init)?$", re.IGNORECASE)
RMA_NAMES = {"MPI_Put", "MPI_Get", "MPI_Rput", "MPI_Rget", "MPI_Accumulate", "MPI_Get_accumulate",
             "MPI_Raccumulate", "MPI_Rget_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
             "MPI_Alloc_mem", "MPI_Free_mem"}
PT2PT_RE = re.compile(r"^MPI_(I?[BSR]?send(_init)?|I?[bsr]?send|I?[Ss]endrecv(_replace)?|I?[Rr]ecv|Recv_init|I?[Pp]robe|I?[Mm]probe|"
                      r"I?[Mm]recv|Wait\w*|Test\w*|Start\w*|Request_\w+|Cancel|Buffer_\w+|Status_\w+|"
                      r"Grequest_\w+|Psend_init|Precv_init|Pready\w*|Parrived|Get_count|Send|Send_init|"
                      r"Comm_(attach|detach|flush|iflush)_buffer|Session_(attach|detach|flush|iflush)_buffer)$")
COMM_RE = re.compile(r"^MPI_(Comm_\w+|Group_\w+|Intercomm_\w+|Attr_\w+|Keyval_\w+|Cart\w*|Graph\w*|"
                     r"Dist_graph\w*|Dims_create|Topo_test|Open_port|Close_port|Publish_name|"
                     r"Lookup_name|Unpublish_name)$")


def coll_base(name):
    """"Gatherv" for MPI_Gatherv, MPI_Igatherv and MPI_Gatherv_init; None if not a collective."""
    m = COLL_RE.match(name)
    if not m or name.startswith("MPI_Init"):
        return None
    return m.group(1)[0].upper() + m.group(1)[1:]


def chapter_of(name):
    if name.startswith("MPI_T_"):
        return "tools"
    if name.startswith("MPI_File_") or name == "MPI_Register_datarep":
        return "io"
    if name.startswith("MPI_Win_") or name in RMA_NAMES:
        return "rma"
    if re.match(r"^MPI_(Type_\w+|Pack\w*|Unpack\w*|Get_address|Get_elements\w*|Aint_\w+)$", name):
        return "datatype"
    if COLL_RE.match(name) or name in ("MPI_Reduce_local",) or name.startswith("MPI_Op_"):
        if name.endswith("_c2f") or name.endswith("_f2c"):
            return "env"
        if name.endswith("_init") and COLL_RE.match(name):
            return "coll_persist"
        if COLL_RE.match(name) and name.startswith("MPI_I") and not name.startswith("MPI_Init"):
            return "coll_nb"
        return "coll"
    if name.endswith("_c2f") or name.endswith("_f2c") or "_c2f08" in name or "_f082" in name \
            or name.endswith("_f2f08"):
        return "env" if not name.startswith("MPI_Status_") else "pt2pt"
    if PT2PT_RE.match(name):
        return "pt2pt"
    if COMM_RE.match(name):
        return "comm"
    return "env"


# ----------------------------------------------------------------- flags

SEPARATE = {"MPI_Op_create", "MPI_Register_datarep", "MPI_Type_get_contents", "MPI_Type_get_envelope",
            "MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv", "MPI_Neighbor_allgatherv_init",
            "MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv", "MPI_Neighbor_alltoallv_init",
            "MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init"}

# MPI-4.1 section 12.4.1, Table 9, plus the initialisation calls themselves
# (MPI_T_* are always allowed and handled separately).
ANYTIME = {
    "MPI_Init", "MPI_Init_thread", "MPI_Session_init", "MPI_Initialized", "MPI_Finalized",
    "MPI_Get_version", "MPI_Get_library_version", "MPI_Info_create", "MPI_Info_create_env",
    "MPI_Info_set", "MPI_Info_delete", "MPI_Info_get", "MPI_Info_get_valuelen",
    "MPI_Info_get_string", "MPI_Info_get_nkeys", "MPI_Info_get_nthkey", "MPI_Info_dup",
    "MPI_Info_free", "MPI_Info_f2c", "MPI_Info_c2f", "MPI_Session_create_errhandler",
    "MPI_Session_call_errhandler", "MPI_Errhandler_free", "MPI_Errhandler_f2c",
    "MPI_Errhandler_c2f", "MPI_Error_string", "MPI_Error_class", "MPI_Add_error_class",
    "MPI_Remove_error_class", "MPI_Add_error_code", "MPI_Remove_error_code",
    "MPI_Add_error_string", "MPI_Remove_error_string",
}
DEPRECATED = {
    "MPI_Attr_delete", "MPI_Attr_get", "MPI_Attr_put", "MPI_Keyval_create", "MPI_Keyval_free",
    "MPI_Info_get", "MPI_Info_get_valuelen", "MPI_Get_elements_x", "MPI_Status_set_elements_x",
    "MPI_Type_get_extent_x", "MPI_Type_get_true_extent_x", "MPI_Type_size_x",
}
RAW = {"MPI_Comm_call_errhandler", "MPI_Win_call_errhandler", "MPI_File_call_errhandler",
       "MPI_Session_call_errhandler"}
ERRH_KINDS = ("COMMUNICATOR", "WINDOW", "FILE", "SESSION")

RECV_TAG_PROCS = re.compile(r"^MPI_(Irecv|Recv|Recv_init|Probe|Iprobe|Mprobe|Improbe)$")
INPLACE_SEND = re.compile(r"^MPI_I?(Allgatherv?|Allreduce|Alltoall[vw]?|Gatherv?|Reduce|"
                          r"Reduce_scatter(_block)?|Scan|Exscan)(_init)?$", re.IGNORECASE)
INPLACE_RECV = re.compile(r"^MPI_I?Scatterv?(_init)?$", re.IGNORECASE)
ROOTED = re.compile(r"^MPI_I?(Bcast|Gatherv?|Scatterv?|Reduce)(_init)?$", re.IGNORECASE)
COMMIT_CHAPTERS = ("pt2pt", "coll", "coll_nb", "coll_persist", "rma", "io")
NNI_COUNT_KINDS = {"POLYXFER_NUM_ELEM_NNI", "POLYDTYPE_NUM_ELEM_NNI", "POLYNUM_BYTES_NNI",
                   "XFER_NUM_ELEM_NNI"}
NONNULL_EXEMPT = VOIDPTR_KINDS | {"STATUS", "LOGICAL_OPTIONAL", "ARGUMENT_COUNT", "ARGUMENT_LIST",
                                  "VARARGS"}


def buf_pair(name, scalars):
    """The count and datatype parameters describing buffer `name`, if any."""
    cands = []
    for a, b in (("buf", "count"), ("_addr", "_count"), ("buffer", "count")):
        if name.endswith(a):
            cands.append(name[: -len(a)] + b)
    cands.append("count")
    count = next((c for c in cands if c in scalars), None)
    tcands = []
    if name.startswith("send"):
        tcands.append("sendtype")
    if name.startswith("recv"):
        tcands.append("recvtype")
    if name.endswith("_addr"):
        tcands.append(name[: -len("_addr")] + "_datatype")
    tcands.append("datatype")
    dtype = next((t for t in tcands if t in scalars and scalars[t]["kind"] == "DATATYPE"), None)
    if count and dtype and scalars[count]["kind"] != "DATATYPE":
        return count, dtype
    return None


def array_len(proc, p, params):
    """Length expression of a converted (POLY) input array."""
    length = p["length"]
    if isinstance(length, str) and length and length != "*" and length in params:
        return length
    base = coll_base(proc) or ""
    if base.startswith("Reduce_scatter"):
        return "size"
    if base in ("Gatherv", "Scatterv", "Allgatherv", "Alltoallv", "Alltoallw"):
        return "peer_size"
    return None


def annotate(proc, params):
    """Check annotations per parameter (list of lists of strings)."""
    names = [p["name"] for p in params]
    scalars = {p["name"]: p for p in params if p["length"] is None}
    mpit = proc.startswith("MPI_T_")
    ann = {n: [] for n in names}
    rooted = bool(ROOTED.match(proc))
    # buffers
    committed = set()
    for p in params:
        if p["kind"] != "BUFFER":
            continue
        pair = buf_pair(p["name"], scalars)
        if pair:
            ann[p["name"]].append("buf=%s:%s" % pair)
            committed.add(pair[1])
        if (INPLACE_SEND.match(proc) and p["name"] == "sendbuf") or \
                (INPLACE_RECV.match(proc) and p["name"] == "recvbuf"):
            ann[p["name"]].append("inplace=root" if rooted else "inplace")
    for p in params:
        n, k, d = p["name"], p["kind"], p["param_direction"]
        a = ann[n]
        is_array = p["length"] is not None
        if mpit:
            continue
        if k == "DATATYPE" and d == "in" and not is_array:
            if n in committed or n in ("target_datatype", "etype", "filetype") or \
                    proc in ("MPI_Pack_size", "MPI_Pack_external_size") or \
                    (chapter_of(proc) in COMMIT_CHAPTERS and proc != "MPI_File_get_type_extent"):
                a.append("committed")
        if k in HANDLE_KINDS and d == "in" and not is_array and p["pointer"] is not True:
            if (k == "INFO" and not proc.startswith("MPI_Info_")) or \
                    (k == "REQUEST" and proc == "MPI_Request_get_status"):
                a.append("null")
        if k in NNI_COUNT_KINDS and d == "in" and (not is_array or array_len(proc, p, names)):
            a.append("nni")
        if k == "ARRAY_LENGTH_NNI" and d == "in":
            a.append("nniarg")
        if is_array and k.startswith("POLY") and d == "in":
            ln = array_len(proc, p, names)
            if ln:
                a.insert(0, "len=" + ln)
        if k == "RANK" and d == "in" and not is_array:
            if n == "dest":
                a.append("rank=dest")
            elif n == "source":
                a.append("rank=dest" if proc == "MPI_Precv_init" else "rank=source")
            elif n == "root":
                a.append("rank=root")
        if k == "RANK_NNI" and d == "in" and not is_array and n in ("target_rank", "rank"):
            a.append("rank=target")
        if k == "TAG" and d == "in":
            recv = RECV_TAG_PROCS.match(proc) or n == "recvtag"
            a.append("tag=recv" if recv else "tag=send")
        if not is_array and k not in NONNULL_EXEMPT and \
                (p["pointer"] is True or (p["pointer"] is None and d in ("out", "inout"))) and \
                "ctype" in p and "*" in p["ctype"] and not k.endswith("_FUNCTION"):
            a.append("nonnull")
        if k == "STATUS" and not is_array and d in ("in", "inout"):
            a.append("nonnull")
        if k == "STRING" and d == "out":
            if "nonnull" not in a:
                a.append("nonnull")
    if mpit:
        return ann
    # significance conditions in rooted collectives and in-place
    base = coll_base(proc)
    for p in params:
        n = p["name"]
        if p["root_only"] and not (base == "Scatterv" and n == "recvbuf"):
            ann[n].append("when=root")
    if base in ("Gather", "Gatherv"):
        for n in ("sendbuf", "sendcount", "sendtype"):
            ann[n].append("when=contrib:sendbuf")
    if base == "Reduce":
        ann["sendbuf"].append("when=contrib:sendbuf")
    if base in ("Scatter", "Scatterv"):
        for n in ("recvbuf", "recvcount", "recvtype"):
            ann[n].append("when=contrib:recvbuf")
    if base in ("Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw"):
        for n in ("sendcount", "sendcounts", "sdispls", "sendtype", "sendtypes"):
            if n in ann:
                ann[n].append("when=notinplace:sendbuf")
    if proc in ("MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Comm_accept", "MPI_Comm_connect"):
        for p in params:
            if p["root_only"] and "when=root" not in ann[p["name"]]:
                ann[p["name"]].append("when=root")
    return ann


def proc_flags(proc, params, ret):
    flags = ["chapter=" + chapter_of(proc)]
    if ret != "int":
        flags.append("ret=" + ret)
    if any(p["kind"].startswith("POLY") for p in params):
        flags.append("big")
    if proc in SEPARATE:
        flags.append("separate")
    if proc in ANYTIME:
        flags.append("anytime")
    if proc in DEPRECATED:
        flags.append("deprecated")
    if proc in RAW:
        flags.append("raw")
    if ROOTED.match(proc):
        flags.append("rooted=root")
    if ret == "int" and not proc.startswith("MPI_T_"):
        flags.append("errh=" + errh_of(proc, params))
    return flags


def errh_of(proc, params):
    if proc in ("MPI_File_open", "MPI_File_delete"):
        return "file_null"
    for p in params:
        if p["kind"] in ERRH_KINDS and p["param_direction"] == "in" and p["length"] is None \
                and p["pointer"] is not True:
            return p["name"]
    first = params[0] if params else None
    if first and first["kind"] in ERRH_KINDS and first["param_direction"] == "inout":
        return "*" + first["name"]
    return "default"


# ----------------------------------------------------------------- output

FIXUPS = {
    # The JSON marks Scatterv_init's recvbuf root-only; it is not.
    ("MPI_Scatterv_init", "recvbuf"): {"root_only": False},
    # The JSON gives Status_set_elements' count the kind XFER_NUM_ELEM_SMALL,
    # so no _c form was made; MPI-4.0 defines MPI_Status_set_elements_c.
    ("MPI_Status_set_elements", "count"): {"kind": "POLYXFER_NUM_ELEM"},
}


def convert(api):
    out = []
    procs = sorted((v for v in api.values()
                    if v["attributes"]["c_expressible"] and not v["attributes"]["callback"]
                    and not v["attributes"]["predefined_function"]
                    and v["name"] not in ("MPI_F_sync_reg", "MPI_Sizeof")),
                   key=lambda v: v["name"])
    for v in procs:
        proc = v["name"]
        params = [dict(p) for p in v["parameters"] if "c_parameter" not in p["suppress"]]
        for p in params:
            p.update(FIXUPS.get((proc, p["name"]), {}))
            p["ctype"] = ctype_decl(proc, p)
        ret = RETURN_TYPES.get(v["return_kind"])
        if ret is None:
            ret = HANDLE_KINDS.get(v["return_kind"]) or ("MPI_Fint" if v["return_kind"].startswith("F90_")
                                                         else None)
        if ret is None:
            raise SystemExit("unknown return kind %s of %s" % (v["return_kind"], proc))
        ann = annotate(proc, params)
        out.append("%s  %s" % (proc, "  ".join(proc_flags(proc, params, ret))))
        for p in params:
            a = ann.get(p["name"], [])
            if p["large_only"]:
                a = ["bigonly"] + a
            out.append("    %-5s %-27s %-44s  %s" % (p["param_direction"], p["kind"], p["ctype"],
                                                   ",".join(a) if a else "-"))
        if not params:
            out.append("    (void)")
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        api = json.load(f)
    block = [BEGIN,
             "# Generated once from the MPI Forum's mpi-4.0-apis.json by import_forum_json.py;",
             "# maintained by hand since."] + convert(api) + [END]
    spec = sys.argv[2]
    if os.path.exists(spec):
        with open(spec) as f:
            text = f.read().split("\n")
        i, j = text.index(BEGIN), text.index(END)
        text = text[:i] + block + text[j + 1:]
    else:
        text = block + [""]
    with open(spec, "w") as f:
        f.write("\n".join(text))


if __name__ == "__main__":
    main()
