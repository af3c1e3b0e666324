#!/bin/sh
# libmpi.so exports only MPI_*, PMPI_* and MPIX_* symbols, and the memory
# calls the registration cache interposes (base/memhook.c: munmap, mmap,
# mmap64, mremap, madvise, shmdt); every MPI_ function is a weak alias of
# its PMPI_ twin (so profiling tools work).
. "${top_srcdir:-.}/test/env/lib.sh"
lib="$top_builddir/.libs/libmpi.so"
[ -f "$lib" ] || skip "no shared library built"
syms=$(nm -D --defined-only "$lib" | awk '{print $2, $3}')
bad=$(echo "$syms" | awk '{print $2}' | grep -Ev '^(P?MPIX?_)' | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' |
    grep -Ev '^(munmap|mmap|mmap64|mremap|madvise|shmdt)$')
[ -z "$bad" ] || fail "symbols outside the MPI namespace are exported: $(echo $bad | head -c 400)"
nmpi=0
for s in $(echo "$syms" | awk '$2 ~ /^MPI_/ && $1 ~ /[TtWw]/ {print $2}'); do
    nmpi=$((nmpi + 1))
    echo "$syms" | grep -q "^W $s\$" || fail "$s is not a weak symbol"
    echo "$syms" | grep -q " P$s\$" || fail "$s has no P$s"
done
[ $nmpi -gt 400 ] || fail "only $nmpi MPI_ functions exported"
echo "$nmpi MPI_ functions, each a weak alias of its PMPI_ twin"
pass
