"""capabilities.json, the adapter's column of docs/adapters.md, is what
`AdkRunner.describe()` declares.

The table is assembled from every adapter's file without importing any framework
(tools/capabilities); this test, on the adapter's own interpreter, keeps the file
true. `tools/capabilities.sh python/adapters/google_adk/capabilities.json` rewrites it.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing import load_app
from dex_agents_testing.capabilities import check_capabilities_file

APP = load_app(Path(__file__).resolve().parent / "integration" / "adk_app.py")


def test_capabilities_json_is_what_describe_declares(tmp_path: Path) -> None:
    with APP.scripted_runner([], str(tmp_path / "log.jsonl")) as runner:
        check_capabilities_file(runner, "python/adapters/google_adk/capabilities.json")
