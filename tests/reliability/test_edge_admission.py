"""EdgeMiddleware admission control: at most N requests inside the app per worker, the rest
admitted in arrival order; metrics scrapes and health checks skip the queue; every answer keeps
its headers."""

import asyncio
from typing import Any

from app.middleware.edge import CONTENT_SECURITY_POLICY, EdgeMiddleware


class SlowApp:
    """An ASGI app that records how many requests run at once and in which order they start."""

    def __init__(self) -> None:
        self.inside = 0
        self.most_inside = 0
        self.started: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        self.started.append(scope["path"])
        try:
            if scope["path"] not in ("/metrics", "/healthz"):
                await self.release.wait()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"ok"})
        finally:
            self.inside -= 1


def _scope(path: str) -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b"",
            "client": ("127.0.0.1", 1), "scheme": "http"}


async def _call(app: Any, path: str) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope(path), receive, send)
    return sent


def test_requests_beyond_the_limit_wait_and_enter_in_arrival_order() -> None:
    async def scenario() -> tuple[SlowApp, list[list[dict[str, Any]]], list[dict[str, Any]]]:
        inner = SlowApp()
        edge = EdgeMiddleware(inner, max_concurrent=2)  # type: ignore[arg-type]
        tasks = []
        for i in range(8):
            tasks.append(asyncio.create_task(_call(edge, f"/r{i}")))
            await asyncio.sleep(0)  # arrive one after the other
        await asyncio.sleep(0.01)
        assert inner.inside == 2  # the other six wait at the door
        # A metrics scrape is answered while the app is full.
        scrape = await asyncio.wait_for(_call(edge, "/metrics"), timeout=2)
        inner.release.set()
        return inner, await asyncio.gather(*tasks), scrape

    inner, answers, scrape = asyncio.run(scenario())
    assert inner.most_inside == 3  # two requests plus the scrape, never more
    assert [p for p in inner.started if p != "/metrics"] == [f"/r{i}" for i in range(8)]
    for sent in [*answers, scrape]:
        start = sent[0]
        assert start["status"] == 200
        headers = dict(start["headers"])
        assert headers[b"content-security-policy"] == CONTENT_SECURITY_POLICY.encode()
        assert headers[b"x-request-id"]


def test_health_checks_are_answered_while_the_app_is_full() -> None:
    # A load balancer's probe queued behind page renders would time out and take the worker out.
    async def scenario() -> tuple[SlowApp, list[dict[str, Any]]]:
        inner = SlowApp()
        edge = EdgeMiddleware(inner, max_concurrent=1)  # type: ignore[arg-type]
        busy = [asyncio.create_task(_call(edge, f"/r{i}")) for i in range(3)]
        await asyncio.sleep(0.01)
        assert inner.inside == 1  # two requests wait at the door
        probe = await asyncio.wait_for(_call(edge, "/healthz"), timeout=2)
        inner.release.set()
        await asyncio.gather(*busy)
        return inner, probe

    inner, probe = asyncio.run(scenario())
    assert probe[0]["status"] == 200
    assert inner.started.index("/healthz") == 1  # after the one inside, ahead of the queue
