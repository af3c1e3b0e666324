#!/bin/sh
# Install what building and testing Rail MPI needs on Debian 12 (run as root,
# or through sudo).  The CUDA toolkit is optional and not installed here:
# configure finds an existing one in PATH, $CUDA_HOME or /usr/local/cuda.
set -e
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential autoconf automake libtool pkg-config python3 \
    libpmix-dev libpmix-bin libhwloc-dev libfabric-dev libibverbs-dev librdmacm-dev \
    iproute2 procps psmisc util-linux binutils ca-certificates openmpi-bin \
    clang libclang-rt-14-dev >/dev/null
# For the tests of the places users work (test/tools/install.sh,
# test/runtime/rte_slurm.sh): Slurm's daemons and srun (the test starts a
# throwaway slurmctld/slurmd of its own: auth/none, no munge), Lmod (it
# reads the Tcl modulefile too; Debian's environment-modules conflicts with
# it), Meson, CMake and man.  About 80 s on a fresh machine.
$SUDO apt-get install -y -qq --no-install-recommends \
    slurmd slurmctld slurm-client slurm-wlm-basic-plugins lmod meson ninja-build cmake \
    man-db >/dev/null
# For side-by-side benchmarks (bench/): the peers and gnuplot.
if [ "${RAIL_DEPS_BENCH:-0}" = 1 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends \
        openmpi-bin libopenmpi-dev mpich libmpich-dev gnuplot-nox >/dev/null
fi
echo "Rail MPI build dependencies are installed."
