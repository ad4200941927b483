"""Entry point of the child Worker process: ``python -m helpers.worker_main ADDR MODE PORT``."""

from __future__ import annotations

import sys
import threading

from helpers.workers import ThreadWorker


def main() -> None:
    address, mode, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    worker = ThreadWorker(address, "pull" if mode == "pull" else "listen", port=port)
    worker.start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
