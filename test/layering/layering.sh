#!/bin/sh
# The layering of docs/architecture.md, checked from the code:
#
# 1. Includes.  A file of a layer includes headers of its own layer and of
#    the layers below it only, as the table says; no file outside mpi/
#    includes a header of mpi/ (the front end), tests and tools included.
# 2. The link.  The core library (everything below the front end) links
#    into a shared object with no undefined symbol of its own, without the
#    front end: test/librail_core_alone.la, built by make check with
#    -Wl,--no-undefined (a symbol of mpi/ used below breaks that build);
#    here its dynamic symbols are checked too.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-$top}
cd "$top" || exit 1

# layer: the folders its files may include from (besides system headers
# and <mpi.h>, the public interface every layer may use).
allowed() {
    case $1 in
    base)     echo "base" ;;
    accel)    echo "base accel" ;;
    runtime)  echo "base runtime" ;;
    btl)      echo "base accel runtime btl" ;;
    obj)      echo "base accel runtime obj" ;;
    pml)      echo "base accel runtime btl obj pml" ;;
    osc)      echo "base accel runtime btl obj pml coll osc" ;;
    coll)     echo "base accel runtime obj pml coll" ;;
    io)       echo "base accel runtime obj pml coll io" ;;
    mpi)      echo "base accel runtime btl obj pml osc coll io mpi" ;;
    fortran)  echo "base accel runtime btl obj pml osc coll io mpi fortran" ;;
    tools)    echo "base accel runtime btl obj pml osc coll io tools" ;;
    test|bench|examples)
              echo "base accel runtime btl obj pml osc coll io tools test bench" ;;
    *)        echo "" ;;
    esac
}

bad=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||')
for f in $files; do
    layer=${f%%/*}
    ok=$(allowed "$layer")
    [ -n "$ok" ] || continue
    for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
        case " $ok " in
        *" $inc "*) ;;
        *)
            line=$(grep -n "#[ \t]*include[ \t]*\"$inc/" "$f" | head -n 1)
            echo "FAIL: $f:${line%%:*}: layer '$layer' includes a header of '$inc'"
            bad=$((bad + 1)) ;;
        esac
    done
done
[ $bad -eq 0 ] && echo "includes: every layer includes only its own and lower layers"

so="$bld/test/.libs/librail_core_alone.so"
if [ ! -f "$so" ]; then
    echo "FAIL: $so was not built (make check builds it; the core library needs the front end?)"
    bad=$((bad + 1))
else
    # Undefined dynamic symbols must come from system libraries, never from
    # the library's own layers.
    own=$(nm -D --undefined-only "$so" | awk '{print $2}' |
          grep -E '^(mpii?_|obj_|pml_|coll_|btl_|rail_|rte_|accel_|P?MPIX?_)' || true)
    if [ -n "$own" ]; then
        echo "FAIL: the core library uses symbols it does not define:"
        echo "$own" | head -n 20
        bad=$((bad + 1))
    else
        echo "link: the core library links alone (-Wl,--no-undefined), no front-end symbol"
    fi
fi
[ $bad -eq 0 ] || { echo "$bad layering error(s)"; exit 1; }
exit 0
