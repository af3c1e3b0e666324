#!/bin/sh
# The MPICH test suite's source for test/conformance/mpich_suite.sh: MPICH
# 4.0.2's tarball as Debian 12 ships it, fetched from Debian's archive and
# kept, once its SHA-256 is checked, in the suite's directory of the build
# tree (RAILTEST_MPICH_SUITE_DIR, default conformance/mpich), where it stays
# between runs; RAILTEST_MPICH_TARBALL names a copy of it elsewhere.
#
#   fetch_mpich_suite.sh                 `make fetch-mpich-suite` (CI runs it
#                                        first): a checked tarball, fetched
#                                        if not here; exit 0, else 1
#   fetch_mpich_suite.sh --if-reachable  `make check`, before the suite: the
#                                        same where Debian's archive answers
#                                        within 10 s; says why not, exits 0
#   fetch_mpich_suite.sh --check         the suite: "VERSION TARBALL" of the
#                                        checked tarball; exit 2 (saying where
#                                        it would be) when it is not here, 1
#                                        when its SHA-256 differs
ver=4.0.2
tarball=mpich_$ver.orig.tar.xz
sha256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
url=http://deb.debian.org/debian/pool/main/m/mpich/$tarball
bld=$(cd "${top_builddir:-.}" && pwd)
work=${RAILTEST_MPICH_SUITE_DIR:-$bld/conformance/mpich}
tb=${RAILTEST_MPICH_TARBALL:-$work/$tarball}
mode=${1:-fetch}

checked() {
    echo "$sha256  $tb" | sha256sum -c --quiet - >/dev/null 2>&1
}

# Whether Debian's archive answers for the tarball within 10 s.
reachable() {
    python3 - "$url" <<'EOF'
import sys, urllib.request
try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=10)
except Exception as e:
    print(e)
    sys.exit(1)
EOF
}

# Download to TARBALL.part, check, then rename; a failed one leaves nothing.
download() {
    mkdir -p "$(dirname "$tb")" || return 1
    echo "fetching $url"
    python3 - "$url" "$tb.part" <<'EOF' || { rm -f "$tb.part"; return 1; }
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            f.write(b)
except Exception as e:
    print(f"{sys.argv[1]}: {e}")
    sys.exit(1)
EOF
    if ! echo "$sha256  $tb.part" | sha256sum -c --quiet - >/dev/null 2>&1; then
        echo "$url: SHA-256 differs from Debian's ($sha256)"
        rm -f "$tb.part"
        return 1
    fi
    mv "$tb.part" "$tb" && echo "$tb: SHA-256 checked"
}

case "$mode" in
--check)
    [ -f "$tb" ] || { echo "$tb"; exit 2; }
    checked || { echo "$tb: SHA-256 differs from Debian's ($sha256)"; exit 1; }
    echo "$ver $tb"
    ;;
--if-reachable)
    [ "${RAILTEST_MPICH_SUITE:-1}" = 0 ] && exit 0
    [ -f "$tb" ] && exit 0      # (checked by the suite)
    if ! command -v python3 >/dev/null 2>&1; then
        echo "MPICH test suite: not fetched (python3 is not installed)"
    elif ! why=$(reachable); then
        echo "MPICH test suite: not fetched, $url does not answer ($why)"
    elif ! download; then
        echo "MPICH test suite: not fetched"
    fi
    exit 0
    ;;
fetch)
    if [ -f "$tb" ]; then
        checked && { echo "$tb: SHA-256 checked"; exit 0; }
        echo "$tb: SHA-256 differs from Debian's ($sha256): remove it and fetch again"
        exit 1
    fi
    command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 1; }
    download || { echo "MPICH test suite: $url could not be fetched"; exit 1; }
    ;;
*)
    echo "usage: $0 [--if-reachable | --check]" >&2
    exit 2
    ;;
esac
