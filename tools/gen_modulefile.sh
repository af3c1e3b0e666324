#!/bin/sh
# Writes Rail MPI's modulefile to stdout: `lua` for Lmod, `tcl` for
# environment-modules (Lmod reads it too).  Arguments: lua|tcl VERSION PREFIX
# BINDIR MANDIR PKGCONFIGDIR LIBDIR RPATH(yes|no).  Installed at
# PREFIX/share/modulefiles/rail-mpi/VERSION(.lua); a moved installation finds
# its prefix from the modulefile's own path.  LD_LIBRARY_PATH is set only
# when the wrappers and .pc files carry no rpath.
set -e
[ $# -eq 8 ] || { echo "gen_modulefile.sh: 8 arguments expected, $# given" >&2; exit 1; }
lang=$1 version=$2 prefix=$3 bindir=$4 mandir=$5 pcdir=$6 libdir=$7 rpath=$8
# A directory under the prefix is written relative to it.
rel_lua() { case "$1" in "$prefix"/*) echo "pathJoin(prefix, \"${1#"$prefix"/}\")" ;; *) echo "\"$1\"" ;; esac; }
rel_tcl() { case "$1" in "$prefix"/*) echo "\$prefix/${1#"$prefix"/}" ;; *) echo "$1" ;; esac; }
conflicts="openmpi mpich mvapich2 mvapich impi intel-mpi mpi"
if [ "$lang" = lua ]; then
    cat <<EOT
-- Rail MPI $version for Lmod (written by make install; tools/gen_modulefile.sh)
local prefix = "$prefix"
local moved = myFileName():match("^(.+)/share/modulefiles/rail%-mpi/[^/]+\$")
if moved then prefix = moved end
help([[Rail MPI $version: mpicc, mpicxx, mpifort, mpirun, railinfo and the man pages.]])
whatis("Name: Rail MPI")
whatis("Version: $version")
whatis("Description: an MPI-4.1 implementation")
family("mpi")
conflict($(echo "$conflicts" | sed 's/\([^ ]*\)/"\1"/g; s/ /, /g'))
prepend_path("PATH", $(rel_lua "$bindir"))
prepend_path("MANPATH", $(rel_lua "$mandir"))
prepend_path("PKG_CONFIG_PATH", $(rel_lua "$pcdir"))
prepend_path("CMAKE_PREFIX_PATH", prefix)
setenv("MPI_HOME", prefix)
EOT
    [ "$rpath" = yes ] || echo "prepend_path(\"LD_LIBRARY_PATH\", $(rel_lua "$libdir"))"
else
    cat <<EOT
#%Module1.0
## Rail MPI $version for environment-modules (written by make install;
## tools/gen_modulefile.sh)
set prefix {$prefix}
regexp {^(.+)/share/modulefiles/rail-mpi/[^/]+\$} \$ModulesCurrentModulefile -> prefix
proc ModulesHelp { } { puts stderr "Rail MPI $version: mpicc, mpicxx, mpifort, mpirun, railinfo and the man pages." }
module-whatis "Rail MPI $version: an MPI-4.1 implementation"
conflict $conflicts
prepend-path PATH $(rel_tcl "$bindir")
prepend-path MANPATH $(rel_tcl "$mandir")
prepend-path PKG_CONFIG_PATH $(rel_tcl "$pcdir")
prepend-path CMAKE_PREFIX_PATH \$prefix
setenv MPI_HOME \$prefix
EOT
    [ "$rpath" = yes ] || echo "prepend-path LD_LIBRARY_PATH $(rel_tcl "$libdir")"
fi
