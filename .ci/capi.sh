#!/usr/bin/env bash
# The C API (vcvt-capi): libvcvt as a user gets it, tested from C.
#
# 0. lints the crate (clippy, warnings denied);
# 1. builds the library once (release) and installs it into a temporary prefix by the
#    documented command (vcvt-capi/install.sh);
# 2. checks that include/vcvt.h matches the Rust sources and the exported symbols of both
#    libraries (vcvt-capi/check_header.py);
# 3. compiles the C tests with cc against the installed shared library (pkg-config) and runs
#    them on the committed known-answer vectors (tests/data), then once more built with
#    AddressSanitizer + UndefinedBehaviorSanitizer against the static library;
# 4. compiles the header as C++ (g++, -pedantic) and C (-std=c11 -pedantic);
# 5. builds and runs the examples in examples/c with pkg-config and with CMake
#    (find_package(vcvt)), as a user would.
# About a minute on the 2-core VM, most of it the release build.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
if ! dpkg -s cmake pkg-config g++ >/dev/null 2>&1; then
    apt-get update -q
    apt-get install -y -q cmake pkg-config g++
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
t0=$SECONDS

echo "--- cargo clippy -p vcvt-capi --all-targets (the root clippy step covers the library only)"
cargo clippy -p vcvt-capi --all-targets --locked -- -D warnings

echo "--- install (vcvt-capi/install.sh $prefix)"
vcvt-capi/install.sh "$prefix"
echo "    $((SECONDS - t0)) s"

echo "--- header vs exports"
python3 vcvt-capi/check_header.py "$prefix/lib/libvcvt.so"
python3 vcvt-capi/check_header.py "$prefix/lib/libvcvt.a"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags vcvt)
libs=$(pkg-config --libs vcvt)
static_libs=$(pkg-config --static --libs-only-l vcvt | sed 's/-lvcvt//')
warn=(-Wall -Wextra -Werror)

echo "--- C tests (cc, shared library via pkg-config)"
# shellcheck disable=SC2086
cc -std=c11 -O2 "${warn[@]}" $cflags vcvt-capi/tests/c/test_vcvt.c $libs \
    -Wl,-rpath,"$prefix/lib" -lpthread -lm -o "$work/test_vcvt"
"$work/test_vcvt" tests/data

echo "--- C tests under AddressSanitizer + UndefinedBehaviorSanitizer (static library)"
# shellcheck disable=SC2086
cc -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
    -fno-sanitize-recover=all "${warn[@]}" $cflags vcvt-capi/tests/c/test_vcvt.c \
    "$prefix/lib/libvcvt.a" $static_libs -o "$work/test_vcvt_san"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$work/test_vcvt_san" tests/data

echo "--- the header as C++ and as strict C"
for std in c++11 c++17 c++20; do
    # shellcheck disable=SC2086
    echo '#include <vcvt.h>' | g++ -std=$std -pedantic "${warn[@]}" $cflags -x c++ -fsyntax-only -
done
for std in c99 c11 c17; do
    # shellcheck disable=SC2086
    echo '#include <vcvt.h>' | cc -std=$std -pedantic "${warn[@]}" $cflags -x c -fsyntax-only -
done

echo "--- examples/c with pkg-config"
for ex in kv_cache_fp8 mxfp4_ggml_to_bf16; do
    # shellcheck disable=SC2086
    cc -std=c11 "${warn[@]}" $cflags "examples/c/$ex.c" $libs -Wl,-rpath,"$prefix/lib" -lm \
        -o "$work/$ex"
    "$work/$ex"
done
# shellcheck disable=SC2086
c++ -std=c++11 -pedantic "${warn[@]}" $cflags examples/c/hello.cpp $libs \
    -Wl,-rpath,"$prefix/lib" -o "$work/hello_cpp"
"$work/hello_cpp"

echo "--- examples/c with CMake (find_package(vcvt))"
cmake -S examples/c -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
"$work/build/kv_cache_fp8" | tail -n 1
"$work/build/mxfp4_ggml_to_bf16" | tail -n 1
"$work/build/hello_cpp" | head -n 1
# The static target needs no libvcvt.so at run time.
if ldd "$work/build/mxfp4_ggml_to_bf16" | grep -q libvcvt; then
    echo "vcvt::vcvt_static linked the shared library" >&2
    exit 1
fi
echo "C API checks passed in $((SECONDS - t0)) s"
