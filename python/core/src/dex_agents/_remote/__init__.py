"""`RemoteRunner`: a runner served by another process over the runner service (runner.proto)."""
