"""The .pyi stubs shipped in the wheel describe the functions the package has: same names,
same parameters (names, kinds, defaults), and every public function has a docstring."""

import ast
import inspect
from pathlib import Path

import pytest

import vcvt

MODULES = {"__init__": vcvt, "mx": vcvt.mx, "nvfp4": vcvt.nvfp4, "fp8": vcvt.fp8}


def stub_functions(name):
    path = Path(vcvt.__file__).with_name(f"{name}.pyi")
    assert path.exists(), f"{path} is not installed"
    tree = ast.parse(path.read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def params(fn: ast.FunctionDef):
    a = fn.args
    pos = [(p.arg, "pos") for p in a.args]
    kw = [(p.arg, "kw") for p in a.kwonlyargs]
    pos_defaults = [None] * (len(a.args) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    kw_defaults = [None if d is None else ast.literal_eval(d) for d in a.kw_defaults]
    return [(n, k, d) for (n, k), d in zip(pos + kw, pos_defaults + kw_defaults)]


def runtime_params(f):
    out = []
    for p in inspect.signature(f).parameters.values():
        kind = "kw" if p.kind == p.KEYWORD_ONLY else "pos"
        d = None if p.default is p.empty else p.default
        out.append((p.name, kind, d))
    return out


@pytest.mark.parametrize("name", list(MODULES))
def test_stubs_match(name):
    mod = MODULES[name]
    stubs = stub_functions(name)
    public = [n for n in getattr(mod, "__all__", []) if callable(getattr(mod, n)) and inspect.isfunction(getattr(mod, n))]
    assert public
    for fname in public:
        f = getattr(mod, fname)
        assert fname in stubs, f"{name}.pyi lacks {fname}"
        assert params(stubs[fname]) == runtime_params(f), fname
        assert f.__doc__ and len(f.__doc__.strip()) > 20, f"{fname} has no docstring"
