"""Python test macro: pytest inside a py_test, on the repository's .venv."""

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
