"""Pins the public surface: a removed export fails here first."""

from __future__ import annotations

import dexlite


def test_exports() -> None:
    assert set(dexlite.__all__) == {"DexliteServer", "ServerOptions", "__version__"}
    for name in dexlite.__all__:
        assert hasattr(dexlite, name)


def test_in_process_server_serves_health_check(tmp_path: object) -> None:
    """The library can also be embedded without a child process (``:memory:``)."""
    import grpc
    from dex.dexpb import dex_pb2_grpc
    from google.protobuf import empty_pb2

    server = dexlite.DexliteServer(dexlite.ServerOptions(listen="127.0.0.1:0", db_path=":memory:"))
    port = server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = dex_pb2_grpc.FlowServiceStub(channel).GetServerInfo(
                empty_pb2.Empty(), timeout=10
            )
        assert (info.minimum_supported_protocol_version, info.current_protocol_version) == (1, 3)
    finally:
        server.stop()


def test_testing_exports() -> None:
    import dexlite.testing

    assert set(dexlite.testing.__all__) == {
        "ChildProcess",
        "DexliteProcess",
        "accepts_connections",
        "child_env",
        "database_dump",
        "free_port",
        "scratch_dir",
        "wait_until",
    }
    for name in dexlite.testing.__all__:
        assert hasattr(dexlite.testing, name)


def test_launcher_on_a_fresh_database_restarts_on_the_same_files() -> None:
    from pathlib import Path

    from dexlite.testing import DexliteProcess

    with DexliteProcess() as server:
        database = Path(server.db_path)
        assert database.exists()
        port = server.port
        server.kill()
        assert server.proc is not None
        assert server.proc.returncode != 0
        server.restart()
        assert (server.port, Path(server.db_path)) == (port, database)
        assert server.stop() == 0
    assert not database.parent.exists()
