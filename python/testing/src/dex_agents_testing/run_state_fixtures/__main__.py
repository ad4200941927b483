"""`python -m dex_agents_testing.run_state_fixtures RECIPE [--point P ...]`: records fixtures.

Run it with the adapter's interpreter and its `src` and `tests` on PYTHONPATH
(python/testing/README.md); it prints the files it wrote.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import cast

from dex_agents_testing.run_state_fixtures._format import POINTS, Point
from dex_agents_testing.run_state_fixtures._record import record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dex_agents_testing.run_state_fixtures")
    parser.add_argument("recipe", type=Path, help="an adapter's tests/run_state_recipes.json")
    parser.add_argument("--point", action="append", choices=POINTS, help="default: every point")
    args = parser.parse_args(argv)
    points = cast("list[Point] | None", args.point)
    for path in record(args.recipe, points):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
