#!/bin/sh
# Developer tool: a self-contained bundle that runs the GPU checks
# (test/gpu/check_gpu.sh) on a machine that has a GPU but not this build's
# dependencies (libpmix, hwloc, libevent, munge) nor a compiler, e.g. a lent
# GPU machine with another distribution.  It holds the installed tree, the
# shared libraries it needs beyond glibc (PMIx's plugins too), the device
# tests and bench/gpu built against the install, and run.sh.
#
#   tools/gpu-bundle.sh PREFIX OUTDIR
#
# PREFIX: where `make install` of a CUDA-enabled build put Rail MPI.  On
# the GPU machine: `sh OUTDIR/run.sh` (root, or write access to PREFIX's
# parent: the install is copied back to PREFIX, where its paths point;
# GPU_MPS=1 runs the checks under the MPS daemon).
# Machine-specific by design: the libraries are this machine's; glibc there
# must be as new as here.
set -e
prefix=$1
out=$2
if [ -z "$prefix" ] || [ -z "$out" ] || [ ! -x "$prefix/bin/mpicc" ]; then
    echo "usage: $0 PREFIX OUTDIR (PREFIX: an installed Rail MPI)" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/tests/dtype" "$out/tests/p2p" "$out/tests/coll" "$out/lib" "$out/pmix"
cp -a "$prefix" "$out/install"
rm -f "$out/install/lib/"*.a
echo "$prefix" >"$out/PREFIX"
for t in dtype/dtype_device p2p/p2p_device coll/coll_device_scratch coll/coll_move \
    coll/coll_reduce coll/coll_overlap coll/coll_neighbor coll/sm_ops coll/tuned_reduce \
    coll/tuned_move coll/han_ops coll/coll_threads; do
    "$prefix/bin/mpicc" -O2 -I"$src" -I"$src/test/p2p" -I"$src/test/coll" \
        -o "$out/tests/$t" "$src/test/$t.c"
done
"$prefix/bin/mpicc" -O2 -I"$src" -o "$out/tests/gpu" "$src/bench/gpu.c"
cp "$src/test/gpu/check_gpu.sh" "$out/"
# Libraries beyond glibc, from every program and library of the bundle;
# PMIx loads its plugins from its own directory: they travel beside it.
{
    for f in "$prefix"/bin/* "$prefix"/lib/*.so "$out"/tests/*/* "$out/tests/gpu"; do
        [ -f "$f" ] && ldd "$f" 2>/dev/null || true
    done
} | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u | while read -r l; do
    case $(basename "$l") in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) ;;
    libmpi.so*) ;;
    *) cp -L "$l" "$out/lib/" ;;
    esac
    d=$(dirname "$l")
    [ -d "$d/pmix" ] && cp -L "$d"/pmix/*.so "$out/pmix/" 2>/dev/null || true
done
cat >"$out/run.sh" <<'EOF'
#!/bin/sh
# Run the GPU checks from this bundle (tools/gpu-bundle.sh).
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(cat "$here/PREFIX")
if [ ! -x "$prefix/bin/mpirun" ]; then
    mkdir -p "$(dirname "$prefix")" && cp -a "$here/install" "$prefix" || exit 1
fi
# The bundle's libraries (PMIx with its own plugins), but the machine's own
# copy of a general system library (libudev, libz) where it has one.
mkdir -p "$here/use"
for l in "$here"/lib/*; do
    case $(basename "$l") in
    libudev.so* | libz.so*) ldconfig -p 2>/dev/null | grep -q "[[:space:]]$(basename "$l") " && continue ;;
    esac
    ln -sf "$l" "$here/use/"
done
export LD_LIBRARY_PATH="$here/use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PMIX_MCA_mca_base_component_path="$here/pmix"
# (every run on a lent GPU so far set this: one node needs no compression
# of the launcher's exchanges, and the bundle's libz may differ from the
# machine's)
export PMIX_MCA_pcompress="${PMIX_MCA_pcompress:-^zlib}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null
# GPU_MPS=1: under NVIDIA's MPS daemon (several processes on one GPU; see
# docs/performance.md), started here with private directories and stopped
# at the end
mps=""
if [ "${GPU_MPS:-0}" = 1 ]; then
    if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
        export CUDA_MPS_PIPE_DIRECTORY="$here/mps/pipe" CUDA_MPS_LOG_DIRECTORY="$here/mps/log"
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d && mps=1 && echo "run.sh: MPS daemon started"
    else
        echo "run.sh: GPU_MPS=1 but no nvidia-cuda-mps-control: running without MPS"
    fi
fi
MPIRUN="$prefix/bin/mpirun" TESTBIN="$here/tests" GPU_BENCH="$here/tests/gpu" \
    sh "$here/check_gpu.sh"
rc=$?
[ -n "$mps" ] && echo quit | nvidia-cuda-mps-control
exit $rc
EOF
chmod +x "$out/run.sh"
echo "bundle in $out ($(du -sh "$out" | cut -f1)); on the GPU machine: sh $out/run.sh"
