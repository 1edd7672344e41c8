"""The loopback server of tests/judging/fake_llm.py with OpenAI's Batch API besides its chat
completions: `POST /v1/files` (a multipart upload), `GET /v1/files/{id}/content`,
`POST /v1/batches`, `GET /v1/batches` (a list), `GET /v1/batches/{id}` and
`POST /v1/batches/{id}/cancel`.

A batch waits ("validating", then "in_progress") until the test finishes it with `complete()`
(no test waits on time), or, for a benchmark, until `complete_after` seconds have passed since
it was made. Its lines are answered by the server's `reply(body)`; `line_faults` picks lines by
a substring of their last message: "failed" (a 500 in the error file), "context" (a 400 saying
the prompt is too long), "expired" (not run before the window closed: the batch ends
"expired"), "length" (a reply cut off at max_tokens), "missing" (in neither file), "junk" (a
200 whose body holds no message). `hostile_lines` are added to the output file as they are
(other runs' custom ids, garbage). `create_faults` are statuses the next `POST /v1/batches` answer with before one is made.
A hostile provider: `file_modes` serves a batch's "output" or "errors" file another way:
"gzip_bomb" (gzip-encoded, inflating to `bomb_bytes` of zeros), "trickle" (a byte at a time,
never ending until the client goes), "declared_huge" (a Content-Length of 2 GB, then the file
and the end of the connection), "cut_short" (half the file, then the end of the connection
before the Content-Length it declared), "not_jsonl" (an HTML page); `no_files` ends a batch
"completed" naming no file; `next_batch_ids` are the ids the next batches are given (an id
given twice, as a broken provider or gateway does). `file_reads` lists the files read.
`batch_api=False` answers 404 on every batch and file path,
as a server without the Batch API does. Uploads, batches made, batch lines answered and live
chat calls (`count`, from the base server) are counted; so are the Authorization headers seen.

Run as a script (`python -m tests.judging.fake_batch --complete-after 2`) it prints its base
URL and serves until killed.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import default as default_policy
from urllib.parse import parse_qs, urlparse

from tests.judging.fake_llm import FakeLLM


class FakeBatchLLM(FakeLLM):
    def __init__(self, *, batch_api: bool = True, complete_after: float | None = None, **options):
        self.batch_api = batch_api
        self.complete_after = complete_after
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.uploads: list[str] = []  # ids of the batch files uploaded, in order
        self.creates: list[str] = []  # ids of the batches made, in order
        self.cancels: list[str] = []
        self.lines_answered = 0
        self.line_faults: dict[str, str] = {}
        self.hostile_lines: list[bytes] = []
        # Statuses POST /v1/batches answers with before it makes one (a provider having a bad minute).
        self.create_faults: list[int] = []
        self.authorizations: list[str] = []
        self.file_modes: dict[str, str] = {}
        self.bomb_bytes = 64 * 1024 * 1024
        self.no_files = False
        self.next_batch_ids: list[str] = []
        self.file_reads: list[str] = []
        self.created_event = threading.Event()
        self._made_at: dict[str, float] = {}
        self._numbers = itertools.count(1)  # a batch id is never given twice, as a provider's
        super().__init__(**options)

    # ------------------------------------------------------------------ what a test drives

    def complete(self, batch_id: str | None = None) -> list[str]:
        """Finish a batch (the only one not finished when None): answer its lines, write its
        output and error files. Returns the ids finished."""
        with self.lock:
            open_ids = [key for key, batch in self.batches.items() if batch["status"] not in ("completed", "expired")]
        chosen = [batch_id] if batch_id else open_ids
        for key in chosen:
            self._finish(key)
        return chosen

    def progress(self, batch_id: str, *, completed: int, failed: int = 0) -> None:
        with self.lock:
            batch = self.batches[batch_id]
            batch.update(status="in_progress")
            batch["request_counts"].update(completed=completed, failed=failed)

    def lines_of(self, batch_id: str) -> list[dict]:
        """The request lines of a batch's input file."""
        batch = self.batches[batch_id]
        content = self.files[batch["input_file_id"]]["content"]
        return [json.loads(line) for line in content.splitlines() if line.strip()]

    # ------------------------------------------------------------------ what the server does

    def _finish(self, batch_id: str) -> None:
        with self.lock:
            batch = self.batches[batch_id]
            cancelled = batch["status"] in ("cancelling", "cancelled")
        output, errors, completed, failed, expired = [], [], 0, 0, False
        for number, line in enumerate(self.lines_of(batch_id)):
            body = line["body"]
            prompt = body["messages"][-1]["content"]
            fault = next((kind for needle, kind in self.line_faults.items() if needle in prompt), None)
            record = {"id": f"batch_req_{number}", "custom_id": line["custom_id"], "error": None}
            if cancelled:
                fault = "expired"
            if fault == "missing":
                continue
            if fault == "expired":
                expired = True
                failed += 1
                record.update(
                    response=None,
                    error={"code": "batch_expired", "message": "This request could not be executed in time."},
                )
                errors.append(record)
                continue
            if fault in ("failed", "context"):
                failed += 1
                status, message = (500, "server exploded") if fault == "failed" else (400, "context too long")
                record["response"] = {"status_code": status, "body": {"error": {"message": message}}}
                errors.append(record)
                continue
            completed += 1
            if fault == "junk":
                completion = {"choices": [{"message": {"role": "assistant"}, "finish_reason": "stop"}]}
            else:
                text = self.reply(body)
                finish = "stop"
                if fault == "length":
                    text, finish = text[: max(1, len(text) // 3)], "length"
                completion = {
                    "id": f"chatcmpl-b{number}",
                    "object": "chat.completion",
                    "model": self.reported_model or body.get("model", "fake"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split())},
                }
            record["response"] = {"status_code": 200, "request_id": f"req_{number}", "body": completion}
            output.append(record)
        with self.lock:
            self.lines_answered += completed
            batch["request_counts"].update(completed=completed, failed=failed)
            if (output or self.hostile_lines) and not self.no_files:
                content = b"".join(json.dumps(r).encode() + b"\n" for r in output) + b"".join(self.hostile_lines)
                batch["output_file_id"] = self._store("batch_output.jsonl", content, "batch_output", kind="output")
            if errors and not self.no_files:
                batch["error_file_id"] = self._store(
                    "batch_errors.jsonl",
                    b"".join(json.dumps(r).encode() + b"\n" for r in errors),
                    "batch_output",
                    kind="errors",
                )
            batch["status"] = "cancelled" if cancelled else ("expired" if expired else "completed")
            batch["completed_at"] = int(time.time())

    def _store(self, filename: str, content: bytes, purpose: str, kind: str = "input") -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = {"content": content, "filename": filename, "purpose": purpose, "kind": kind}
        return file_id

    def _file_object(self, file_id: str) -> dict:
        stored = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(stored["content"]),
            "created_at": int(time.time()),
            "filename": stored["filename"],
            "purpose": stored["purpose"],
            "status": "processed",
        }

    def _handler(self):
        fake = self
        Base = super()._handler()

        class Handler(Base):
            def _json(self, status: int, payload) -> None:
                self._send(status, json.dumps(payload).encode())

            def _batch_path(self) -> bool:
                path = urlparse(self.path).path
                return path.startswith("/v1/files") or path.startswith("/v1/batches")

            def _refuse_without_batch_api(self) -> bool:
                if fake.batch_api:
                    with fake.lock:
                        fake.authorizations.append(self.headers.get("Authorization", ""))
                    return False
                self._send(404, b'{"error": {"message": "Not Found"}}')
                return True

            def do_GET(self):
                if not self._batch_path() or self._refuse_without_batch_api():
                    self._send(404, b"Not Found")
                    return
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if parts[:2] == ["v1", "batches"] and len(parts) == 2:
                    query = parse_qs(url.query)
                    limit = int(query.get("limit", ["20"])[0])
                    with fake.lock:
                        listed = [dict(batch) for batch in reversed(list(fake.batches.values()))][:limit]
                    self._json(200, {"object": "list", "data": listed, "has_more": False})
                    return
                if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                    batch = fake.batches.get(parts[2])
                    if batch is None:
                        self._send(404, b'{"error": {"message": "No such batch"}}')
                        return
                    due = (
                        fake.complete_after is not None
                        and time.monotonic() - fake._made_at[parts[2]] >= fake.complete_after
                    )
                    if due and batch["status"] in ("validating", "in_progress"):
                        fake._finish(parts[2])
                    with fake.lock:
                        if batch["status"] == "validating":
                            batch["status"] = "in_progress"  # the next look finds it at work
                            snapshot = {**batch, "status": "validating"}
                        else:
                            snapshot = dict(batch)
                    self._json(200, snapshot)
                    return
                if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                    stored = fake.files.get(parts[2])
                    if stored is None:
                        self._send(404, b'{"error": {"message": "No such file"}}')
                        return
                    with fake.lock:
                        fake.file_reads.append(parts[2])
                    mode = fake.file_modes.get(stored["kind"])
                    if mode:
                        self._hostile_file(mode, stored["content"])
                        return
                    self._send(200, stored["content"])
                    return
                self._send(404, b"Not Found")

            def _hostile_file(self, mode: str, content: bytes) -> None:
                self.close_connection = True
                if mode == "not_jsonl":
                    self._send(200, b"<html><body>502 Bad Gateway</body></html>\n")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                if mode == "gzip_bomb":
                    bomb = gzip.compress(b"\0" * fake.bomb_bytes, compresslevel=9)
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(bomb)))
                    self.end_headers()
                    self._write(bomb)
                elif mode == "declared_huge":
                    self.send_header("Content-Length", str(2 * 1024**3))
                    self.end_headers()
                    self._write(content)
                elif mode == "cut_short":
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self._write(content[: len(content) // 2])
                elif mode == "trickle":
                    self.end_headers()  # no length: the body ends when the connection does, never here
                    while self._write(b" "):
                        time.sleep(0.01)

            def _write(self, data: bytes) -> bool:
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                    return True
                except OSError:
                    return False  # the client went

            def do_POST(self):
                if not self._batch_path():
                    super().do_POST()
                    return
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if self._refuse_without_batch_api():
                    return
                parts = urlparse(self.path).path.strip("/").split("/")
                if parts == ["v1", "files"]:
                    self._upload(raw)
                    return
                if parts == ["v1", "batches"]:
                    self._create(json.loads(raw or b"{}"))
                    return
                if parts[:2] == ["v1", "batches"] and len(parts) == 4 and parts[3] == "cancel":
                    with fake.lock:
                        batch = fake.batches.get(parts[2])
                        if batch is not None:
                            fake.cancels.append(parts[2])
                            if batch["status"] in ("validating", "in_progress"):
                                batch["status"] = "cancelling"
                    if batch is None:
                        self._send(404, b'{"error": {"message": "No such batch"}}')
                        return
                    self._json(200, batch)
                    return
                self._send(404, b"Not Found")

            def _upload(self, raw: bytes) -> None:
                content_type = self.headers.get("Content-Type", "")
                message = BytesParser(policy=default_policy).parsebytes(
                    b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
                )
                fields, filename, content = {}, "", b""
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if name == "file":
                        filename = part.get_filename() or ""
                        content = part.get_payload(decode=True) or b""
                    else:
                        fields[name] = (part.get_payload(decode=True) or b"").decode()
                if fields.get("purpose") != "batch" or not content:
                    self._send(400, b'{"error": {"message": "purpose must be batch, with a file"}}')
                    return
                with fake.lock:
                    file_id = fake._store(filename, content, "batch")
                    fake.uploads.append(file_id)
                    answer = fake._file_object(file_id)
                self._json(200, answer)

            def _create(self, body: dict) -> None:
                with fake.lock:
                    fault = fake.create_faults.pop(0) if fake.create_faults else None
                if fault is not None:
                    self._send(fault, b'{"error": {"message": "the batch service is busy"}}')
                    return
                file_id = body.get("input_file_id")
                if file_id not in fake.files or body.get("endpoint") != "/v1/chat/completions":
                    self._send(400, b'{"error": {"message": "unknown input_file_id or endpoint"}}')
                    return
                with fake.lock:
                    batch_id = fake.next_batch_ids.pop(0) if fake.next_batch_ids else f"batch_{next(fake._numbers)}"
                    lines = [line for line in fake.files[file_id]["content"].splitlines() if line.strip()]
                    batch = {
                        "id": batch_id,
                        "object": "batch",
                        "endpoint": body["endpoint"],
                        "input_file_id": file_id,
                        "completion_window": body.get("completion_window", "24h"),
                        "status": "validating",
                        "created_at": int(time.time()),
                        "metadata": body.get("metadata"),
                        "output_file_id": None,
                        "error_file_id": None,
                        "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                    }
                    # An id given twice: the first batch keeps it here, the second is kept aside.
                    stored_as = batch_id if batch_id not in fake.batches else f"{batch_id}~{len(fake.batches)}"
                    fake.batches[stored_as] = batch
                    fake._made_at[stored_as] = time.monotonic()
                    fake.creates.append(batch_id)
                fake.created_event.set()
                self._json(200, batch)

        return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--complete-after", type=float, default=1.0, help="seconds until a batch is finished")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    fake = FakeBatchLLM(complete_after=args.complete_after, port=args.port).start()
    print(fake.base_url, flush=True)
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
