"""The short soak (//python/testing:soak_short_test): 20 sessions x 5 turns under kills,
and a half-minute timed run whose slots start new sessions.

The seed is fixed so the plans repeat from run to run; kill moments still vary
with timing. DEX_AGENTS_SOAK_SEED picks another seed, DEX_AGENTS_SOAK_TMP keeps
the databases, logs and effect files for a post-mortem.
"""

from __future__ import annotations

import os

import pytest
from dex_agents_testing.soak import SoakSettings, run_soak

SEED = int(os.environ.get("DEX_AGENTS_SOAK_SEED", "20261203"))


def test_short_soak_keeps_every_invariant(capsys: pytest.CaptureFixture[str]) -> None:
    figures = run_soak(SoakSettings(seed=SEED, root=os.environ.get("DEX_AGENTS_SOAK_TMP")))
    with capsys.disabled():  # the figures belong in the test log, pass or fail
        print("\n" + "\n".join(figures.lines()), flush=True)
    assert not figures.violations, "invariant violations:\n" + "\n".join(figures.violations)
    assert sum(figures.kills_by_kind.values()) >= 3, "the chaos loop hardly killed anything"
    assert figures.turns >= figures.sessions * 5


def test_a_timed_soak_moves_every_slot_on_to_new_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A timed run keeps starting sessions, so StartAgentSession meets kills all along."""
    figures = run_soak(
        SoakSettings(seed=SEED, sessions=4, turns=2, minutes=0.5, stagger_seconds=1.0)
    )
    with capsys.disabled():
        print("\n" + "\n".join(figures.lines()), flush=True)
    assert not figures.violations, "invariant violations:\n" + "\n".join(figures.violations)
    assert figures.sessions > 4, "no slot started a second session"
    assert figures.steps_ran["StartAgentSession"] >= figures.sessions
    assert figures.turns >= (figures.sessions - 4) * 2  # a slot's last one may end early
