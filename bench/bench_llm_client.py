"""The LLM client alone: what one call costs the client's CPU, by transport, side by side.

A judge run at 64 calls in flight against a server answering in 200 ms needs 320 calls a
second from one worker, and a worker is one Python process: its CPU per call decides whether
the window stays full. This sends the same calls, 64 in flight, through `llm.sending`'s
ChatSender as `llm.pool` makes it (the SDK's request and transport without its per-call
models: what the app sends with), through the `openai` client's own `post` as
`llm.pool.make_client` builds it (the SDK's aiohttp transport), and through the SDK's default
httpx transport, against the loopback server of the throughput benchmark (its own
processes), with no database and no Django work in between: the floor under
`bench_judge_throughput.py`. It prints the wall time against the ideal (calls x latency / 64)
and the client's CPU per call. Nothing asserts.

    .venv/bin/python bench/bench_llm_client.py [--calls 3692] [--latency 0.2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._django import setup_django  # noqa: E402 - llm.pool is part of the Django project

IN_FLIGHT = 64
LABELS = {
    "lean": "lean (llm.sending)",
    "aiohttp": "SDK post, aiohttp (pool)",
    "httpx": "SDK post, httpx (default)",
}
PROMPT = "Judge this answer. " + "The answer under review, as long as a typical one. " * 40


def start_server(latency: float, processes: int) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.judging.fake_llm", "--light", "--latency", str(latency)]
        + ["--processes", str(processes)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None  # a pipe, as asked
    return server, server.stdout.readline().strip()


def clients(kind: str, base_url: str) -> list:
    """IN_FLIGHT connections' worth of clients, as `llm.pool.ClientPool` holds them."""
    import httpx2
    import openai

    from llm.config import EndpointConfig
    from llm.pool import CONNECTIONS_PER_CLIENT, make_client, make_sender

    count = IN_FLIGHT // CONNECTIONS_PER_CLIENT
    endpoint = EndpointConfig("bench", base_url, "BENCH_NO_KEY", "m", timeout_seconds=60, max_retries=0)
    if kind == "lean":
        return [make_sender(endpoint, CONNECTIONS_PER_CLIENT + 4) for _ in range(count)]
    if kind == "aiohttp":
        return [make_client(endpoint, CONNECTIONS_PER_CLIENT + 4) for _ in range(count)]
    limits = httpx2.Limits(
        max_connections=CONNECTIONS_PER_CLIENT + 4, max_keepalive_connections=CONNECTIONS_PER_CLIENT + 4
    )
    return [
        openai.AsyncOpenAI(
            base_url=base_url,
            api_key="bench",
            max_retries=0,
            timeout=60,
            http_client=httpx2.AsyncClient(timeout=60, verify=False, limits=limits),
        )
        for _ in range(count)
    ]


async def send(kind: str, base_url: str, calls: int) -> tuple[float, float]:
    import httpx2

    pool = clients(kind, base_url)
    queue = list(range(calls))

    async def lane(n: int) -> None:
        client = pool[n % len(pool)]
        while queue:
            index = queue.pop()
            body = {"model": "m", "messages": [{"role": "user", "content": f"{index} {PROMPT}"}], "max_tokens": 1024}
            if kind == "lean":
                content, _headers = await client.post(body)
                json.loads(content)
                continue
            response = await client.post("/chat/completions", body=body, cast_to=httpx2.Response)
            response.json()

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(lane(n) for n in range(IN_FLIGHT)))
    elapsed, used = time.perf_counter() - started, time.process_time() - cpu
    for client in pool:
        await client.close()  # a ChatSender closes its client
    return elapsed, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3692)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=2, help="each transport this many times, in turns")
    parser.add_argument("--server-processes", type=int, default=2)
    args = parser.parse_args()
    setup_django()
    server, base_url = start_server(args.latency, args.server_processes)
    ideal = args.calls * args.latency / IN_FLIGHT
    print(f"{args.calls} calls, {IN_FLIGHT} in flight, {args.latency * 1000:.0f} ms each: ideal {ideal:.2f} s")
    results: dict[str, list[tuple[float, float]]] = {"lean": [], "aiohttp": [], "httpx": []}
    try:
        for _ in range(args.rounds):
            for kind in results:
                results[kind].append(asyncio.run(send(kind, base_url, args.calls)))
    finally:
        server.terminate()
    for kind, runs in results.items():
        walls = ", ".join(f"{wall:.2f} s = {wall / ideal:.3f}x" for wall, _ in runs)
        per_call = min(cpu for _, cpu in runs) / args.calls * 1000
        label = LABELS[kind]
        print(f"  {label:26}: {walls}; client CPU {per_call:.2f} ms per call")
    best = {kind: min(cpu for _, cpu in runs) for kind, runs in results.items()}
    print(f"  CPU per call, httpx / aiohttp: {best['httpx'] / best['aiohttp']:.2f}x")
    print(f"  CPU per call, SDK post (aiohttp) / lean: {best['aiohttp'] / best['lean']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
