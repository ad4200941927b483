"""The console's files for its tests: the static files Bazel built
(//typescript/console:static), and the package compiled with tsc for its
playwright-core driver (src/browser/console.browser.ts)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["artifact_dir", "built_console", "static_dir"]


def _roots() -> tuple[Path, Path]:
    """(workspace root, installed node_modules): Bazel's runfiles, else this checkout."""
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        return Path(srcdir) / os.environ.get("TEST_WORKSPACE", "dex_agents"), Path(srcdir) / "npm"
    root = next(
        p for p in Path(__file__).resolve().parents if (p / "typescript" / "console").is_dir()
    )
    return root, root / "node_modules"


def built_console(work: Path) -> Path:
    """The console package copied into `work`, its node_modules staged, compiled by tsc."""
    root, npm = _roots()
    package = work / "console"
    shutil.copytree(
        root / "typescript" / "console",
        package,
        symlinks=False,
        ignore=shutil.ignore_patterns("node_modules", "dist", "static"),
    )
    for path in package.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    stage = root / "tools" / "typescript" / "stage_node_modules.sh"
    deps = [str(root / "typescript" / "contracts"), str(root / "typescript" / "ui")]
    subprocess.run([str(stage), str(npm), str(package / "node_modules"), *deps], check=True)
    tsc = package / "node_modules" / "typescript" / "bin" / "tsc"
    subprocess.run(["node", str(tsc), "-p", str(package / "tsconfig.json")], check=True)
    return package


def static_dir(package: Path) -> Path:
    """Bazel's built static files; outside Bazel, the compiled package bundles them."""
    root, _ = _roots()
    built = root / "typescript" / "console" / "static"
    if os.environ.get("TEST_SRCDIR"):
        assert (built / "index.html").is_file(), f"{built} lacks the built console"
        return built
    out = package / "static"
    subprocess.run(["node", str(package / "dist" / "build" / "bundle.js"), str(out)], check=True)
    return out


def artifact_dir(fallback: Path) -> Path:
    """Where screenshots go: Bazel's undeclared test outputs, else `fallback`."""
    out = Path(os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or fallback)
    out.mkdir(parents=True, exist_ok=True)
    return out
