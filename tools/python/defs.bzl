"""Python macros: the shape of a package, and pytest inside a py_test on the .venv."""

def pytest_test(name, srcs, deps = [], data = [], args = [], **kwargs):
    """A py_test that runs pytest over `srcs` (files named test_*.py are collected).

    Args:
      name: target name.
      srcs: test modules, conftest.py and helpers.
      deps: py_library targets under test.
      data: runtime files.
      args: extra pytest arguments.
      **kwargs: size, tags, timeout, env, ...
    """
    tests = [s for s in srcs if s.rpartition("/")[2].startswith("test_")]
    native.py_test(
        name = name,
        srcs = srcs + ["//tools/python:pytest_main.py"],
        main = "//tools/python:pytest_main.py",
        args = args + ["$(location %s)" % t for t in tests],
        data = data,
        deps = deps,
        python_version = "PY3",
        **kwargs
    )

def python_package(name, package, deps = [], exclude = [], visibility = ["//visibility:public"]):
    """The three targets every Python package of the repository declares.

    `<name>`: the py_library of `src/<package>/` (with its py.typed), imported as
    `<package>`; `lint_sources`: its sources, tests and benchmarks for
    //tools/lint; `package_files`: what `pip install` of the directory reads
    (//tools/python:install_alone_test). A new package (an adapter, a tool
    source) starts from one call, so every package has the same shape.

    Args:
      name: the library's target name.
      package: the top-level Python package under src/.
      deps: py_library targets the package imports.
      exclude: files under src/<package>/ that belong to another library.
      visibility: of all three targets.
    """
    native.py_library(
        name = name,
        srcs = native.glob(["src/%s/**/*.py" % package], exclude = exclude),
        data = native.glob(["src/%s/**/py.typed" % package]),
        imports = ["src"],
        deps = deps,
        visibility = visibility,
    )
    native.filegroup(
        name = "lint_sources",
        srcs = native.glob(["src/**/*.py", "tests/**/*.py", "bench/**/*.py"]),
        visibility = visibility,
    )
    native.filegroup(
        name = "package_files",
        srcs = native.glob(["src/**"]) + ["README.md", "pyproject.toml"],
        visibility = visibility,
    )

def venv_pytest_test(name, interpreter, srcs, deps = [], data = [], args = [], **kwargs):
    """`pytest_test` on a package's own virtualenv (`venv_python` in local_python.bzl).

    Args:
      name: target name.
      interpreter: the virtualenv's `bin/python` label, e.g. "@google_adk_python//:bin/python".
      srcs: test modules, conftest.py and helpers.
      deps: py_library targets under test.
      data: runtime files.
      args: extra pytest arguments.
      **kwargs: size, tags, timeout, env, ...
    """
    tests = [s for s in srcs if s.rpartition("/")[2].startswith("test_")]
    native.py_test(
        name = name,
        srcs = srcs + ["//tools/python:pytest_main.py", "//tools/python:venv_main.py"],
        main = "//tools/python:venv_main.py",
        args = [
            "$(rootpath %s)" % interpreter,
            "$(rootpath //tools/python:pytest_main.py)",
        ] + args + ["$(location %s)" % t for t in tests],
        data = data + [interpreter],
        deps = deps,
        python_version = "PY3",
        **kwargs
    )

def venv_py_binary(name, interpreter, main, srcs, deps = [], data = [], **kwargs):
    """A py_binary whose `main` runs on a package's own virtualenv (see venv_pytest_test)."""
    native.py_binary(
        name = name,
        srcs = srcs + ["//tools/python:venv_main.py"],
        main = "//tools/python:venv_main.py",
        args = ["$(rootpath %s)" % interpreter, "$(rootpath %s)" % main],
        data = data + [interpreter],
        deps = deps,
        python_version = "PY3",
        **kwargs
    )
