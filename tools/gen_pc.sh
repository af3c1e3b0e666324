#!/bin/sh
# Writes one pkg-config file to stdout.  Arguments: NAME DESCRIPTION VERSION
# PREFIX INCDIRS LIBDIR LIBS RPATH(yes|no) LIBS_PRIVATE.  Where LIBDIR is
# PREFIX/lib, the file finds the prefix from its own place (${pcfiledir}),
# so a moved installation keeps working; other layouts get absolute paths.
set -e
[ $# -eq 9 ] || { echo "gen_pc.sh: 9 arguments expected, $# given" >&2; exit 1; }
name=$1 desc=$2 version=$3 prefix=$4 incdirs=$5 libdir=$6 libs=$7 rpath=$8 private=$9
if [ "$libdir" = "$prefix/lib" ]; then
    echo 'prefix=${pcfiledir}/../..'
else
    echo "prefix=$prefix"
fi
rel() { case "$1" in "$prefix"/*) echo "\${prefix}/${1#"$prefix"/}" ;; *) echo "$1" ;; esac; }
echo "libdir=$(rel "$libdir")"
cflags=""
for d in $incdirs; do cflags="$cflags -I$(rel "$d")"; done
lflags="-L\${libdir}"
[ "$rpath" = yes ] && lflags="$lflags -Wl,-rpath,\${libdir}"
for l in $libs; do lflags="$lflags -l$l"; done
cat <<EOT

Name: $name
Description: $desc
Version: $version
Cflags:$cflags
Libs: $lflags
Libs.private: $private
EOT
