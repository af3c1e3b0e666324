#!/bin/sh
# The build tree's compiler wrappers (tools/mpicc.in): every -show/--showme
# form answers without calling the compiler, MPICH's -compile_info and
# -link_info, the compiler chosen by RAIL_CC / OMPI_CC / MPICH_CC (and the
# C++ and Fortran names, and -cc=), a program built with mpicc runs without
# LD_LIBRARY_PATH (rpath), and bad input (an unknown --showme:WHAT, a
# compiler that is not installed) gives one line and a non-zero status.
. "${top_srcdir:-.}/test/env/lib.sh"
W="$top_builddir/tools"
[ -x "$W/mpicc" ] || fail "$W/mpicc missing (make builds it)"
T=$(mktemp -d /tmp/railtest-wrappers.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset RAIL_CC OMPI_CC MPICH_CC RAIL_CXX OMPI_CXX MPICH_CXX RAIL_FC OMPI_FC MPICH_FC LD_LIBRARY_PATH

libdir="$top_builddir/.libs"
for w in mpicc mpicxx mpifort; do
    for opt in -showme:compile --showme:compile; do
        out=$("$W/$w" $opt) || fail "$w $opt: status $?"
        echo "$out" | grep -q -- "-I$top_builddir/include" || fail "$w $opt: '$out'"
        echo "$out" | grep -q -- "-lmpi" && fail "$w $opt has link flags: '$out'"
    done
    out=$("$W/$w" --showme:link)
    echo "$out" | grep -q -- "-L$libdir .*-Wl,-rpath,$libdir .*-lmpi" || fail "$w --showme:link: '$out'"
    [ "$("$W/$w" --showme:incdirs | cut -d' ' -f1)" = "$top_builddir/include" ] ||
        fail "$w --showme:incdirs: '$("$W/$w" --showme:incdirs)'"
    [ "$("$W/$w" --showme:libdirs)" = "$libdir" ] || fail "$w --showme:libdirs: '$("$W/$w" --showme:libdirs)'"
    "$W/$w" --showme:libs | grep -qw mpi || fail "$w --showme:libs: '$("$W/$w" --showme:libs)'"
    for opt in -showme:version --showme:version; do
        "$W/$w" $opt | grep -q "^$w: Rail MPI " || fail "$w $opt: '$("$W/$w" $opt)'"
    done
    "$W/$w" --showme:help | grep -q -- "--showme:libdirs" || fail "$w --showme:help"
    # -show / -showme / --showme print the whole command, our option removed.
    for opt in -show -showme --showme; do
        out=$("$W/$w" $opt -O2 x.c -o x) || fail "$w $opt: status $?"
        case "$out" in *"$opt"*) fail "$w $opt: the option reached the command: '$out'" ;; esac
        echo "$out" | grep -q -- "-O2 x.c -o x .*-lmpi" || fail "$w $opt: '$out'"
    done
    "$W/$w" -show -c x.c | grep -q -- "-lmpi" && fail "$w -show -c links"
    # MPICH's forms: the compiler, then the flags.
    cmd=$("$W/$w" --showme:command)
    [ -n "$cmd" ] || fail "$w --showme:command is empty"
    out=$("$W/$w" -compile_info)
    [ "${out%% *}" = "$cmd" ] && echo "$out" | grep -q -- "-I" && ! echo "$out" | grep -q -- "-lmpi" ||
        fail "$w -compile_info: '$out'"
    out=$("$W/$w" -link_info)
    [ "${out%% *}" = "$cmd" ] && echo "$out" | grep -q -- "-I.*-lmpi" || fail "$w -link_info: '$out'"
done

# The compiler named by the variables users already set, in this order.
for pair in mpicc:CC mpicxx:CXX mpifort:FC; do
    w=${pair%%:*} v=${pair#*:}
    for var in RAIL_$v OMPI_$v MPICH_$v; do
        out=$(env "$var=my-$var-compiler" "$W/$w" --showme:command)
        [ "$out" = "my-$var-compiler" ] || fail "$w with $var: '$out'"
        out=$(env "$var=my-$var-compiler" "$W/$w" -show x.c)
        [ "${out%% *}" = "my-$var-compiler" ] || fail "$w -show with $var: '$out'"
    done
    out=$(env RAIL_$v=first OMPI_$v=second MPICH_$v=third "$W/$w" --showme:command)
    [ "$out" = first ] || fail "$w: RAIL_$v should win over OMPI_$v and MPICH_$v ('$out')"
done
# -v or --version alone: our version, then the compiler's.
for opt in -v --version; do
    out=$("$W/mpicc" $opt 2>&1) || fail "mpicc $opt: status $?: $out"
    [ "$(echo "$out" | head -1)" = "mpicc: Rail MPI $("$W/mpicc" --showme:version | cut -d' ' -f4)" ] ||
        fail "mpicc $opt: '$out'"
done
[ "$("$W/mpicc" -cc=clang-x -show x.c | cut -d' ' -f1)" = clang-x ] || fail "mpicc -cc="
[ "$("$W/mpifort" -fc=flang-x -show x.f90 | cut -d' ' -f1)" = flang-x ] || fail "mpifort -fc="

# Bad input: one line on stderr, non-zero status, no compiler run.
for opt in --showme:unknown -showme:bogus; do
    "$W/mpicc" $opt >"$T/out" 2>"$T/err" && fail "mpicc $opt: status 0"
    [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ] || fail "mpicc $opt: not one line: $(cat "$T/err")"
    grep -q "unknown option" "$T/err" || fail "mpicc $opt: '$(cat "$T/err")'"
done
RAIL_CC=no-such-cc-1234 "$W/mpicc" -c x.c >"$T/out" 2>"$T/err"
rc=$?
[ $rc -ne 0 ] || fail "mpicc with a compiler that is not installed: status 0"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no-such-cc-1234.*RAIL_CC.*not installed" "$T/err" ||
    fail "mpicc with a missing compiler: '$(cat "$T/err")'"

# A program built with the wrapper runs without LD_LIBRARY_PATH (rpath).
cat >"$T/p.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("size %d\n", size);
    MPI_Finalize();
    return 0;
}
EOC
"$W/mpicc" -o "$T/p" "$T/p.c" || fail "mpicc could not build a program"
ldd "$T/p" | grep "libmpi.so" | grep -q "$libdir" || fail "the program does not find the build tree's libmpi: $(ldd "$T/p" | grep mpi)"
out=$(run_mpi -n 2 "$T/p") || fail "the program built with mpicc failed: $out"
[ "$(echo "$out" | grep -c '^size 2$')" -eq 2 ] || fail "output: $out"
if command -v "$("$W/mpicxx" --showme:command)" >/dev/null; then
    printf '#include <mpi.h>\n#include <cstdio>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); std::puts("ok"); }\n' >"$T/q.cc"
    "$W/mpicxx" -o "$T/q" "$T/q.cc" || fail "mpicxx could not build a program"
    [ "$(run_mpi -n 1 "$T/q")" = ok ] || fail "the program built with mpicxx"
else
    echo "SKIP: wrappers: mpicxx build (no C++ compiler)"
fi
pass
