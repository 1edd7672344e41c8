"""An OpenAI-compatible upstream that misbehaves on purpose, on a loopback port, for the tests
of deadlines and caps (tests/judging/test_hostile_upstreams.py). Each mode is one attack:

- "drip": a 200 whose body comes a byte every half second (a call must end at its deadline;
  no gap is long enough for a read timeout to fire);
- "gzip-bomb": a small gzip body that inflates to `bomb_bytes` (memory must stay bounded);
- "huge": a reply `huge_chars` long, whatever max_tokens was asked (nothing of it stored);
- "usage": a good reply whose usage counts are `usage` (negative, huge, a list...);
- "slow": a good reply after `slow_seconds` of silence, as a slow model computing a long reply.

Every request is counted (`count`), so a test can tell what a resume paid again.
"""

from __future__ import annotations

import gzip
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.judging.fake_llm import default_reply


def _completion(body: dict, text: str, usage) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-hostile",
            "object": "chat.completion",
            "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage,
        }
    ).encode()


def gzip_bomb(size: int) -> bytes:
    """`size` zero bytes, gzipped (about a thousandth of that), made without holding them whole."""
    out = io.BytesIO()
    block = b"\0" * (1 << 20)
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as packed:
        for _ in range(size // len(block)):
            packed.write(block)
    return out.getvalue()


class HostileLLM:
    def __init__(self, mode: str):
        self.mode = mode
        self.count = 0
        self.drip_seconds = 0.5
        self.slow_seconds = 1.0
        self.bomb_bytes = 300 * 1024 * 1024
        self.huge_chars = 40 * 1024 * 1024
        self.usage: object = {"prompt_tokens": -5, "completion_tokens": 2**40}
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self._bomb: bytes | None = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> HostileLLM:
        if self.mode == "gzip-bomb":
            self._bomb = gzip_bomb(self.bomb_bytes)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _head(self, length: int, extra: dict | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                with hostile.lock:
                    hostile.count += 1
                mode = hostile.mode
                try:
                    if mode == "drip":
                        payload = _completion(body, default_reply(body), {"prompt_tokens": 1, "completion_tokens": 1})
                        self._head(len(payload))
                        for byte in payload:
                            if hostile.stopping.wait(hostile.drip_seconds):
                                return
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                    elif mode == "slow":
                        if hostile.stopping.wait(hostile.slow_seconds):
                            return
                        payload = _completion(body, default_reply(body), {"prompt_tokens": 1, "completion_tokens": 1})
                        self._head(len(payload))
                        self.wfile.write(payload)
                    elif mode == "gzip-bomb":
                        assert hostile._bomb is not None
                        self._head(len(hostile._bomb), {"Content-Encoding": "gzip"})
                        self.wfile.write(hostile._bomb)
                    elif mode == "huge":
                        head = b'{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "'
                        tail = b'"}}], "usage": {"prompt_tokens": 10, "completion_tokens": 16}}'
                        self._head(len(head) + hostile.huge_chars + len(tail))
                        self.wfile.write(head)
                        chunk = b"A" * (1 << 20)
                        for _ in range(hostile.huge_chars // len(chunk)):
                            self.wfile.write(chunk)
                        self.wfile.write(tail)
                    else:  # "usage"
                        payload = _completion(body, default_reply(body), hostile.usage)
                        self._head(len(payload))
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        return Handler
