"""dexlite: an embedded Dex-protocol gRPC server with SQLite durability.

It speaks the protocol of ``dex-python-sdk`` 1.23.0 so the unmodified SDK Client
and Worker (listening or pull mode) run against it. docs/dexlite-protocol.md in
the repository describes that protocol as dexlite implements it; README.md says
how to run it. ``dexlite.testing`` runs it as a child process for test suites.
"""

from __future__ import annotations

from ._options import ServerOptions
from ._server import DexliteServer

__version__ = "0.1.0"

__all__ = [
    # server
    "DexliteServer",
    "ServerOptions",
    "__version__",
]
