#!/bin/sh
# Write a C source holding a binary file (the device kernels' fatbin) as a
# byte array, for cuModuleLoadData:  embed_fatbin.sh FILE SYMBOL > OUT.c
set -e
in=$1
sym=$2
size=$(wc -c < "$in")
size=$((size))
printf '/* Generated from %s by accel/cuda/embed_fatbin.sh; do not edit. */\n' "$(basename "$in")"
printf '#include <stddef.h>\n'
printf '__attribute__((visibility("hidden"), aligned(16))) const unsigned char %s[%d] = {\n' "$sym" "$size"
od -An -v -tx1 "$in" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
printf '};\n'
printf '__attribute__((visibility("hidden"))) const size_t %s_size = %d;\n' "$sym" "$size"
