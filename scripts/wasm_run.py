#!/usr/bin/env python3
"""Runs a wasm32-wasip1 program (a test binary, an example) under wasmtime, for use as
cargo's runner. Needs the `wasmtime` package from PyPI (wasmtime-py, which ships the
wasmtime C library); `.ci/wasm.sh` installs a pinned version into a virtual environment:

    export CARGO_TARGET_WASM32_WASIP1_RUNNER="$VENV/bin/python $PWD/scripts/wasm_run.py"
    cargo test --target wasm32-wasip1 --test specials

Usage: wasm_run.py PROGRAM.wasm [ARGS...]

* The arguments after the .wasm path go to the program (its argv[0] is the .wasm path).
* The environment: the variables the tests and the crate read (VCVT_*, PROPTEST_*,
  RUST_BACKTRACE, RUST_TEST_*, CARGO_*), not the whole host environment.
* Files: the current directory (cargo runs tests in the package root) is preopened both as
  "." and under its absolute host path, so relative paths (`tests/data/...`) and absolute
  ones built from `env!("CARGO_MANIFEST_DIR")` both resolve. Nothing else of the host's
  file system is visible.
* The exit status is the program's: its `proc_exit` code, 0 when `_start` returns, and 134
  (as for SIGABRT natively) when it traps, which is how a panic ends under wasm32-wasip1
  (panic=abort); 2 for a usage error or a module that does not load.

WebAssembly SIMD (simd128) is on (wasmtime's default; set explicitly below). NaN
canonicalisation stays off, so NaN payloads behave as on the hardware.
"""

import os
import re
import sys

PASS_ENV = re.compile(r"^(VCVT_|PROPTEST_|RUST_BACKTRACE$|RUST_TEST_|CARGO_)")


def main(argv):
    if len(argv) < 2:
        print("usage: wasm_run.py PROGRAM.wasm [ARGS...]", file=sys.stderr)
        return 2
    try:
        import wasmtime
    except ImportError:
        print(
            "wasm_run.py: the `wasmtime` Python package is missing (pip install wasmtime; "
            "see .ci/wasm.sh for the pinned version)",
            file=sys.stderr,
        )
        return 2
    path, args = argv[1], argv[2:]

    config = wasmtime.Config()
    config.wasm_simd = True
    config.cranelift_nan_canonicalization = False
    engine = wasmtime.Engine(config)
    try:
        module = wasmtime.Module.from_file(engine, path)
    except (OSError, wasmtime.WasmtimeError) as e:
        print(f"wasm_run.py: {path}: {e}", file=sys.stderr)
        return 2

    wasi = wasmtime.WasiConfig()
    wasi.argv = [path, *args]
    wasi.env = [(k, v) for k, v in os.environ.items() if PASS_ENV.match(k)]
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    cwd = os.getcwd()
    wasi.preopen_dir(cwd, ".")
    wasi.preopen_dir(cwd, cwd)

    store = wasmtime.Store(engine)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    try:
        instance = linker.instantiate(store, module)
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as e:
        return e.code
    except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
        # A trap: `unreachable` after a panic (its message is already on stderr), an
        # out-of-bounds access, running out of memory; or a failed instantiation.
        print(f"wasm_run.py: {path}: {e}", file=sys.stderr)
        return 134
    return 0


if __name__ == "__main__":
    sys.stdout.flush()
    sys.exit(main(sys.argv))
