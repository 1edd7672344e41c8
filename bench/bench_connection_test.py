"""The first "Test connection" of a fresh web process, with the SDK imported as the process starts
(config/wsgi.py) and without, side by side.

Each side runs in a new Python process, as a freshly started gunicorn worker would: Django set
up, then (with the warm-up) the SDK imported in the background while the "request" arrives a
moment later, then `endpoint_connection_test` against a loopback server that answers after one
second. What a person waits for is printed against the call's own second.

Run: .venv/bin/python bench/bench_connection_test.py
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALL_SECONDS = 1.0
# A throwaway database (the response cache lives there), unless DATABASE_URL names one.
DATABASE_URL = (
    os.environ.get("DATABASE_URL") or f"sqlite:///{tempfile.mkdtemp(prefix='userbench-bench-')}/bench.sqlite3"
)
# What the child process runs: $WARM says whether it imports the SDK as a web worker does.
CHILD = """
import os, sys, threading, time
sys.path.insert(0, os.environ["ROOT"])
import django
django.setup()
if os.environ["WARM"] == "1":
    from llm.sdk import load_sdk
    threading.Thread(target=load_sdk, daemon=True).start()
time.sleep(float(os.environ["ARRIVES_AFTER"]))
from llm.config import EndpointConfig
from llm.services import endpoint_connection_test
config = EndpointConfig(name="bench", base_url=os.environ["BASE_URL"], api_key_env="", default_model="m")
start = time.perf_counter()
result = endpoint_connection_test(config=config)
assert result.ok, result.error
print(time.perf_counter() - start)
"""


class SlowServer(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        time.sleep(CALL_SECONDS)
        body = json.dumps(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def first_test_seconds(*, warm: bool, base_url: str, arrives_after: float) -> float:
    env = {
        **os.environ,
        "ROOT": str(ROOT),
        "WARM": "1" if warm else "0",
        "ARRIVES_AFTER": str(arrives_after),
        "BASE_URL": base_url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "USERBENCH_ENV_FILE": "",
        "LLM_ALLOWED_INTERNAL_HOSTS": "127.0.0.0/8",
        "DATABASE_URL": DATABASE_URL,
    }
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DEBUG": "1", "USERBENCH_ENV_FILE": ""}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    # A person opens the page and presses the button a few seconds after the worker started.
    for arrives_after in (3.0, 0.0):
        cold, warm = [], []
        for _ in range(3):
            cold.append(first_test_seconds(warm=False, base_url=base_url, arrives_after=arrives_after))
            warm.append(first_test_seconds(warm=True, base_url=base_url, arrives_after=arrives_after))
        print(
            f"request {arrives_after:.0f} s after start: first test {min(cold):.2f} s without the warm-up, "
            f"{min(warm):.2f} s with it, for a {CALL_SECONDS:.0f} s call "
            f"(overhead {min(cold) - CALL_SECONDS:.2f} s against {min(warm) - CALL_SECONDS:.2f} s)"
        )
    server.shutdown()


if __name__ == "__main__":
    main()
