#!/bin/bash
# `make install DESTDIR=...` and then the installation moved to another
# directory, used as users do: the moved wrappers, mpirun and raild work
# (rpath, no LD_LIBRARY_PATH), the moved prefix's etc/rail-params.conf is
# read; pkg-config (mpi, mpi-c, mpi-cxx, rail, and
# Meson's ompi-c names) gives Rail's flags, not the system Open MPI's; the
# man pages render (man -M, man 3 MPI_Send and MPI_Send_c, section 1); the
# Lmod and Tcl modulefiles load (Lmod; environment-modules where installed),
# set what they should, man mpicc shows Rail's page, a program builds and
# runs, and loading beside another MPI's module fails;
# CMake's find_package(MPI) finds Rail from PATH, from -DMPI_HOME, and from
# MPI_C_COMPILER with $MPI_HOME set; Meson's dependency('mpi').
# Parts whose tool is missing say SKIP with the reason.
[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/test/env/lib.sh"
. "$top_srcdir/test/tools/install_lib.sh"
T=$(mktemp -d /tmp/railtest-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset RAIL_CC OMPI_CC MPICH_CC RAIL_CXX OMPI_CXX MPICH_CXX LD_LIBRARY_PATH MPI_HOME PKG_CONFIG_PATH \
    CMAKE_PREFIX_PATH MODULEPATH LOADEDMODULES _LMFILES_

install_moved "$T" || fail "make install failed: $(tail -5 "$T/install.log")"
write_program "$T/p.c"

# The moved wrappers point at the moved tree; what they build runs under the
# moved mpirun without LD_LIBRARY_PATH.
[ "$("$P/bin/mpicc" --showme:incdirs)" = "$P/include" ] || fail "moved mpicc: incdirs '$("$P/bin/mpicc" --showme:incdirs)'"
[ "$("$P/bin/mpicc" --showme:libdirs)" = "$P/lib" ] || fail "moved mpicc: libdirs '$("$P/bin/mpicc" --showme:libdirs)'"
"$P/bin/mpicc" -o "$T/p" "$T/p.c" || fail "moved mpicc could not build"
check_runs "$T/p" "$P/bin/mpirun" "moved mpicc"
check_runs "$T/p" "$P/bin/mpiexec" "moved mpiexec"
[ -x "$P/bin/raild" ] || fail "raild is not installed next to mpirun"
"$P/bin/mpicxx" --showme:link | grep -q -- "-Wl,-rpath,$P/lib" || fail "moved mpicxx: link flags"
# The moved installation reads its own <prefix>/etc/rail-params.conf.
mkdir -p "$P/etc"
echo "coll_check = true" >"$P/etc/rail-params.conf"
out=$(env -u RAIL_COLL_CHECK HOME="$T" "$P/bin/railinfo" --param coll_check)
echo "$out" | grep -q "coll_check = true" && echo "$out" | grep -q "$P/etc/rail-params.conf" ||
    fail "moved railinfo does not read $P/etc/rail-params.conf: $out"

part_pkgconfig
part_man
part_modules
part_cmake
part_meson
pass
