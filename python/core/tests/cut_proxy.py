"""A loopback TCP proxy in front of a gRPC server that can drop one reply.

The client's calls go through it unchanged. Once `arm()`ed, it reads the
server's HTTP/2 frames and, at the first HEADERS or DATA frame of a stream (the
start of a reply; dexlite sends one only after it committed the call), resets
both connections instead of forwarding it: the server has done the work, and
the client sees its connection drop with no answer. Later connections pass
through untouched.
"""

from __future__ import annotations

import socket
import struct
import threading
from types import TracebackType

__all__ = ["CutProxy"]

_FRAME_HEADER = 9
_DATA, _HEADERS = 0x0, 0x1


class CutProxy:
    """Forwards 127.0.0.1:`port` to `target` ("host:port")."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self._target = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed = False
        self._closing = False
        self._sockets: list[socket.socket] = []
        self.connections = 0
        """Client connections accepted so far."""
        self.cut = threading.Event()
        """Set once a reply was dropped."""
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> CutProxy:
        self._accepting.start()
        return self

    def arm(self) -> None:
        """Drop the next reply of any stream, on whichever connection carries it."""
        with self._lock:
            self._armed = True
            self.cut.clear()

    def close(self) -> None:
        with self._lock:
            self._closing = True
            sockets, self._sockets = self._sockets, []
        self._listener.close()
        for sock in sockets:
            _reset(sock)
        self._accepting.join(10)

    def __enter__(self) -> CutProxy:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(self._target)
            with self._lock:
                if self._closing:
                    _reset(client)
                    _reset(upstream)
                    return
                self.connections += 1
                self._sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        """Client to server: bytes as they come."""
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        _reset(sink)

    def _replies(self, server: socket.socket, client: socket.socket) -> None:
        """Server to client, frame by frame, so a cut falls before a reply's first byte."""
        try:
            while True:
                header = _read_exactly(server, _FRAME_HEADER)
                length = int.from_bytes(header[:3], "big")
                kind = header[3]
                stream = struct.unpack(">I", header[5:9])[0] & 0x7FFFFFFF
                payload = _read_exactly(server, length)
                if stream != 0 and kind in (_DATA, _HEADERS) and self._take_cut():
                    _reset(client)
                    _reset(server)
                    self.cut.set()
                    return
                client.sendall(header + payload)
        except (OSError, EOFError):
            pass
        _reset(client)

    def _take_cut(self) -> bool:
        with self._lock:
            armed, self._armed = self._armed, False
            return armed


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("connection closed")
        data += chunk
    return bytes(data)


def _reset(sock: socket.socket) -> None:
    """Close with an RST, as a dropped connection arrives: no orderly shutdown.

    A thread blocked in `recv` keeps the socket open past `close`; shutting its
    reading side first wakes that thread, so the close takes effect (with the
    zero linger, as a reset).
    """
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    sock.close()
