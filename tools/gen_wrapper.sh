#!/bin/sh
# Writes one compiler wrapper (mpicc, mpicxx, mpifort) from tools/mpicc.in to
# stdout.  Arguments: TEMPLATE VERSION RPATH(yes|no) NAME VAR LANGUAGE OPT
# COMPILER INCDIRS LIBDIRS LIBS PREFIX BINDIR; PREFIX and BINDIR are empty
# for the build tree's wrappers (which never relocate).
set -e
[ $# -eq 13 ] || { echo "gen_wrapper.sh: 13 arguments expected, $# given" >&2; exit 1; }
tmpl=$1 version=$2 rpath=$3 name=$4 var=$5 lang=$6 opt=$7 cc=$8
incdirs=$9
shift 9
libdirs=$1 libs=$2 prefix=$3 bindir=$4
# One space between words; a directory given twice (srcdir = builddir) once.
squeeze() { echo "$*" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/ $//'; }
sed -e "s|@PACKAGE_VERSION@|$version|g" -e "s|@WRAPPER_RPATH@|$rpath|g" \
    -e "s|@WRAPPER_NAME@|$name|g" -e "s|@WRAPPER_VAR@|$var|g" -e "s|@WRAPPER_LANG@|$lang|g" \
    -e "s|@WRAPPER_OPT@|$opt|g" -e "s|@WRAPPER_CC@|$cc|g" \
    -e "s|@WRAPPER_INCDIRS@|$(squeeze "$incdirs")|g" -e "s|@WRAPPER_LIBDIRS@|$(squeeze "$libdirs")|g" \
    -e "s|@WRAPPER_LIBS@|$(squeeze "$libs")|g" -e "s|@WRAPPER_PREFIX@|$prefix|g" \
    -e "s|@WRAPPER_BINDIR@|$bindir|g" "$tmpl"
