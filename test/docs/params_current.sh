#!/bin/sh
# docs/params.md is the parameter reference that tools/gen_params_md.py
# writes from `railinfo --all --json`.  Regenerate it into a temporary file
# (sections of components this build lacks, such as cuda, are carried over
# from docs/params.md) and compare: a parameter added, removed or changed
# without regenerating the reference fails here.
. "${top_srcdir:-.}/test/env/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
railinfo="$top_builddir/tools/railinfo"
doc="$top_srcdir/docs/params.md"
[ -x "$railinfo" ] || fail "$railinfo is not built"
[ -f "$doc" ] || fail "$doc is missing: run 'make params-md'"
tmp=$(mktemp "${TMPDIR:-/tmp}/params.md.XXXXXX") || fail "mktemp failed"
trap 'rm -f "$tmp"' EXIT
cp "$doc" "$tmp" || fail "cannot copy $doc"
python3 "$top_srcdir/tools/gen_params_md.py" --railinfo "$railinfo" -o "$tmp" ||
    fail "tools/gen_params_md.py failed"
if ! diff -u "$doc" "$tmp"; then
    fail "docs/params.md is out of date: run 'make params-md' and commit docs/params.md"
fi
pass
