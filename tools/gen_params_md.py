#!/usr/bin/env python3
"""Write docs/params.md, the parameter reference, from `railinfo --all --json`.

    tools/gen_params_md.py [--railinfo PATH | --json FILE] [-o OUT]

The reference lists every registered parameter, grouped by its layer or
framework (the first word of its name) and component (the second word,
where the build has a component of that name): name, type, registered
default, level and help.  It never prints a current value, so what the
environment, a config file or the machine says does not change it; railinfo
is run with no RAIL_* variables and an empty HOME all the same.

A build may lack a component (cuda without the CUDA toolkit).  The
sections of components that are not built here are then kept as they are
in OUT, so that such a build neither drops nor fails on them.

`make params-md` runs it; test/docs/params_current.sh checks in `make check`
that docs/params.md is current.  Standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# What a group is, for the reader; a group not named here gets no line.
GROUP_TITLES = {
    "accel": "Device memory and accelerators (accel/README.md).",
    "btl": "Transports between processes: self, sm (shared memory), tcp, verbs (rdma-core).",
    "coll": "Collective operations (coll/README.md and the component READMEs).",
    "copy": "Bulk memory copies of the transfer paths.",
    "mpi": "The MPI front end.",
    "op": "Reduction kernels on the host.",
    "pml": "Point-to-point messaging: protocols over the transports.",
    "progress": "How a waiting process polls, yields and sleeps.",
}

LEVELS = ((7, "developer"), (4, "tuner"), (1, "user"))

BEGIN = re.compile(r"^<!-- begin (\S+) -->$")


def run_railinfo(path):
    """railinfo --all --json in a clean environment (no RAIL_*, empty HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAIL_")}
    with tempfile.TemporaryDirectory() as home:
        env["HOME"] = home
        out = subprocess.run([path, "--all", "--json"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
    if out.returncode != 0:
        sys.exit("gen_params_md: %s --all --json failed: %s" % (path, out.stderr.strip()))
    return json.loads(out.stdout)


def section_of(name, components):
    """'accel/cuda' for accel_cuda_*, 'accel' for accel_* and accel."""
    words = name.split("_")
    group = words[0]
    if len(words) > 1 and words[1] in components.get(group, []):
        return group + "/" + words[1]
    return group


def level_text(level):
    for floor, word in LEVELS:
        if level >= floor:
            return "%s (%d)" % (word, level)
    return str(level)


def default_text(p):
    d = p["default"]
    if d == "":
        return "(empty)"
    text = "`%s`" % d
    if p["type"] == "size" and d.isdigit() and int(d) >= 1024:
        n, unit = int(d), ""
        for suffix in ("K", "M", "G"):
            if n % 1024:
                break
            n, unit = n // 1024, suffix
        if unit:
            text += " (%d%s)" % (n, unit)
    if p.get("use") == "measured":
        # RAIL_PARAM_F_MEASURED: timed on one machine, not derived from a principle
        text += ", measured on one machine (`bench/tune_params.py %s`)" % p["name"]
    if p.get("dynamic"):
        # RAIL_PARAM_F_DYNAMIC: read at every use
        text += ", *writable while running*"
    return text


def cell(text):
    """Text fit for a table cell: one line, no column bars, no HTML tags."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def table(params):
    rows = ["| name | type | default | level | meaning |", "|---|---|---|---|---|"]
    for p in sorted(params, key=lambda q: q["name"]):
        meaning = p["help"]
        choices = p["choices"].split("|") if p.get("choices") else []
        if not all(re.search(r"\b%s\b" % re.escape(c), meaning) for c in choices):
            meaning += "; one of %s" % ", ".join("`%s`" % c for c in choices)
        rows.append("| `%s` | %s | %s | %s | %s |" % (
            p["name"], p["type"], cell(default_text(p)), level_text(p["level"]), cell(meaning)))
    return rows


def sections(info):
    """{key: text} for this build's parameters; key 'group' or 'group/component'."""
    components = info.get("components", {})
    by_key = {}
    for p in info.get("parameters", []):
        by_key.setdefault(section_of(p["name"], components), []).append(p)
    for key in list(by_key):
        by_key.setdefault(key.split("/")[0], [])
    return {key: section(key, params) for key, params in by_key.items()}


def section(key, params):
    """One section's text, between its begin and end markers."""
    if "/" in key:
        lines = ["### %s %s" % tuple(key.split("/"))]
    else:
        lines = ["## %s" % key] + (["", GROUP_TITLES[key]] if key in GROUP_TITLES else [])
    if params:
        lines += [""] + table(params)
    return "\n".join(["<!-- begin %s -->" % key] + lines + ["<!-- end %s -->" % key])


def read_sections(path):
    """{key: text} of an existing reference (empty when there is none)."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return {}
    found, key, body = {}, None, []
    for line in lines:
        m = BEGIN.match(line)
        if m:
            key, body = m.group(1), [line]
        elif key is not None:
            body.append(line)
            if line == "<!-- end %s -->" % key:
                found[key] = "\n".join(body)
                key = None
    return found


def document(info, old):
    """The whole reference; old: the existing file's sections."""
    new = sections(info)
    built = info.get("components", {})
    kept = []
    for key, text in old.items():
        if "/" in key and key not in new:
            group, comp = key.split("/")
            if comp not in built.get(group, []):
                new[key] = text
                new.setdefault(group, section(group, []))
                kept.append(key)
    keys = sorted(new)
    head = [
        "# Parameters",
        "",
        "<!-- Generated by tools/gen_params_md.py from `railinfo --all --json`.",
        "     Do not edit: run `make params-md`. `make check` checks that it is current. -->",
        "",
        "Every tunable of Rail MPI is one parameter. Set it in any of these ways:",
        "",
        "- the environment: `RAIL_<NAME>`, the name in upper case",
        "  (`RAIL_BTL_SM_EAGER_LIMIT=32k`);",
        "- `mpirun --param name=value`, which sets that variable in every rank;",
        "- `~/.rail/params.conf` or `<prefix>/etc/rail-params.conf`:",
        "  `name = value` lines, `#` starts a comment;",
        "- MPI_T control variables, from the program itself.",
        "",
        "The environment wins over the user's file, which wins over the",
        "system's file.",
        "",
        "`railinfo --param NAME` shows a parameter's current value and where it",
        "came from. An unknown name in the environment or a file gets a warning.",
        "",
        "Sizes take a `k`, `m` or `g` suffix (powers of 1024). Booleans take",
        "`1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`. Levels follow MPI_T:",
        "user (1-3), tuner (4-6), developer (7-9). This list is the full build's:",
        "the `accel cuda` parameters exist only where configure found CUDA.",
        "",
        "A default marked *measured on one machine* was chosen by timing a",
        "benchmark there, not derived from a principle: `bench/tune_params.py",
        "NAME` times candidate values on yours and prints the best per size.",
        "",
        "A parameter marked *writable while running* is read at every use: an",
        "MPI_T control-variable write after `MPI_Init` takes effect for the",
        "operations and waits that start after it. Every other one is read when",
        "MPI comes up and is constant while it runs.",
        "",
        "Groups: " + ", ".join("[%s](#%s)" % (k, k) for k in keys if "/" not in k) + ".",
    ]
    body = []
    for k in keys:
        body += ["", new[k]]
    return "\n".join(head + body) + "\n", kept


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--railinfo", default="tools/railinfo", help="railinfo to run")
    src.add_argument("--json", help="read this railinfo --all --json output instead")
    ap.add_argument("-o", "--out", default="docs/params.md", help="the reference to write")
    args = ap.parse_args(argv)

    if args.json:
        with open(args.json) as f:
            info = json.load(f)
    else:
        info = run_railinfo(args.railinfo)
    text, kept = document(info, read_sections(args.out))
    for key in kept:
        print("gen_params_md: %s is not built here; its section in %s is kept as it is" % (
            key.replace("/", " "), args.out), file=sys.stderr)

    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
