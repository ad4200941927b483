"""@local_python: the host interpreter (with pip packages) as the py toolchain.

Interpreter: $DEX_AGENTS_PYTHON, else <workspace>/.venv/bin/python, else python3 on PATH.
Also exposes console scripts from the interpreter's bin dir (protoc plugins, ruff)
and a grpc_tools.protoc wrapper. Nothing is downloaded.
"""

_SCRIPTS = ["protoc-gen-python_betterproto2", "ruff", "mypy"]

def _local_python_impl(rctx):
    python = rctx.os.environ.get("DEX_AGENTS_PYTHON", "")
    venv = rctx.path(Label("@//:WORKSPACE")).dirname.get_child(".venv").get_child("bin").get_child("python")
    if not python and venv.exists:
        python = str(venv)
    if not python:
        found = rctx.which("python3")
        if not found:
            fail("python3 not found on PATH; set DEX_AGENTS_PYTHON")
        python = str(found)

    # sys.executable resolves pyenv shims but keeps a venv's bin/python.
    res = rctx.execute([python, "-c", "import sys; print(sys.executable)"])
    if res.return_code != 0:
        fail("cannot run %s: %s" % (python, res.stderr))
    python = res.stdout.strip()
    bindir = python.rpartition("/")[0]

    scripts = []
    for s in _SCRIPTS:
        p = rctx.path(bindir + "/" + s)
        if p.exists:
            rctx.symlink(p, "bin/" + s)
            scripts.append("bin/" + s)
    rctx.file("bin/grpc_tools_protoc", "#!/bin/sh\nexec '%s' -m grpc_tools.protoc \"$@\"\n" % python, executable = True)
    scripts.append("bin/grpc_tools_protoc")

    rctx.file("BUILD.bazel", """
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

package(default_visibility = ["//visibility:public"])

py_runtime(
    name = "py3_runtime",
    interpreter_path = "{python}",
    python_version = "PY3",
    # Bazel 4's stub defaults to "#!/usr/bin/env python", absent on Debian
    # (and from PATH under --incompatible_strict_action_env).
    stub_shebang = "#!{python}",
)

py_runtime_pair(
    name = "runtime_pair",
    py3_runtime = ":py3_runtime",
)

toolchain(
    name = "toolchain",
    toolchain = ":runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)

exports_files({scripts})
""".format(python = python, scripts = repr(scripts)))

local_python = repository_rule(
    implementation = _local_python_impl,
    environ = ["DEX_AGENTS_PYTHON", "PATH"],
    local = True,
)

def _venv_python_impl(rctx):
    root = rctx.path(Label("@//:WORKSPACE")).dirname
    python = str(root) + "/" + rctx.attr.venv + "/bin/python"

    # Reading the lock makes a new lock refetch this repository, so the scripts'
    # text (and every test that runs them) changes with it.
    stamp = hash(rctx.read(rctx.attr.lock))
    check = (
        "#!/bin/sh\n# lock %s\npython='%s'\n" % (stamp, python) +
        "[ -x \"$python\" ] || { echo \"$python is missing: run tools/bootstrap.sh\" >&2; exit 1; }\n"
    )
    rctx.file("bin/python", check + "exec \"$python\" \"$@\"\n", executable = True)
    rctx.file("bin/mypy", check + "exec \"$python\" -m mypy \"$@\"\n", executable = True)
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

exports_files(["bin/python", "bin/mypy"])
""")

venv_python = repository_rule(
    implementation = _venv_python_impl,
    doc = """A package's own virtualenv (tools/bootstrap.sh makes .venvs/<package> from
its requirements.lock) as `bin/python` and `bin/mypy` scripts. It is no toolchain:
`venv_pytest_test` and `venv_py_binary` (defs.bzl) run their program on it.""",
    attrs = {
        "venv": attr.string(mandatory = True, doc = "The virtualenv, relative to the workspace."),
        "lock": attr.label(mandatory = True, allow_single_file = True),
    },
    local = True,
)
