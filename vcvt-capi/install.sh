#!/bin/sh
# Builds libvcvt (release) and installs it with its header, pkg-config file and CMake
# package:
#
#   vcvt-capi/install.sh [PREFIX]          (default PREFIX: /usr/local; LIBDIR=<dir> to
#                                           install the libraries elsewhere than PREFIX/lib)
#
#   PREFIX/include/vcvt.h
#   LIBDIR/libvcvt.so.X.Y.Z, libvcvt.so.<abi> -> it, libvcvt.so -> libvcvt.so.<abi>
#   LIBDIR/libvcvt.a
#   LIBDIR/pkgconfig/vcvt.pc
#   LIBDIR/cmake/vcvt/vcvtConfig.cmake, vcvtConfigVersion.cmake
#
# Needs cargo (Rust 1.89 or newer), a C toolchain's linker and POSIX sh. Writes ELF shared
# library names (Linux, the BSDs); tested on Linux x86-64 (Debian 12).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=${1:-${PREFIX:-/usr/local}}
case $PREFIX in /*) ;; *) PREFIX=$(pwd)/$PREFIX ;; esac
LIBDIR=${LIBDIR:-$PREFIX/lib}

cargo build --release --locked -p vcvt-capi --manifest-path "$here/../Cargo.toml"
# Where cargo put the outputs (CARGO_TARGET_DIR and .cargo/config included).
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$here/../Cargo.toml" |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
out=$target/release

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/Cargo.toml" | head -n 1)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then abi=$major.$minor; else abi=$major; fi
soname=libvcvt.so.$abi
# Linux (x86-64/aarch64 glibc) values of `rustc --print native-static-libs`.
private_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
private_libs_cmake="gcc_s;util;rt;pthread;m;dl;c"
sizeof_void_p=$(getconf LONG_BIT 2>/dev/null || echo 64)
sizeof_void_p=$((sizeof_void_p / 8))

install -d "$PREFIX/include" "$LIBDIR/pkgconfig" "$LIBDIR/cmake/vcvt"
install -m 644 "$here/include/vcvt.h" "$PREFIX/include/vcvt.h"
install -m 755 "$out/libvcvt.so" "$LIBDIR/libvcvt.so.$version"
ln -sf "libvcvt.so.$version" "$LIBDIR/$soname"
ln -sf "$soname" "$LIBDIR/libvcvt.so"
install -m 644 "$out/libvcvt.a" "$LIBDIR/libvcvt.a"

# The CMake package finds the prefix from its own location: LIBDIR/cmake/vcvt/../.. is
# LIBDIR, and the prefix is LIBDIR/.. for PREFIX/lib (relocatable), else its absolute path.
case $LIBDIR in
"$PREFIX"/*) libdir_to_prefix=$(echo "${LIBDIR#"$PREFIX"/}" | sed 's|[^/][^/]*|..|g') ;;
*) libdir_to_prefix=$PREFIX ;;
esac

subst() {
    sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LIBDIR@|$LIBDIR|g" -e "s|@VERSION@|$version|g" \
        -e "s|@MAJOR@|$major|g" -e "s|@MINOR@|$minor|g" -e "s|@SONAME@|$soname|g" \
        -e "s|@SHARED_FILE@|libvcvt.so.$version|g" -e "s|@PRIVATE_LIBS@|$private_libs|g" \
        -e "s|@PRIVATE_LIBS_CMAKE@|$private_libs_cmake|g" \
        -e "s|@LIBDIR_TO_PREFIX@|$libdir_to_prefix|g" -e "s|@SIZEOF_VOID_P@|$sizeof_void_p|g" \
        "$1" >"$2"
    chmod 644 "$2"
}
subst "$here/cmake/vcvt.pc.in" "$LIBDIR/pkgconfig/vcvt.pc"
subst "$here/cmake/vcvtConfig.cmake.in" "$LIBDIR/cmake/vcvt/vcvtConfig.cmake"
subst "$here/cmake/vcvtConfigVersion.cmake.in" "$LIBDIR/cmake/vcvt/vcvtConfigVersion.cmake"

echo "installed libvcvt $version into $PREFIX (libraries in $LIBDIR)"
