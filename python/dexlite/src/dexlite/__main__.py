"""``python -m dexlite serve ...`` and the Bazel ``dexlite_bin`` entry point."""

from __future__ import annotations

import sys

if __package__:
    from ._cli import main
else:  # executed as a plain file (Bazel py_binary): import the package by name
    from dexlite._cli import main  # type: ignore[import-not-found,no-redef,unused-ignore]

if __name__ == "__main__":
    sys.exit(main())
