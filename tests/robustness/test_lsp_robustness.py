"""`devfix lsp` answers every request and ends when told (issue 13): a raw JSON-RPC client, so
that malformed requests reach the server as an editor's bug would send them."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

URI = "file:///tmp/devfix-robustness/train.py"


class RawClient:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "devfix", "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}})
        assert self.response(0)["result"]["capabilities"]
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def response(self, message_id: int, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self._messages():
                if message.get("id") == message_id and "method" not in message:
                    return message
            ready, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    break
                self.buffer += chunk
        raise AssertionError(f"no response to request {message_id}")

    def _messages(self):
        while b"\r\n\r\n" in self.buffer:
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
            if len(rest) < length:
                return
            self.buffer = rest[length:]
            yield json.loads(rest[:length])

    def open(self, text: str) -> None:
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": text}}})

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture
def client():
    raw = RawClient()
    yield raw
    raw.close()


@pytest.mark.parametrize("params", [{"textDocument": {}}, 5, {"textDocument": {"uri": 3}, "range": "x", "context": {}}])
def test_a_request_with_invalid_params_gets_an_invalid_params_error(client, params):
    client.send({"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeAction", "params": params})
    assert client.response(7)["error"]["code"] == -32602
    client.send({"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
    assert "result" in client.response(8)  # still alive and answering


def test_lone_surrogates_in_a_document_are_no_internal_error(client):
    client.open("import torch\nname = '\ud800'\nx = torch.ones(2).cuda()\n")
    client.send({"jsonrpc": "2.0", "id": 9, "method": "textDocument/codeAction",
                 "params": {"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}},
                            "context": {"diagnostics": []}}})
    assert "error" not in client.response(9)


def test_a_document_over_max_file_bytes_is_not_analysed(client, tmp_path):
    client.open("import torch\nx = torch.ones(2).cuda()\n" + "# filler\n" * 700_000)  # over 5 MiB
    client.send({"jsonrpc": "2.0", "id": 12, "method": "textDocument/codeAction",
                 "params": {"textDocument": {"uri": URI}, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
                            "context": {"diagnostics": []}}})
    started = time.monotonic()
    assert client.response(12)["result"] in ([], None)
    assert time.monotonic() - started < 5


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as file:
            found |= {int(child) for child in file.read().split()}
    return found


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in pids):
        time.sleep(0.05)
    return {pid for pid in pids if os.path.exists(f"/proc/{pid}") and _not_zombie(pid)}


def _not_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


LONG_MODULE = "import torch\nx = torch.zeros(3).cuda()\n" + "".join(
    f"def f{index}(x):\n    y = x + {index}\n    return y * 2\n\n" for index in range(12_000)
)  # its full analysis takes ~25 s


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads the process tree from Linux's /proc")
def test_exit_exits_while_an_analysis_runs(client):
    client.open(LONG_MODULE)
    time.sleep(1.0)  # the worker is analysing
    workers = children(client.process.pid)
    assert workers, "the server runs its analyses in a worker process"
    client.send({"jsonrpc": "2.0", "id": 20, "method": "shutdown"})
    assert "result" in client.response(20, timeout=10)
    started = time.monotonic()
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(timeout=10) == 0
    assert time.monotonic() - started < 5
    assert wait_gone(workers, 5) == set()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads the process tree from Linux's /proc")
def test_a_server_killed_while_its_worker_starts_leaves_no_process():
    """The worker takes a second to start (spawn, import): killed before it is up, the server must
    still take it along (it once lived on, holding the editor's pipes)."""
    raw = RawClient()
    workers = children(raw.process.pid)
    raw.close()  # SIGKILL
    assert workers
    assert wait_gone(workers, 10) == set()


def code_action_request(message_id: int, uri: str, last_line: int = 3) -> dict:
    return {"jsonrpc": "2.0", "id": message_id, "method": "textDocument/codeAction",
            "params": {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": last_line, "character": 0}},
                       "context": {"diagnostics": []}}}


def test_malformed_messages_and_unknown_methods_leave_the_server_answering(client):
    body = b'{"jsonrpc": "2.0", "id": 3, "method": '  # cut short: not JSON
    client.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    client.process.stdin.flush()
    client.send({"jsonrpc": "2.0", "id": 4, "method": "no/such/method", "params": {}})
    assert client.response(4)["error"]["code"] == -32601
    client.send({"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
    assert "result" in client.response(5)


def test_an_edit_out_of_the_document_s_range_is_no_error(client):
    client.open("import torch\nx = torch.zeros(2).cuda()\n")
    client.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 50, "character": 3}, "end": {"line": 99, "character": 0}}, "text": "zz"}]}})
    client.send(code_action_request(6, URI, last_line=900))
    assert "error" not in client.response(6)


def test_requests_on_a_document_never_opened_and_not_on_disk_are_answered_empty(client):
    missing = "file:///tmp/devfix-robustness/never-opened-and-missing.py"
    client.send(code_action_request(7, missing))
    assert client.response(7)["result"] == []
    client.send({"jsonrpc": "2.0", "id": 8, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": missing}}})
    assert client.response(8)["result"]["items"] == []
    client.send({"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand",
                 "params": {"command": "devfix.applyAutofix", "arguments": [{"uri": missing}]}})
    assert "error" not in client.response(9)
