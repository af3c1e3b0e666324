#!/bin/sh
# Write a C source that embeds a binary file (the device kernels' fatbin)
# for cuModuleLoadData:  embed_fatbin.sh FILE SYMBOL > OUT.c
# The bytes come in through the assembler's .incbin, by the file's absolute
# path: the fatbin is over 16 MB, and as a C array of byte literals it took
# gcc 80-110 s to compile, alone on the critical path of the build.
# SYMBOL (16-byte aligned) and SYMBOL_size (a size_t) are hidden symbols.
set -e
in=$1
sym=$2
case "$in" in
/*) path=$in ;;
*) path=$(pwd)/$in ;;
esac
case "$path" in
*'"'* | *'\'*) echo "embed_fatbin.sh: cannot embed a path with quotes or backslashes: $path" >&2
    exit 1 ;;
esac
size=$(wc -c < "$in")
size=$((size))
test "$size" -gt 0 || { echo "embed_fatbin.sh: $in is empty" >&2; exit 1; }
cat <<EOF
/* Generated from $(basename "$in") by accel/cuda/embed_fatbin.sh; do not edit. */
#include <stddef.h>
__asm__(".pushsection .rodata\\n"
        ".balign 16\\n"
        ".globl $sym\\n"
        ".hidden $sym\\n"
        ".type $sym, @object\\n"
        "$sym:\\n"
        ".incbin \\"$path\\"\\n"
        ".size $sym, . - $sym\\n"
        ".popsection\\n");
__attribute__((visibility("hidden"))) const size_t ${sym}_size = $size;
EOF
