"""`python -m dex_agents_testing.soak`: the kill-and-load soak (run.py); exit 1 on a violation."""

from __future__ import annotations

import argparse
import random
import sys

from dex_agents_testing.soak.run import SoakSettings, run_soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dex_agents_testing.soak")
    parser.add_argument("--long", action="store_true", help="100 sessions x 10 turns, coverage")
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--turns", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, help="default: a random seed, printed")
    parser.add_argument("--min-delay", type=float, default=0.2, help="seconds between kills")
    parser.add_argument("--max-delay", type=float, default=1.2)
    parser.add_argument("--dexlite-share", type=float, default=0.2)
    parser.add_argument("--armed-share", type=float, help="kills armed for a Step type (0.6)")
    parser.add_argument("--coverage", type=int, help="kills wanted per Step type (--long: 20)")
    parser.add_argument(
        "--minutes",
        type=float,
        help="timed run: sessions of --turns turns follow each other in every slot until "
        "every Step type has its --coverage kills, or for at most this many minutes",
    )
    parser.add_argument("--root", help="keep the databases, logs and effect files here")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    settings = SoakSettings(
        sessions=args.sessions or (100 if args.long else 20),
        turns=args.turns or (10 if args.long or args.minutes else 5),
        workers=args.workers,
        seed=seed,
        min_delay=args.min_delay,
        max_delay=args.max_delay,
        dexlite_share=args.dexlite_share,
        armed_share=(
            args.armed_share if args.armed_share is not None else (0.9 if args.long else 0.6)
        ),
        claim_wait_seconds=10.0 if args.long else 4.0,
        stagger_seconds=60.0 if args.long else 5.0,
        coverage_target=args.coverage if args.coverage is not None else (20 if args.long else 0),
        minutes=args.minutes or 0.0,
        root=args.root,
    )
    print(
        f"soak: seed {seed}, {settings.sessions} sessions x {settings.turns} turns, "
        f"{settings.workers} Workers",
        flush=True,
    )
    figures = run_soak(settings)
    for line in figures.lines():
        print(line, flush=True)
    return 1 if figures.violations else 0


if __name__ == "__main__":
    sys.exit(main())
