"""The kill-and-load soak: sessions under SIGKILLs of Workers and dexlite, then invariants.

`python -m dex_agents_testing.soak` runs it (tools/soak.sh wraps that); see
run.py for the pieces and invariants.py for what is checked.
"""

from __future__ import annotations

from dex_agents_testing.soak.figures import Figures
from dex_agents_testing.soak.run import SoakSettings, run_soak

__all__ = ["Figures", "SoakSettings", "run_soak"]
