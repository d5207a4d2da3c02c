#!/usr/bin/env python3
"""Checks that include/vcvt.h matches the library: the same functions (by name and number of
parameters) in the header, in the Rust sources (`extern "C" fn`) and among the exported
symbols of the built library; the same constant values (enum constants and version macros);
the same fields, in the same order, in each struct.

usage: check_header.py <libvcvt.so or libvcvt.a>   (run from anywhere)
"""
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
header = (HERE / "include" / "vcvt.h").read_text()
rust = "\n".join(p.read_text() for p in sorted((HERE / "src").glob("*.rs")))
errors = []


def strip_c_comments(s):
    return re.sub(r"/\*.*?\*/", " ", s, flags=re.S)


C_ENUMS = {"vcvt_dtype", "vcvt_backend", "vcvt_status", "vcvt_overflow", "vcvt_nan"}
# Rust parameter/return types and the C types they stand for (enums travel as int).
RUST_TO_C = {
    "c_int": "int", "usize": "size_t", "f32": "float",
    "*const c_void": "const void*", "*mut c_void": "void*",
    "*const u8": "const uint8_t*", "*mut u8": "uint8_t*",
    "*const f32": "const float*", "*mut f32": "float*",
    "*mut usize": "size_t*", "*const c_char": "const char*",
    "*const vcvt_options": "const vcvt_options*",
    "vcvt_mx": "vcvt_mx", "vcvt_nvfp4": "vcvt_nvfp4", "vcvt_block_fp8": "vcvt_block_fp8",
    "*mut vcvt_converter": "vcvt_converter*", "*const vcvt_converter": "const vcvt_converter*",
}


def c_type(decl):
    """The type of a C parameter declaration (name dropped, enums as int, no spaces)."""
    decl = decl.strip()
    if decl == "void":
        return None
    m = re.match(r"(.*?)(\w+)$", decl)
    t = m.group(1) if m and m.group(1).strip() else decl
    t = re.sub(r"\s+", " ", t).strip().replace(" *", "*")
    return "int" if t in C_ENUMS else t


def c_sig(ret, params):
    ps = [c_type(p) for p in params.split(",") if p.strip()]
    return (c_type(ret + " x"), tuple(p for p in ps if p))


def rust_sig(params, ret):
    ps = [p.split(":", 1)[1].strip() for p in params.split(",") if p.strip()]
    ret = (ret or "").strip() or "()"
    return (RUST_TO_C.get(ret, ret), tuple(RUST_TO_C.get(p, "?" + p) for p in ps))


h = strip_c_comments(header)

# Functions: names, parameter types and return types.
h_funcs = {m.group(2): c_sig(m.group(1), m.group(3))
           for m in re.finditer(r"([\w ]+?\**)\s*\b(vcvt_\w+)\s*\(([^()]*)\)\s*;", h)}
r_funcs = {m.group(1): rust_sig(re.sub(r"//[^\n]*", "", m.group(2)), m.group(3))
           for m in re.finditer(r'extern "C" fn (vcvt_\w+)\s*\(([^()]*)\)\s*(?:->\s*([^{]+?))?\s*\{', rust)}
if not h_funcs or not r_funcs:
    sys.exit("no functions found: the patterns are out of date")
for name in sorted(set(h_funcs) | set(r_funcs)):
    if name not in h_funcs:
        errors.append(f"{name}: exported by the Rust sources, missing from vcvt.h")
    elif name not in r_funcs:
        errors.append(f"{name}: declared in vcvt.h, not defined in the Rust sources")
    elif h_funcs[name] != r_funcs[name]:
        errors.append(f"{name}: vcvt.h {h_funcs[name]}, Rust {r_funcs[name]}")

# Exported symbols of the built library.
if len(sys.argv) > 1:
    lib = sys.argv[1]
    args = ["nm", "-g", "--defined-only"] + (["-D"] if lib.endswith((".so", ".dylib")) else []) + [lib]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    syms = {m.group(1) for m in re.finditer(r"\s[TD]\s+_?(vcvt_\w+)$", out, flags=re.M)}
    for name in sorted(set(h_funcs) - syms):
        errors.append(f"{name}: declared in vcvt.h, not exported by {lib}")
    for name in sorted(syms - set(h_funcs)):
        errors.append(f"{name}: exported by {lib}, not declared in vcvt.h")
    print(f"{len(syms)} vcvt_* symbols exported by {lib}")

# Constants.
h_consts = {m.group(1): int(m.group(2))
            for m in re.finditer(r"\b(VCVT_[A-Z0-9_]+)\s*=\s*(-?\d+)", h)}
h_consts.update({m.group(1): int(m.group(2))
                 for m in re.finditer(r"#define\s+(VCVT_VERSION_(?:MAJOR|MINOR|PATCH))\s+(\d+)", h)})
r_consts = {m.group(1): int(m.group(2))
            for m in re.finditer(r"pub const (VCVT_[A-Z0-9_]+): c_int = (-?\d+);", rust)}
for name in sorted(set(h_consts) | set(r_consts)):
    if h_consts.get(name) != r_consts.get(name):
        errors.append(f"{name}: {h_consts.get(name)} in vcvt.h, {r_consts.get(name)} in Rust")

# Structs: field names in order (an array field as name[len]).
h_structs = {m.group(1): ["".join(f) for f in re.findall(r"(\w+)\s*(?:(\[)\s*(\d+)\s*(\]))?\s*;", m.group(2))]
             for m in re.finditer(r"typedef struct (vcvt_\w+)\s*\{([^}]*)\}", h)}
r_structs = {m.group(1): [n + (f"[{a}]" if a else "")
                          for n, a in re.findall(r"pub (\w+):\s*(?:\[\w+;\s*(\d+)\])?", m.group(2))]
             for m in re.finditer(r"pub struct (vcvt_\w+)\s*\{([^}]*)\}", rust)}
for name in sorted(set(h_structs) | set(r_structs)):
    if h_structs.get(name) != r_structs.get(name):
        errors.append(f"struct {name}: {h_structs.get(name)} in vcvt.h, {r_structs.get(name)} in Rust")

print(f"{len(h_funcs)} functions, {len(h_consts)} constants, {len(h_structs)} structs compared")
if errors:
    print("vcvt.h does not match the library:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("vcvt.h matches the library")
