"""Runs a py_test's or py_binary's program on another virtualenv's interpreter.

Bazel 4 has one Python toolchain (the shared .venv); a package with a lock of
its own (tools/python/defs.bzl, `venv_pytest_test`) starts here on it, and this
replaces the process with `INTERPRETER PROGRAM ARGS...`. The stub's PYTHONPATH
(the runfiles' import roots) is inherited, so the program sees the same
repository packages with the other virtualenv's site-packages.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: venv_main.py INTERPRETER PROGRAM [ARGS...]")
    interpreter, program = (os.path.abspath(a) for a in sys.argv[1:3])
    os.execv(interpreter, [interpreter, program, *sys.argv[3:]])


if __name__ == "__main__":
    main()
