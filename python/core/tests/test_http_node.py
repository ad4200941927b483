"""@dex-agents/ui's Node tests (typescript/ui/src/live) against the real path:
dexlite, a Worker process with the scripted model of http_flows.py, and the
dex_agents.http app on uvicorn on loopback. This test builds the package with tsc
and runs `node --test` over the compiled live tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from dex_agents.http import HttpLimits
from helpers import Harness
from http_support import serving

FLOW = "http_flows:flow"
LIMITS = HttpLimits(poll_seconds=1, idle_timeout_seconds=30)
SESSIONS = 7


def _roots() -> tuple[Path, Path]:
    """(workspace root, installed node_modules): Bazel's runfiles, else this checkout."""
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        return Path(srcdir) / os.environ.get("TEST_WORKSPACE", "dex_agents"), Path(srcdir) / "npm"
    root = next(p for p in Path(__file__).resolve().parents if (p / "typescript" / "ui").is_dir())
    return root, root / "node_modules"


def _built_package(work: Path) -> Path:
    root, npm = _roots()
    package = work / "ui"
    shutil.copytree(
        root / "typescript" / "ui",
        package,
        symlinks=False,
        ignore=shutil.ignore_patterns("node_modules", "dist"),
    )
    for path in package.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    stage = root / "tools" / "typescript" / "stage_node_modules.sh"
    contracts = root / "typescript" / "contracts"
    modules = package / "node_modules"
    subprocess.run([str(stage), str(npm), str(modules), str(contracts)], check=True)
    tsc = package / "node_modules" / "typescript" / "bin" / "tsc"
    subprocess.run(["node", str(tsc), "-p", str(package / "tsconfig.json")], check=True)
    return package


def test_ui_package_against_the_app(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    package = _built_package(tmp_path)
    live = sorted(str(p) for p in (package / "dist" / "live").glob("*.live.js"))
    assert live, "no compiled live tests"
    gates = tmp_path / "gates"
    gates.mkdir()
    h = factory_harness(FLOW, {"gate_dir": str(gates)})
    sessions = [h.start() for _ in range(SESSIONS)]
    with serving(h.client, LIMITS) as served:
        env = {
            **os.environ,
            "DEX_UI_BASE_URL": served.base_url,
            "DEX_UI_SESSIONS": ",".join(sessions),
            "DEX_UI_GATE_DIR": str(gates),
        }
        done = subprocess.run(
            ["node", "--test", "--test-concurrency=1", *live],
            cwd=package,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    print(done.stdout[-20000:])
    print(done.stderr[-5000:])
    assert done.returncode == 0, "node --test failed (output above)"
    assert "# fail 0" in done.stdout
