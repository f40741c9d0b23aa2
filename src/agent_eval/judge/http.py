"""Every HTTP call of the judge within a deadline and a size limit (docs/judge.md
"Providers").

httpx's timeouts bound each read of the socket, not a call: an endpoint that sends its
answer one byte a second (or an endless one) kept ``--judge record`` waiting forever. So
the SDKs are given their own default HTTP client (its proxy settings from the environment,
``trust_env``, as before) with:

- a deadline per judge call (:func:`deadline`, ``judge.timeout_s``), covering every
  request the SDK makes for it (its own retries too) from connecting to the last byte of
  the answer: each socket operation may take only what is left of it, and once it has
  passed every operation fails at once as a timeout. The SDK's waits between its retries
  are cut to what is left (a server's ``Retry-After``) or are its own back-off (at most 8 s
  each), so a call takes at most ``timeout_s + max_retries x 8`` seconds;
- a limit on the answer's bytes, :data:`MAX_ANSWER_BYTES`: a larger answer is a failed
  call (:class:`AnswerTooLarge`). The answer is asked for uncompressed
  (``Accept-Encoding: identity``) and one compressed anyway is refused, so that the
  limit is on what is held in memory.

Imported only when a judgement is recorded, with the SDKs (which bring httpx2).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import parsedate_to_datetime
from typing import Any

import httpcore2
import httpx2

MAX_ANSWER_BYTES = 8 << 20  # an answer's body; a larger one is a failed call
MAX_SDK_WAIT_S = 8.0  # the SDKs' longest back-off between their retries (MAX_RETRY_DELAY)

_call = threading.local()  # the deadline of the judge call this thread is making


class AnswerTooLarge(httpx2.RequestError):
    """The answer is over :data:`MAX_ANSWER_BYTES`, or compressed although it was asked
    for uncompressed."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every request of the block (this thread) ends within ``seconds`` from now."""
    _call.deadline, _call.seconds = time.monotonic() + seconds, seconds
    try:
        yield
    finally:
        _call.deadline = None


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    """``timeout``, cut to what is left of the call's deadline; ``late`` when none is."""
    end: float | None = getattr(_call, "deadline", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise late(f"the call's deadline of {_call.seconds:g} s (judge.timeout_s) passed "
                   "before the answer was whole")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname,
                                              _left(timeout, httpcore2.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    """The pool's network backend, every operation held to the call's deadline."""

    def __init__(self, backend: httpcore2.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        return _Stream(self._backend.connect_tcp(
            host, port, _left(timeout, httpcore2.ConnectTimeout), local_address,
            socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore2.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(
            path, _left(timeout, httpcore2.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _Capped(httpx2.SyncByteStream):
    """An answer's body, at most ``limit`` bytes."""

    def __init__(self, stream: Any, limit: int) -> None:
        self._stream, self._limit = stream, limit

    def __iter__(self) -> Iterator[bytes]:
        got = 0
        for chunk in self._stream:
            got += len(chunk)
            if got > self._limit:
                raise AnswerTooLarge(f"the answer is larger than {self._limit} bytes "
                                     "(MAX_ANSWER_BYTES)")
            yield chunk

    def close(self) -> None:
        self._stream.close()


def _ask_uncompressed(request: httpx2.Request) -> None:
    request.headers["Accept-Encoding"] = "identity"


def _bound(response: httpx2.Response, limit: int) -> None:
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        response.close()
        raise AnswerTooLarge(f"the answer is compressed (Content-Encoding: {encoding[:40]}) "
                             "though it was asked for uncompressed; its size cannot be "
                             "bounded")
    response.stream = _Capped(response.stream, limit)
    # a server's Retry-After no longer than what is left of the call (the SDK waits it);
    # a shorter one is kept as it is (it was the whole of what was left: a 429 saying
    # "in 1 s" made the SDK wait out the deadline, so the call failed)
    wait = _retry_after(response.headers)
    for name in ("retry-after", "retry-after-ms"):
        if name in response.headers:
            del response.headers[name]
    end = getattr(_call, "deadline", None)
    if wait is not None and end is not None and end > time.monotonic():
        wait = min(wait, end - time.monotonic())
    if wait is not None:
        response.headers["retry-after-ms"] = str(max(1, int(wait * 1000)))


def _retry_after(headers: httpx2.Headers) -> float | None:
    """The seconds a server's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP
    date) asks to wait, as the SDKs read them; None when neither says (the SDK's own
    back-off)."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            if divisor == 1000.0:
                continue
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError, OverflowError):
                continue
            if when.tzinfo is None:
                continue
            seconds = when.timestamp() - time.time()
        if math.isfinite(seconds) and seconds > 0:
            return seconds
    return None


def bounded_client(client_class: Any, timeout_s: float,
                   limit: int = MAX_ANSWER_BYTES) -> httpx2.Client:
    """An SDK's default HTTP client (``client_class``: ``openai.DefaultHttpxClient``,
    ``anthropic.DefaultHttpxClient``) whose requests are held to the call's
    :func:`deadline` and whose answers to ``limit`` bytes. :class:`RuntimeError` when the
    client is not built as expected (then it could not be bounded: never used unbounded)."""
    client: httpx2.Client = client_class(
        timeout=timeout_s,
        # the SDKs follow redirects: a 307 from base_url sent the prompt (trace text) on to
        # whatever origin it named, whose verdict was recorded; a redirect is a failed call
        follow_redirects=False,
        event_hooks={"request": [_ask_uncompressed],
                     "response": [lambda response: _bound(response, limit)]})
    transports = [client._transport, *client._mounts.values()]  # the environment's proxies
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            raise RuntimeError(f"cannot bound the judge's HTTP calls: {type(transport)} "
                               "has no connection pool")
        if not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
    return client
