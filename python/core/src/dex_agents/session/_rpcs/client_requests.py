"""Client request IDs: what makes a repeated mutating RPC change nothing.

A client names one logical request with `client_request_id` and sends the same
ID on every retry, because a reply lost on the way back says nothing about
whether the RPC committed. An RPC that answers true writes a
ClientRequestRecord under the ID in the commit of its effect; a repeat finds
it and returns that answer without deciding again. A false answer changed
nothing, so it is not kept and a repeat is decided afresh: either way the
effect happens at most once per ID.

Records live for CLIENT_REQUEST_WINDOW after they are written, and a session
keeps at most CLIENT_REQUEST_LIMIT of them: the RPC that writes one deletes
those past either bound, oldest first. A repeat after that is a new request.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from dex import Context, RPCResult
from dex_agents_contracts import ClientRequestRecord, encode

from dex_agents._client_request_id import client_request_id_problem
from dex_agents.errors import ClientRequestIdReusedError
from dex_agents.session._schema import SessionSchema
from dex_agents.session._time import utc_from, utc_now

__all__ = [
    "CLIENT_REQUEST_LIMIT",
    "CLIENT_REQUEST_WINDOW",
    "answer_once",
    "request_digest",
]

CLIENT_REQUEST_WINDOW = timedelta(minutes=10)
"""How long a session remembers the answer to a client request ID."""
CLIENT_REQUEST_LIMIT = 128
"""How many answers a session remembers at most; the oldest go first."""


def answer_once(
    schema: SessionSchema,
    context: Context,
    rpc_name: str,
    request: Any,
    decide: Callable[[], RPCResult[bool]],
) -> RPCResult[bool]:
    """`decide`'s result, or the answer `request`'s client request ID already got.

    `request` is a contract message with a `client_request_id` field. The RPC must
    load ClientRequests. Raises ValueError for an ID that is not one, and
    ClientRequestIdReusedError when a remembered ID comes with another request.
    """
    request_id: str | None = request.client_request_id
    if request_id is None:
        return decide()
    problem = client_request_id_problem(request_id)
    if problem is not None:
        raise ValueError(problem)
    digest = request_digest(request)
    now = utc_now()
    record = schema.client_requests.get(context, request_id)
    if record is not None and _live(record, now):
        if record.rpc_name != rpc_name or record.request_digest != digest:
            raise ClientRequestIdReusedError(
                f"client request ID {request_id!r} already answered a different request "
                f"(`{record.rpc_name}`); use a new ID for a new request",
                session_id=context.flow_id,
                client_request_id=request_id,
            )
        return RPCResult(record.result)
    result = decide()
    if result.output is True:
        schema.client_requests.set(
            context,
            request_id,
            ClientRequestRecord(
                rpc_name=rpc_name, request_digest=digest, result=True, recorded_at=now
            ),
        )
        _forget_old(schema, context, now, keep=request_id)
    return result


def request_digest(request: Any) -> str:
    """SHA-256 of the request's wire JSON with its client request ID left out."""
    unnamed = dataclasses.replace(request, client_request_id=None)
    return hashlib.sha256(encode(unnamed).encode("utf-8")).hexdigest()


def _live(record: ClientRequestRecord, now: datetime) -> bool:
    recorded = utc_from(record.recorded_at)
    return recorded is not None and now - recorded < CLIENT_REQUEST_WINDOW


def _forget_old(schema: SessionSchema, context: Context, now: datetime, *, keep: str) -> None:
    """Delete the records past the window, then the oldest beyond the limit but `keep`."""
    records = schema.client_requests
    kept: list[tuple[datetime, str]] = []
    for key in records.get_all_instance_keys(context):
        record = records.get(context, key)
        recorded = utc_from(record.recorded_at) if record is not None else None
        if record is None or recorded is None or not _live(record, now):
            records.delete(context, key)
        elif key != keep:
            kept.append((recorded, key))
    kept.sort()
    for _, key in kept[: max(0, len(kept) + 1 - CLIENT_REQUEST_LIMIT)]:
        records.delete(context, key)
