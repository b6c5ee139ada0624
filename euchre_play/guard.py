"""What stands between the web table and the network: the Host names it answers to, a limit on request
bodies, security headers on every response, and short error messages that never echo a whole input.

`Guard` is a plain ASGI middleware around the app; `install_error_handlers` makes every refusal (a
bad body, a wrong type, NaN or Infinity where a number belongs, an unknown route) a 4xx whose detail is
one short line.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Iterable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

MAX_BODY = 64 * 1024
"""Bytes a request body may hold: the API's requests are a few hundred."""
DETAIL_CHARS = 200
"""An error message is cut to this many characters."""
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def short(text: Any, limit: int = DETAIL_CHARS) -> str:
    """`text` as at most `limit` characters (cut with an ellipsis)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> set[str]:
    """The Host names a server bound to `host` answers to: loopback's, `host` itself (unless a wildcard) and `extra`."""
    names = {*LOOPBACK_HOSTS, *(h.strip().lower() for h in extra if h.strip())}
    if host not in ("0.0.0.0", "::", ""):
        names.add(host.lower())
    return names


def is_loopback(host: str) -> bool:
    """The address is this machine's own (nobody else can reach a server bound to it)."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def host_name(header: str) -> str:
    """The name part of a Host header: `[::1]:8000` -> `::1`, `example.org:80` -> `example.org`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware: 400 for a Host not in `hosts`, 413 for a body over `max_body` bytes, security headers."""

    def __init__(self, app: Callable, hosts: set[str], max_body: int = MAX_BODY):
        self.app, self.hosts, self.max_body = app, hosts, max_body

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host not in self.hosts:
            return await refuse(send, 400, "this server does not answer to that Host name")
        try:
            declared = int(headers.get(b"content-length", b"0"))
        except ValueError:
            return await refuse(send, 400, "bad Content-Length")
        if declared > self.max_body:
            return await refuse(send, 413, f"request body over {self.max_body} bytes")
        body, more = [], True
        size = 0
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return
            body.append(message.get("body", b""))
            size += len(body[-1])
            more = message.get("more_body", False)
            if size > self.max_body:
                return await refuse(send, 413, f"request body over {self.max_body} bytes")
        await self.app(scope, replay(b"".join(body), receive), with_headers(send))


def replay(body: bytes, receive: Callable) -> Callable[[], Awaitable[dict]]:
    """A `receive` that hands the app the body already read, then waits for the client as the original does."""
    sent = False

    async def receive_again() -> dict:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive_again


def with_headers(send: Callable) -> Callable:
    """A `send` that adds the security headers to the response's start."""

    async def send_with_headers(message: dict) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return send_with_headers


async def refuse(send: Callable, status: int, detail: str) -> None:
    """Answer `status` with `{"detail": detail}` without running the app."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def validation_detail(err: RequestValidationError) -> str:
    """A request's problems as one short line: where each is and what is wrong, never the value sent."""
    parts = []
    for problem in err.errors()[:3]:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "body") or "body"
        parts.append(f"{short(where, 40)}: {short(problem.get('msg', 'invalid'), 80)}")
    return short("; ".join(parts))


def install_error_handlers(app: FastAPI) -> None:
    """Every refusal as `{"detail": one short line}`: validation problems 422, HTTP errors with their own status."""

    async def on_validation(request: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_detail(err)}, status_code=422)

    async def on_http(request: Request, err: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": short(err.detail)}, status_code=err.status_code, headers=getattr(err, "headers", None))

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
