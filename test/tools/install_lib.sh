# Helpers and parts of test/tools/install.sh (sourced, bash).

# make install into DESTDIR $1/stage, then the prefix moved to $1/moved/rail
# (nothing of it left at the configured place): sets P to the moved prefix.
install_moved() {
    local stage=$1/stage bin
    (cd "$top_builddir" && ${MAKE:-make} install DESTDIR="$stage") >"$1/install.log" 2>&1 || return 1
    bin=$(dirname "$(find "$stage" -path '*/bin/mpicc' | head -1)")
    [ -n "$bin" ] && [ "$bin" != . ] || return 1
    mkdir -p "$1/moved"
    mv "$(dirname "$bin")" "$1/moved/rail"
    P=$1/moved/rail
    MODDIR=$P/share/modulefiles
    VERSION=$("$P/bin/mpicc" --showme:version | sed 's/^mpicc: Rail MPI \([^ ]*\) .*/\1/')
}

write_program() {
    cat >"$1" <<'EOC'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int size, rank, len;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_library_version(v, &len);
    if (rank == 0)
        printf("size %d %.9s\n", size, v);
    MPI_Finalize();
    return 0;
}
EOC
}

# check_runs PROGRAM MPIRUN WHAT: 2 ranks of Rail MPI, no LD_LIBRARY_PATH.
check_runs() {
    local out
    ldd "$1" | grep -q "libmpi.so.* => $P/lib/" || fail "$3: the program does not use $P/lib's libmpi: $(ldd "$1" | grep mpi)"
    out=$(env -u LD_LIBRARY_PATH RAILRT_JOBID=$$ timeout -k 5 60 "$2" -n 2 "$1" 2>&1) || fail "$3: the program failed: $out"
    echo "$out" | grep -q "^size 2 Rail MPI" || fail "$3: output '$out'"
}

part_pkgconfig() {
    local pc flags inc lib
    command -v pkg-config >/dev/null || { echo "SKIP: install: pkg-config (not installed)"; return; }
    for pc in mpi mpi-c mpi-cxx rail ompi-c ompi-cxx; do
        flags=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs $pc) || fail "pkg-config $pc failed"
        # (a moved .pc file says ${pcfiledir}/../..: compare the real paths)
        inc=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-I//p' | head -1)
        lib=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-L//p' | head -1)
        [ "$(readlink -f "$inc")" = "$P/include" ] && [ "$(readlink -f "$lib")" = "$P/lib" ] &&
            echo "$flags" | grep -q -- "-lmpi" || fail "pkg-config $pc gives '$flags', not Rail's flags"
    done
    PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --modversion mpi | grep -q "^$VERSION\$" || fail "pkg-config mpi: version"
    if [ -x "$P/bin/mpifort" ]; then
        PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --libs mpi-fort | grep -q -- "-L$P/lib" || fail "pkg-config mpi-fort"
    else
        echo "SKIP: install: pkg-config mpi-fort (no Fortran bindings in this build)"
    fi
    # shellcheck disable=SC2046
    cc -o "$T/p_pc" "$T/p.c" $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs mpi) ||
        fail "cc with pkg-config mpi's flags could not build"
    check_runs "$T/p_pc" "$P/bin/mpirun" "pkg-config mpi"
}

part_man() {
    command -v man >/dev/null || { echo "SKIP: install: man pages (man is not installed)"; return; }
    local out
    out=$(MANWIDTH=200 man -M "$P/share/man" 3 MPI_Send 2>&1) || fail "man -M 3 MPI_Send: $out"
    for want in "int MPI_Send(const void \*buf, int count" "MPI_Send_c(.*MPI_Count count" \
        "USE mpi_f08" "TYPE(MPI_Comm), INTENT(IN) :: comm" "MPI_ERR_RANK" "btl"; do
        echo "$out" | grep -q -- "$want" || fail "man 3 MPI_Send lacks '$want'"
    done
    MANWIDTH=200 man -M "$P/share/man" 3 MPI_Allreduce_c 2>&1 | grep -q "MPI_Allreduce_c" ||
        fail "man 3 MPI_Allreduce_c (the _c page sources MPI_Allreduce's)"
    for p in mpirun mpiexec mpicc mpicxx railinfo raild; do
        MANWIDTH=200 man -M "$P/share/man" 1 $p 2>&1 | grep -q "Rail MPI" || fail "man 1 $p"
    done
    [ "$(ls "$P/share/man/man3" | wc -l)" -gt 400 ] || fail "fewer than 400 pages in man3"
}

# modules_load KIND INIT: in a fresh bash with the module command of KIND
# (lmod, tcl), load rail-mpi, then build and run with what it set.
modules_load() {
    local kind=$1 init=$2 out
    out=$(env -i HOME="$T" PATH=/usr/bin:/bin TERM=dumb bash --norc --noprofile -c "
        . '$init' >/dev/null 2>&1
        module use '$MODDIR' || exit 10
        module load rail-mpi || exit 11
        [ \"\$(command -v mpicc)\" = '$P/bin/mpicc' ] || { echo \"mpicc: \$(command -v mpicc)\"; exit 12; }
        [ \"\$MPI_HOME\" = '$P' ] || { echo \"MPI_HOME=\$MPI_HOME\"; exit 13; }
        case \":\$PKG_CONFIG_PATH:\" in *':$P/lib/pkgconfig:'*) ;; *) echo PKG_CONFIG_PATH; exit 14 ;; esac
        case \":\$CMAKE_PREFIX_PATH:\" in *':$P:'*) ;; *) echo CMAKE_PREFIX_PATH; exit 15 ;; esac
        [ -z \"\$LD_LIBRARY_PATH\" ] || { echo \"LD_LIBRARY_PATH set with rpath on\"; exit 16; }
        man -w mpicc | grep -q '^$P/share/man/man1/mpicc.1' || { echo \"man mpicc: \$(man -w mpicc)\"; exit 17; }
        mpicc -o '$T/p_$kind' '$T/p.c' || exit 18
        RAILRT_JOBID=\$\$ timeout -k 5 60 mpirun -n 2 '$T/p_$kind' || exit 19
        if command -v mpifort >/dev/null; then
            printf 'program f\n  use mpi_f08\n  call MPI_Init()\n  call MPI_Finalize()\n  print *, \"fortran ok\"\nend program\n' >'$T/f.f90'
            mpifort -o '$T/f_$kind' '$T/f.f90' && timeout 60 mpirun -n 2 '$T/f_$kind' || exit 20
        else
            echo 'no mpifort'
        fi
        module unload rail-mpi
        command -v mpicc >/dev/null && [ \"\$(command -v mpicc)\" = '$P/bin/mpicc' ] && exit 21
        # Beside another MPI's module: refused.
        module use '$T/othermpi'
        module load openmpi >/dev/null 2>&1 || exit 22
        module load rail-mpi 2>'$T/conflict.err' && exit 23
        exit 0" 2>&1)
    case $? in
    0) ;;
    23) fail "$kind: rail-mpi loaded beside another MPI's module" ;;
    *) fail "$kind module (status $?): $out" ;;
    esac
    grep -qi "conflict\|openmpi" "$T/conflict.err" || fail "$kind: no message on a conflict: $(cat "$T/conflict.err")"
    echo "$out" | grep -q "size 2 Rail MPI" || fail "$kind: output '$out'"
    if echo "$out" | grep -q "no mpifort"; then
        echo "SKIP: install: $kind module: the Fortran program (no mpifort in this build)"
    else
        [ "$(echo "$out" | grep -c 'fortran ok')" -eq 2 ] || fail "$kind: Fortran output '$out'"
    fi
}

part_modules() {
    local lmod=/usr/share/lmod/lmod/init/bash tclmod=/usr/share/modules/init/bash
    [ -f "$MODDIR/rail-mpi/$VERSION.lua" ] && [ -f "$MODDIR/rail-mpi/$VERSION" ] || fail "modulefiles not installed"
    # A stand-in for another MPI's module, in both languages.
    mkdir -p "$T/othermpi/openmpi"
    printf '#%%Module1.0\nsetenv OTHER_MPI 1\n' >"$T/othermpi/openmpi/4.1"
    if [ -f "$lmod" ]; then
        modules_load lmod "$lmod"
        # Lmod reads the Tcl one too: alone in its directory.
        mv "$MODDIR/rail-mpi/$VERSION.lua" "$T/"
        modules_load lmod-tcl "$lmod"
        mv "$T/$VERSION.lua" "$MODDIR/rail-mpi/"
    else
        echo "SKIP: install: Lmod modulefile (lmod is not installed: apt-get install lmod)"
    fi
    if [ -f "$tclmod" ]; then
        modules_load tcl "$tclmod"
    else
        echo "SKIP: install: environment-modules (not installed; Debian's conflicts with lmod, which CI installs; the Tcl modulefile was loaded by Lmod)"
    fi
}

part_cmake() {
    command -v cmake >/dev/null || { echo "SKIP: install: CMake find_package(MPI) (cmake is not installed)"; return; }
    local d=$T/cmake langs="C CXX" comps="C CXX"
    mkdir -p "$d/src"
    cp "$T/p.c" "$d/src/p.c"
    printf '#include <mpi.h>\n#include <cstdio>\nint main(int c, char **v) { int s; MPI_Init(&c, &v); MPI_Comm_size(MPI_COMM_WORLD, &s); std::printf("cxx %%d\\n", s); MPI_Finalize(); }\n' >"$d/src/q.cc"
    cat >"$d/src/CMakeLists.txt" <<'EOC'
cmake_minimum_required(VERSION 3.13)
project(railfind C CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
message(STATUS "RAILTEST MPIEXEC=${MPIEXEC_EXECUTABLE}")
message(STATUS "RAILTEST C_COMPILER=${MPI_C_COMPILER}")
message(STATUS "RAILTEST CXX_COMPILER=${MPI_CXX_COMPILER}")
message(STATUS "RAILTEST C_INCLUDE=${MPI_C_INCLUDE_DIRS}")
add_executable(p p.c)
target_link_libraries(p MPI::MPI_C)
add_executable(q q.cc)
target_link_libraries(q MPI::MPI_CXX)
EOC
    cmake_case path "PATH=$P/bin:/usr/bin:/bin"
    cmake_case home "PATH=/usr/bin:/bin" -DMPI_HOME="$P"
    cmake_case compiler "PATH=/usr/bin:/bin MPI_HOME=$P" -DMPI_C_COMPILER="$P/bin/mpicc" -DMPI_CXX_COMPILER="$P/bin/mpicxx"
    if [ -x "$P/bin/mpifort" ]; then
        cmake_fortran
    else
        echo "SKIP: install: CMake Fortran (no Fortran bindings in this build)"
    fi
}

# FindMPI's Fortran component from PATH: it must take our wrapper, see the
# mpi_f08 module, and build a program that runs under the mpiexec it found.
cmake_fortran() {
    local d=$T/cmake-f b=$T/cmake-f/build log out
    mkdir -p "$d/src" "$b"
    log=$b/log
    printf 'program f\n  use mpi_f08\n  integer :: s\n  call MPI_Init()\n  call MPI_Comm_size(MPI_COMM_WORLD, s)\n  print "(a,i0)", "fortran ", s\n  call MPI_Finalize()\nend program\n' >"$d/src/f.f90"
    cat >"$d/src/CMakeLists.txt" <<'EOC'
cmake_minimum_required(VERSION 3.13)
project(railfort Fortran)
find_package(MPI REQUIRED COMPONENTS Fortran)
message(STATUS "RAILTEST MPIEXEC=${MPIEXEC_EXECUTABLE}")
message(STATUS "RAILTEST Fortran_COMPILER=${MPI_Fortran_COMPILER}")
message(STATUS "RAILTEST F08=${MPI_Fortran_HAVE_F08_MODULE}")
add_executable(f f.f90)
target_link_libraries(f MPI::MPI_Fortran)
EOC
    (cd "$b" && env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" cmake ../src) >"$log" 2>&1 ||
        { fail "cmake Fortran: $(tail -5 "$log")"; return; }
    grep -q "RAILTEST MPIEXEC=$P/bin/mpiexec\$" "$log" || fail "cmake Fortran: $(grep 'RAILTEST MPIEXEC' "$log")"
    # FindMPI tries mpif90 first: ours, a link to mpifort
    grep -qE "RAILTEST Fortran_COMPILER=$P/bin/mpif(ort|90|77)\$" "$log" ||
        fail "cmake Fortran: $(grep 'RAILTEST Fortran_COMPILER' "$log")"
    grep -q "RAILTEST F08=TRUE\$" "$log" || fail "cmake Fortran: no mpi_f08 ($(grep 'RAILTEST F08' "$log"))"
    (cd "$b" && env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" cmake --build .) >>"$log" 2>&1 ||
        { fail "cmake --build Fortran: $(tail -5 "$log")"; return; }
    out=$(RAILRT_JOBID=$$ timeout -k 5 60 "$P/bin/mpiexec" -n 2 "$b/f" 2>&1)
    [ "$(echo "$out" | grep -c '^fortran 2$')" -eq 2 ] || fail "cmake Fortran: '$out'"
}

# cmake_case NAME ENV [cmake args]: configure, check what FindMPI chose,
# build, run both programs with the mpiexec it found.
cmake_case() {
    local name=$1 envs=$2 b=$T/cmake/build-$1 log out
    shift 2
    mkdir -p "$b"
    log=$b/log
    # shellcheck disable=SC2086
    (cd "$b" && env -i HOME="$T" $envs cmake "$@" ../src) >"$log" 2>&1 || fail "cmake ($name): $(tail -5 "$log")"
    grep -q "RAILTEST MPIEXEC=$P/bin/mpiexec\$" "$log" || fail "cmake ($name): $(grep 'RAILTEST MPIEXEC' "$log")"
    grep -q "RAILTEST C_COMPILER=$P/bin/mpicc\$" "$log" || fail "cmake ($name): $(grep 'RAILTEST C_COMPILER' "$log")"
    grep -q "RAILTEST CXX_COMPILER=$P/bin/mpicxx\$" "$log" || fail "cmake ($name): $(grep 'RAILTEST CXX_COMPILER' "$log")"
    grep -q "RAILTEST C_INCLUDE=$P/include\$" "$log" || fail "cmake ($name): $(grep 'RAILTEST C_INCLUDE' "$log")"
    (cd "$b" && env -i HOME="$T" PATH=/usr/bin:/bin cmake --build .) >>"$log" 2>&1 || fail "cmake --build ($name): $(tail -5 "$log")"
    check_runs "$b/p" "$P/bin/mpiexec" "cmake ($name) C"
    out=$(RAILRT_JOBID=$$ timeout -k 5 60 "$P/bin/mpiexec" -n 2 "$b/q" 2>&1)
    [ "$(echo "$out" | grep -c '^cxx 2$')" -eq 2 ] || fail "cmake ($name) C++: '$out'"
}

part_meson() {
    command -v meson >/dev/null && command -v ninja >/dev/null ||
        { echo "SKIP: install: Meson dependency('mpi') (meson or ninja is not installed)"; return; }
    local d=$T/meson log=$T/meson/log
    mkdir -p "$d/src"
    cp "$T/p.c" "$d/src/p.c"
    # pkg-config (what Meson tries first: Rail's ompi-c.pc), then the
    # config-tool method (mpicc --showme:compile/link/version from PATH).
    for how in pkg-config config-tool; do
        rm -rf "$d/build"
        cat >"$d/src/meson.build" <<EOC
project('railfind', 'c')
mpi = dependency('mpi', language: 'c', method: '$how')
message('RAILTEST MPI version ' + mpi.version())
executable('p', 'p.c', dependencies: mpi)
EOC
        if [ $how = pkg-config ]; then
            (cd "$d/src" && env -i HOME="$T" PATH=/usr/bin:/bin PKG_CONFIG_PATH="$P/lib/pkgconfig" meson setup ../build) >"$log" 2>&1
        else
            (cd "$d/src" && env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" meson setup ../build) >"$log" 2>&1
        fi || fail "meson setup ($how): $(tail -5 "$log")"
        grep -q "RAILTEST MPI version $VERSION" "$log" || fail "meson ($how) found another MPI: $(grep -i 'mpi' "$log" | head -3)"
        (cd "$d/build" && ninja) >>"$log" 2>&1 || fail "meson build ($how): $(tail -5 "$log")"
        check_runs "$d/build/p" "$P/bin/mpirun" "meson ($how)"
    done
}
