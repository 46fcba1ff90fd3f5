# -*- Python -*-
"""lit configuration for mlir_sym's FileCheck tests.

Run from the repository root with the venv active:  `lit test/`  (or `lit -sv test/`, `lit -v test/Dialect`).
The tests are the `.mlir` files under test/ (test/python holds the pytest suite and is not lit's).
lit maps `lit test/X` to `<suite root>/test/X`, so the suite's source root is this directory; outputs
(`%t`) go under build/lit/, which git ignores.
"""
import os
import shutil
import sys

import lit.formats

config.name = "mlir_sym"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "build", "lit")
# Directory names never searched: the pytest suite (test/python and the package's python/), build
# outputs, the venv and tool state.
config.excludes = ["python", "build", "Output", "Inputs", ".venv", ".git", "benchmarks", "mlir_sym.egg-info"]

python = sys.executable  # lit's interpreter: the venv's when lit comes from the venv
bindir = os.path.dirname(python)


def _tool(name, fallback):
    path = os.path.join(bindir, name)
    if os.path.exists(path):
        return path
    return shutil.which(name) or fallback


symopt = _tool("symopt", f"{python} -m mlir_sym.tools.symopt")
filecheck = _tool("filecheck", f"{python} -m filecheck")


def _word(name):
    # A tool name as a whole word of a RUN line, not part of a path, flag or file name.
    return r"(?<![\w./%-])" + name + r"(?![\w.-])"


config.substitutions += [
    ("%PYTHON", python),
    (_word("symopt"), symopt),
    (_word("filecheck"), filecheck),
    (_word("FileCheck"), filecheck),
    (_word("python"), python),
]

config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
for var in ("HOME", "TMPDIR", "PYTHONPATH", "LD_LIBRARY_PATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
