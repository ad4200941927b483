"""TypeScript macros: the shape of a workspace package under typescript/."""

def ts_package(name, deps = [], data = [], **kwargs):
    """The two targets every TypeScript package of the repository declares.

    `package_files`: its sources, package.json and tsconfig.json, which other
    packages' tests and the Python tests that build it stage; `<name>`: an sh_test
    that stages the package beside `deps`, runs tsc --strict, then node's test
    runner over the compiled tests (tools/typescript/ts_package_test.sh).

    Args:
      name: the test target's name.
      deps: the workspace packages it imports, as directories ("typescript/core").
      data: other runtime files of the tests.
      **kwargs: size (default medium), env, tags, ...
    """
    native.filegroup(
        name = "package_files",
        srcs = native.glob(["src/**/*.ts"]) + [
            "package.json",
            "tsconfig.json",
        ],
    )
    kwargs.setdefault("size", "medium")
    native.sh_test(
        name = name,
        srcs = ["//tools/typescript:ts_package_test.sh"],
        args = [native.package_name()] + deps,
        data = [
            ":package_files",
            "//tools/typescript:stage_node_modules.sh",
            "@npm//:node_modules",
        ] + ["//%s:package_files" % d for d in deps] + data,
        **kwargs
    )
