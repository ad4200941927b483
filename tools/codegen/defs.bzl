"""Checked-in generated sources: a staleness test and an updater per package."""

def generated_sources(name, outputs):
    """Declares `<name>_test` and `<name>_update` for generated files.

    Args:
      name: prefix of the two targets.
      outputs: dict from a generating target in this package to a pair
        [out_dir, source_dir]: the target writes its files under out_dir (as
        given to the rule), and they are checked in under source_dir (relative
        to the workspace root).
    """
    args = []
    data = []
    checked_in = []
    for target, dirs in outputs.items():
        out_dir, source_dir = dirs
        args.append("%s/%s=%s" % (native.package_name(), out_dir, source_dir))
        data.append(target)
        checked_in.append(_relative(source_dir) + "/**")
    args.append("--")
    args += ["$(rootpaths %s)" % t for t in outputs.keys()]
    native.sh_test(
        name = name + "_test",
        srcs = ["//tools/codegen:check_generated.sh"],
        args = args,
        data = data + native.glob(checked_in) + ["//tools/codegen:map_lib"],
    )
    native.sh_binary(
        name = name + "_update",
        srcs = ["//tools/codegen:copy_generated.sh"],
        args = args,
        data = data + ["//tools/codegen:map_lib"],
        visibility = ["//visibility:public"],
    )

def _relative(path):
    prefix = native.package_name() + "/"
    if not path.startswith(prefix):
        fail("%s is outside package %s" % (path, native.package_name()))
    return path[len(prefix):]
