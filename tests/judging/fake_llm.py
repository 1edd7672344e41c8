"""A real OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It serves POST /v1/chat/completions on a port the OS chooses. Replies come from a
`reply(body) -> str` function; faults are scripted per request (`script`, a list consumed
in order) or per prompt (`faults`, matched by a substring of the last message):
"429" (with Retry-After), "500", "503", "400" (a context-length error, as llama.cpp words
it), "400-param" (another 400), "401", "404" (a path the server does not serve), "404-model"
(an unknown model), "hang" (never answers in time), "drop" (closes the connection with no
reply), "garbage" (200 with a body that is not JSON), "length" (a reply cut off by
max_tokens), "junk" (a well-formed reply whose content is hostile: a 309-digit score, 20,000
nested brackets, NUL bytes, nothing, or no content at all).
`random_faults` injects them at random instead, each at its rate ({"429": 0.05, ...}), from a
seeded generator; `injected` counts what was injected. `delays` slows the prompts that contain
a substring. Every request is counted and its body kept.

Like llama.cpp, it can have a number of `slots`: that many requests are computed at once and
the others wait in its queue, unseen by the client, their latency growing while they wait.
A client that gives up on a queued call still costs the server its computation (`wasted`
counts replies nobody read). `sigma` > 0 makes the latency lognormal around `latency` (the
median), drawn from the prompt's hash so that a benchmark can add up the latencies it asked for.

Run as a script (`python -m tests.judging.fake_llm --latency 0.2`) it prints its base URL
and serves until killed: the benchmark and the worker-crash test use it that way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import select
import socket
import sys
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from statistics import NormalDist
from typing import Any


def default_reply(body: dict) -> str:
    """A judge-shaped reply: pointwise scores 7, pairwise ranks model_1 first."""
    prompt = body["messages"][-1]["content"]
    if "'rank'" in prompt or '"rank"' in prompt:
        return "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    return 'Reasoning.\n{"Factuality": 7, "Final Score": 7}'


# Hostile content in a well-formed reply ("junk"); None stands for a message without content.
JUNK = [
    "{'Final Score': " + "9" * 309 + "}",
    "{[" * 10_000,
    "Final Score: \x00\x00\x00",
    "",
    "Final Score: eleven out of ten",
    "[{'model': 'model_1', 'rank': 1e309}]",
    None,
]


class FifoSlots:
    """A server's slots with its queue served first come, first served, as llama.cpp's is. (A
    semaphore lets a request that has just arrived take a slot before one that has waited, so
    a request could wait behind many that came later, and time out in a queue of two.)"""

    def __init__(self, slots: int):
        self.free = slots
        self.queue: deque[object] = deque()
        self.changed = threading.Condition()

    def acquire(self) -> None:
        ticket = object()
        with self.changed:
            self.queue.append(ticket)
            while self.queue[0] is not ticket or not self.free:
                self.changed.wait()
            self.queue.popleft()
            self.free -= 1
            self.changed.notify_all()  # the next in line may find a slot too

    def release(self) -> None:
        with self.changed:
            self.free += 1
            self.changed.notify_all()


def lognormal_latency(prompt: str, median: float, sigma: float) -> float:
    """The latency the server uses for `prompt`: median x exp(sigma x z), z standard normal from
    the prompt's hash (sigma 1: p99 about 10x the median)."""
    if sigma <= 0:
        return median
    digest = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big")
    z = NormalDist().inv_cdf((digest + 0.5) / 2**64)
    return median * math.exp(sigma * z)


class _Server(ThreadingHTTPServer):
    # Several processes may serve one port (the benchmark's --processes): one Python process
    # tops out near 300 requests/s, less than 64 calls in flight at 200 ms need.
    allow_reuse_port = True
    daemon_threads = True
    request_queue_size = 512


class FakeLLM:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        reply=default_reply,
        retry_after: str = "0",
        port: int = 0,
        slots: int | None = None,
        sigma: float = 0.0,
        seed: int = 0,
        host: str = "127.0.0.1",
    ):
        self.latency = latency
        self.sigma = sigma
        self.slots = slots
        self._slots = FifoSlots(slots) if slots else None
        self.busy = 0  # requests being computed now
        self.waiting = 0  # requests in the server's queue now
        self.peak_busy = 0
        self.peak_waiting = 0
        self.wasted = 0  # replies computed for a client that had gone
        self.reply = reply
        self.retry_after = retry_after
        self.script: list[str] = []
        self.faults: dict[str, list[str]] = {}
        self.random_faults: dict[str, float] = {}
        self.random = random.Random(seed)
        self.injected: Counter = Counter()
        self.junk_sent = 0
        # Extra seconds for prompts containing a substring: a slow call among fast ones.
        self.delays: dict[str, float] = {}
        self.hang_seconds = 5.0
        # The model name put in replies; None echoes the one asked for (a gateway may answer otherwise).
        self.reported_model: str | None = None
        self.requests: list[dict] = []
        # The address each request came from, in the same order (hosts of their own in the
        # partition tests tell their workers apart by it).
        self.senders: list[str] = []
        # A provider's rate limits (tests/judging/rate_limits.py, ProviderLimits): None, none.
        self.limits: Any = None
        # Cleared: calls are received and held, unanswered, until it is set again (a test that
        # needs something to happen while calls are out makes it happen, instead of racing).
        self.open = threading.Event()
        self.open.set()
        self.statuses: Counter = Counter()
        self.lock = threading.Lock()
        self.server = _Server((host, port), self._handler())
        self.thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def prompts(self) -> list[str]:
        with self.lock:
            return [body["messages"][-1]["content"] for body in self.requests]

    def start(self) -> FakeLLM:
        # Large backlog: a benchmark opens 64+ connections at once.
        # serve_forever notices shutdown() only between polls: the default half second was
        # paid by every test that starts a server.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def _next_fault(self, prompt: str) -> str | None:
        with self.lock:
            for needle, queue in self.faults.items():
                if needle in prompt and queue:
                    return queue.pop(0)
            if self.script:
                return self.script.pop(0)
            draw = self.random.random()
            for fault, rate in self.random_faults.items():
                if draw < rate:
                    self.injected[fault] += 1
                    return fault
                draw -= rate
        return None

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, Nagle plus delayed ACK
            # add ~40 ms to every reply on a kept-alive connection.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet: tests read counters, not logs
                pass

            def _send(self, status: int, payload: bytes, headers: dict | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
                with fake.lock:
                    fake.statuses[status] += 1

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if len(raw) < length:
                    # The client went away mid-request (a worker killed while sending): a real
                    # server never sees such a call, so neither answer nor record it.
                    return
                body = json.loads(raw or b"{}")
                if self.path != "/v1/chat/completions":
                    self._send(404, b"Not Found")
                    return
                with fake.lock:
                    fake.requests.append(body)
                    fake.senders.append(self.client_address[0])
                prompt = body["messages"][-1]["content"] if body.get("messages") else ""
                headers: dict[str, str] = {}
                if fake.limits is not None:
                    admitted, headers = fake.limits.admit(body)
                    if not admitted:
                        self._send(429, b'{"error": {"message": "Rate limit reached", "type": "requests"}}', headers)
                        return
                fault = fake._next_fault(prompt)
                if fake._slots is not None:
                    with fake.lock:
                        fake.waiting += 1
                        fake.peak_waiting = max(fake.peak_waiting, fake.waiting)
                    fake._slots.acquire()
                    with fake.lock:
                        fake.waiting -= 1
                try:
                    with fake.lock:
                        fake.busy += 1
                        fake.peak_busy = max(fake.peak_busy, fake.busy)
                    fake.open.wait()
                    if fake.latency:
                        time.sleep(lognormal_latency(prompt, fake.latency, fake.sigma))
                    for needle, seconds in list(fake.delays.items()):
                        if needle in prompt:
                            time.sleep(seconds)
                    self._answer(fault, body, headers)
                finally:
                    with fake.lock:
                        fake.busy -= 1
                    if fake._slots is not None:
                        fake._slots.release()

            def _client_gone(self) -> bool:
                # A client that timed out closed its connection: the socket reads as at its end.
                readable, _, _ = select.select([self.connection], [], [], 0)
                try:
                    return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _answer(self, fault, body, headers):
                # Computed either way (as llama.cpp does); a reply nobody waits for is wasted.
                if self._client_gone():
                    with fake.lock:
                        fake.wasted += 1
                    self.close_connection = True
                    return
                try:
                    self._answer_or_fail(fault, body, headers)
                except (BrokenPipeError, ConnectionResetError):
                    with fake.lock:
                        fake.wasted += 1

            def _answer_or_fail(self, fault, body, headers):
                if fault == "429":
                    self._send(
                        429,
                        b'{"error": {"message": "rate limited", "type": "rate_limit"}}',
                        {"Retry-After": fake.retry_after},
                    )
                    return
                if fault == "500":
                    self._send(500, b'{"error": {"message": "server exploded"}}')
                    return
                if fault == "503":
                    self._send(503, b'{"error": {"message": "Loading model", "type": "unavailable_error"}}')
                    return
                if fault == "400":
                    self._send(400, b'{"error": {"message": "bad request: context too long"}}')
                    return
                if fault == "400-param":
                    self._send(400, b'{"error": {"message": "temperature must be at most 2"}}')
                    return
                if fault == "401":
                    self._send(401, b'{"error": {"message": "Invalid API Key", "type": "authentication_error"}}')
                    return
                if fault == "404":
                    self._send(404, b"File Not Found")
                    return
                if fault == "404-model":
                    name = str(body.get("model", ""))[:40].replace('"', "")
                    self._send(404, json.dumps({"error": {"message": f"model '{name}' not found"}}).encode())
                    return
                if fault == "hang":
                    time.sleep(fake.hang_seconds)
                    return
                if fault == "garbage":
                    self._send(200, b"<html>502 upstream went away</html>")
                    return
                if fault == "drop":
                    self.close_connection = True  # closed with no reply, as a crashing server does
                    return
                finish_reason = "stop"
                if fault == "junk":
                    with fake.lock:
                        fake.junk_sent += 1
                        junk = JUNK[fake.junk_sent % len(JUNK)]
                    text = junk if isinstance(junk, str) else None
                    if text is None:
                        self._send(200, json.dumps({"choices": [{"message": {"role": "assistant"}}]}).encode())
                        return
                else:
                    text = fake.reply(body)
                if fault == "length":
                    text, finish_reason = text[: max(1, len(text) // 3)], "length"
                words = len(re.findall(r"\S+", text))
                payload = {
                    "id": f"chatcmpl-{len(fake.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": fake.reported_model or body.get("model", "fake"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
                    ],
                    "usage": {
                        "prompt_tokens": 10,
                        "completion_tokens": words,
                        "total_tokens": 10 + words,
                    },
                }
                self._send(200, json.dumps(payload).encode(), headers)

        return Handler


def _completion(body: dict, text: str, finish_reason: str = "stop") -> bytes:
    words = len(re.findall(r"\S+", text))
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": words, "total_tokens": 10 + words},
        }
    ).encode()


async def _serve_connection(reader, writer, latency: float, sigma: float) -> None:
    """One kept-alive connection of the light server: requests in, replies after their latency."""
    import asyncio

    try:
        while True:
            request_line = await reader.readline()
            if not request_line:
                return
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            raw = await reader.readexactly(length) if length else b""
            parts = request_line.split()
            if len(parts) < 2 or parts[1] != b"/v1/chat/completions":
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nNot Found")
                await writer.drain()
                continue
            body = json.loads(raw or b"{}")
            prompt = body["messages"][-1]["content"] if body.get("messages") else ""
            await asyncio.sleep(lognormal_latency(prompt, latency, sigma))
            payload = _completion(body, default_reply(body))
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (len(payload), payload)
            )
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


def serve_light(port: int, latency: float, sigma: float, ready) -> None:
    """The benchmark's server: asyncio on one thread, thousands of calls a second per process,
    so that it takes little of the CPU the client under test needs. Default replies only."""
    import asyncio

    async def run():
        server = await asyncio.start_server(
            lambda reader, writer: _serve_connection(reader, writer, latency, sigma),
            "127.0.0.1",
            port,
            reuse_port=True,
            backlog=4096,
        )
        ready(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(run())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds (the median when --sigma > 0)")
    parser.add_argument("--sigma", type=float, default=0.0, help="lognormal spread of the latency (0: fixed)")
    parser.add_argument("--slots", type=int, help="requests computed at once; the rest wait in a queue")
    parser.add_argument("--count-file", help="write the request count here when stopped or every second")
    parser.add_argument("--processes", type=int, default=1, help="serve the port from this many processes")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--light", action="store_true", help="the asyncio server for benchmarks (default replies, no faults, no slots)"
    )
    args = parser.parse_args(argv)
    import signal

    # terminate() from a benchmark must run the cleanup below, helpers included.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    helpers = []

    def start_helpers(port):
        import subprocess

        command = [
            sys.executable,
            "-m",
            "tests.judging.fake_llm",
            "--latency",
            str(args.latency),
            "--sigma",
            str(args.sigma),
            "--port",
            str(port),
        ] + (["--light"] if args.light else [])
        helpers.extend(subprocess.Popen(command, stdout=subprocess.DEVNULL) for _ in range(args.processes - 1))
        time.sleep(0.5)

    if args.light:

        def ready(port):
            if args.port == 0 and args.processes > 1:
                start_helpers(port)
            print(f"http://127.0.0.1:{port}/v1", flush=True)

        try:
            serve_light(args.port, args.latency, args.sigma, ready)
        except KeyboardInterrupt:
            pass
        finally:
            for helper in helpers:
                helper.terminate()
            for helper in helpers:
                helper.wait()
        return 0
    fake = FakeLLM(latency=args.latency, port=args.port, slots=args.slots, sigma=args.sigma).start()
    if args.processes > 1:
        start_helpers(fake.server.server_address[1])
    print(fake.base_url, flush=True)
    try:
        while True:
            time.sleep(0.2)
            if args.count_file:
                with open(args.count_file, "w") as handle:
                    json.dump({"count": fake.count, "prompts": fake.prompts()}, handle)
    except KeyboardInterrupt:
        pass
    finally:
        for helper in helpers:
            helper.terminate()
        for helper in helpers:
            helper.wait()
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
