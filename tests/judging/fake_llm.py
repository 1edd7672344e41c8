"""A real OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It serves POST /v1/chat/completions on a port the OS chooses. Replies come from a
`reply(body) -> str` function; faults are scripted per request (`script`, a list consumed
in order) or per prompt (`faults`, matched by a substring of the last message):
"429" (with Retry-After), "500", "hang" (never answers in time), "garbage" (200 with a
body that is not JSON), "junk" (a well-formed reply whose content is hostile: a 309-digit
score, 20,000 nested brackets, NUL bytes, nothing, or no content at all). `random_faults`
injects them at random instead, each at its rate ({"429": 0.05, ...}), from a seeded
generator; `injected` counts what was injected. Every request is counted and its body kept.

Run as a script (`python -m tests.judging.fake_llm --latency 0.2`) it prints its base URL
and serves until killed: the benchmark and the worker-crash test use it that way.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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


class _Server(ThreadingHTTPServer):
    # Several processes may serve one port (the benchmark's --processes): one Python process
    # tops out near 300 requests/s, less than 64 calls in flight at 200 ms need.
    allow_reuse_port = True
    daemon_threads = True
    request_queue_size = 512


class FakeLLM:
    def __init__(
        self, *, latency: float = 0.0, reply=default_reply, retry_after: str = "0", port: int = 0, seed: int = 0
    ):
        self.latency = latency
        self.reply = reply
        self.retry_after = retry_after
        self.script: list[str] = []
        self.faults: dict[str, list[str]] = {}
        self.random_faults: dict[str, float] = {}
        self.random = random.Random(seed)
        self.injected: Counter = Counter()
        self.junk_sent = 0
        self.hang_seconds = 5.0
        # The model name put in replies; None echoes the one asked for (a gateway may answer otherwise).
        self.reported_model: str | None = None
        self.requests: list[dict] = []
        self.statuses: Counter = Counter()
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", port), self._handler())
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
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                with fake.lock:
                    fake.requests.append(body)
                prompt = body["messages"][-1]["content"] if body.get("messages") else ""
                fault = fake._next_fault(prompt)
                if fake.latency:
                    time.sleep(fake.latency)
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
                if fault == "400":
                    self._send(400, b'{"error": {"message": "bad request: context too long"}}')
                    return
                if fault == "hang":
                    time.sleep(fake.hang_seconds)
                    return
                if fault == "garbage":
                    self._send(200, b"<html>502 upstream went away</html>")
                    return
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
                words = len(re.findall(r"\S+", text))
                payload = {
                    "id": f"chatcmpl-{len(fake.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": fake.reported_model or body.get("model", "fake"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": {
                        "prompt_tokens": 10,
                        "completion_tokens": words,
                        "total_tokens": 10 + words,
                    },
                }
                self._send(200, json.dumps(payload).encode())

        return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--count-file", help="write the request count here when stopped or every second")
    parser.add_argument("--processes", type=int, default=1, help="serve the port from this many processes")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    import signal

    # terminate() from a benchmark must run the cleanup below, helpers included.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    fake = FakeLLM(latency=args.latency, port=args.port).start()
    helpers = []
    if args.processes > 1:
        import subprocess

        port = fake.server.server_address[1]
        helpers = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.judging.fake_llm", "--latency", str(args.latency), "--port", str(port)],
                stdout=subprocess.DEVNULL,
            )
            for _ in range(args.processes - 1)
        ]
        time.sleep(0.5)
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
