#!/usr/bin/env python3
"""A loopback stand-in for an OpenAI-compatible server, for tests.

    fake_openai.py [--dim N] [--script JSON] [--watch-stdin]

Listens on 127.0.0.1 on a port the system picks and prints that port as the
first line of stdout. Python standard library only.

Endpoints (any path prefix, so both /v1/embeddings and /embeddings work):
  POST .../embeddings        OpenAI embeddings: {"model": M, "input": [texts]}
  POST .../chat/completions  OpenAI chat completions: {"model", "messages",
                             "temperature", "stream"}; streamed as server-sent
                             events when "stream" is true
  POST /_control/reset       body {"dim": N, "actions": {"embeddings": [ACTION, ...],
                             "chat": [ACTION, ...]}}; replaces the script and
                             clears the request log
  POST /_control/release     body {"name": S}: lets requests held under S go on
  POST /_control/wait        body {"kind": K, "count": N, "timeout_s": T}: waits until N
                             chat events of kind K ("start": a request arrived,
                             "first": its first content was sent, "closed": the client
                             closed the connection while it was held or delayed,
                             "done": the whole answer was sent) happened; returns
                             {"ok": BOOL, "events": [{"kind", "t" (time.time()), "n"}]}
  POST /_control/log         returns {"requests": [{"endpoint", "path", "auth",
                             "n_inputs", "model", "rest"}, ...]}; "auth" is the
                             Authorization header (or null), "rest" the path,
                             every other header and the body, so a test can
                             check a key was sent in that header only; chat
                             requests also carry "json", the parsed body

Each request to an endpoint consumes that endpoint's next ACTION; with none
left it is answered normally. ACTION keys (all optional):
  times: N          apply to the next N requests (default 1)
  delay_ms: N       sleep before answering
  status: N         answer with this status and an OpenAI-style error body
  body: S           ... or with this body instead
  echo_auth: true   ... whose message repeats the Authorization header
  retry_after: S    add a Retry-After header
  raw: S            answer 200 with this body (e.g. invalid JSON)
  dim: N            vectors of this dimension
  count_delta: N    return N more (or fewer) vectors than inputs
  reverse: true     list the vectors in reverse order (index fields kept)
  no_index: true    omit the index fields
  bad_value: "string" | "nan" | "huge"   spoil the first number
  big: N            answer 200 with N bytes; chunked: true omits Content-Length
  cut: true         announce the whole body but close after half of it

Chat ACTION keys (after the generic ones above, of which raw, big, status and
delay_ms apply to chat too):
  content: S        the answer (default "OK"); "{ctxK}" is replaced by
                    "path:start-end" of the K-th block (from 0) of the prompt,
                    read from its "## Block N [path:start-end] symbol" headers;
                    "{ctxK.path}", "{ctxK.start}", "{ctxK.end}" by its parts
  stream: BOOL      answer as events (true) or one JSON object (false) whatever
                    the request asked
  chunk: N          characters of content per event (default 7)
  chunk_delay_ms: N sleep between events
  stall_after: N    send N events, then nothing more: the connection is held
                    open until the client closes it (a "closed" event; an hour
                    at most), so a client's cancel is what ends the transfer
  hold: NAME        before answering, wait until /_control/release names NAME (or
                    the client goes away: a "closed" event); delay_ms waits the
                    same way (a client that leaves is noticed at once)
  hold_after: NAME  the same, after the first content event
  comments: true    a ": keep-alive" comment line before every event
  multiline: true   every event's JSON split over two data lines
  crlf: true        CRLF line ends
  no_done: true     end after the finish_reason event, without "data: [DONE]"
  truncate: true    stop in the middle of an event half way through, no [DONE]
  error_event: S    after the first content event, an event {"error": {"message": S}}
  refusal: S        the message refuses (content null, refusal S)
  finish_reason: S  default "stop"

Deterministic vectors: FNV-1a 64 of the UTF-8 text seeds a 64-bit LCG
(x = x * 6364136223846793005 + 1442695040888963407); component j is
((x >> 33) % 2001 - 1000) / 1000 after the (j+1)-th step. Tests recompute it.
"""

import argparse
import socket
import copy
import json
import re
import select
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MASK = (1 << 64) - 1


def fake_vector(text, dim):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & MASK
    out = []
    for _ in range(dim):
        h = (h * 6364136223846793005 + 1442695040888963407) & MASK
        out.append(((h >> 33) % 2001 - 1000) / 1000.0)
    return out


class State:
    def __init__(self, dim, actions):
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.released = set()
        self.events = []
        self.n_chat = 0
        self.dim = dim
        self.actions = {k: list(v) for k, v in actions.items()}
        self.log = []

    def reset(self, spec):
        with self.lock:
            self.dim = int(spec.get("dim", self.dim))
            self.actions = {k: list(v) for k, v in spec.get("actions", {}).items()}
            self.log = []
            # a reset starts a new scenario: /_control/wait counts its events only
            self.events = []

    def event(self, kind, n):
        with self.cond:
            self.events.append({"kind": kind, "t": time.time(), "n": n})
            self.cond.notify_all()

    def next_action(self, endpoint):
        with self.lock:
            queue = self.actions.get(endpoint, [])
            if not queue:
                return {}
            action = queue[0]
            times = int(action.get("times", 1))
            if times > 1:
                action["times"] = times - 1
                return copy.deepcopy(action)
            return queue.pop(0)


def embeddings(handler, req, action):
    """Answers an embeddings request after the generic actions were applied."""
    state = handler.server.state
    inputs = req.get("input", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    dim = int(action.get("dim", state.dim))
    data = [
        {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
        for i, t in enumerate(inputs)
    ]
    delta = int(action.get("count_delta", 0))
    if delta < 0:
        data = data[:delta]
    for i in range(delta):
        data.append({"object": "embedding", "index": len(data), "embedding": [0.5] * dim})
    if action.get("reverse"):
        data.reverse()
    if action.get("no_index"):
        for d in data:
            del d["index"]
    body = json.dumps(
        {
            "object": "list",
            "data": data,
            "model": req.get("model", "fake-embed"),
            "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
        }
    )
    bad = action.get("bad_value")
    if bad and data and dim:
        spoiled = {"string": '"x"', "nan": "NaN", "huge": "1e999"}[bad]
        at = body.index('"embedding": [') + len('"embedding": [')
        end = min(i for i in (body.find(",", at), body.find("]", at)) if i >= 0)
        body = body[:at] + spoiled + body[end:]
    handler.reply(200, body)


BLOCK = re.compile(r"^## Block (\d+) \[([^\]\n]*):(\d+)-(\d+)\]", re.M)
PLACEHOLDER = re.compile(r"\{ctx(\d+)(?:\.(path|start|end))?\}")


def fill(content, req):
    """Replaces {ctxK} placeholders with the prompt's block citations."""
    blocks = {}
    for m in req.get("messages") or []:
        text = m.get("content") if isinstance(m, dict) else None
        if isinstance(text, str):
            for b in BLOCK.finditer(text):
                blocks[int(b.group(1)) - 1] = (b.group(2), b.group(3), b.group(4))

    def sub(m):
        b = blocks.get(int(m.group(1)))
        if b is None:
            return m.group(0)
        part = m.group(2)
        if part is None:
            return "%s:%s-%s" % b
        return b[{"path": 0, "start": 1, "end": 2}[part]]

    return PLACEHOLDER.sub(sub, content)


def client_gone(handler):
    """Whether the client closed its end (nothing more to read, EOF)."""
    sock = handler.connection
    try:
        r, _, _ = select.select([sock], [], [], 0)
        return bool(r) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def hold(handler, name=None, seconds=None):
    """Waits for a release of name (or seconds); False when the client left."""
    state = handler.server.state
    end = time.monotonic() + seconds if seconds is not None else None
    while True:
        if client_gone(handler):
            if handler.chat_n:
                state.event("closed", handler.chat_n)
            return False
        with state.cond:
            if name is not None and name in state.released:
                return True
            if end is not None and time.monotonic() >= end:
                return True
            state.cond.wait(0.005)


def chat(handler, req, action):
    """Answers a chat completions request after the generic actions were applied."""
    content = fill(str(action.get("content", "OK")), req)
    model = req.get("model") or "fake-chat"
    finish = action.get("finish_reason", "stop")
    refusal = action.get("refusal")
    stream = action.get("stream", bool(req.get("stream")))
    if not stream:
        message = {"role": "assistant", "content": None if refusal else content}
        if refusal:
            message["refusal"] = refusal
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return handler.reply(200, json.dumps(body))

    def chunk(delta, finish_reason=None):
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    events = [chunk({"role": "assistant", "content": ""})]
    if refusal:
        events.append(chunk({"refusal": refusal}))
    else:
        size = max(1, int(action.get("chunk", 7)))
        for i in range(0, len(content), size):
            events.append(chunk({"content": content[i : i + size]}))
    if "error_event" in action:
        events.insert(2, {"error": {"message": action["error_event"]}})
    events.append(chunk({}, finish))
    nl = "\r\n" if action.get("crlf") else "\n"

    def encode(ev):
        text = json.dumps(ev)
        lines = [text]
        if action.get("multiline") and ", " in text:
            at = text.index(", ") + 2
            lines = [text[:at], text[at:]]
        out = ": keep-alive" + nl if action.get("comments") else ""
        return out + "".join("data: " + l + nl for l in lines) + nl

    wire = [encode(ev) for ev in events]
    if not action.get("no_done"):
        wire.append("data: [DONE]" + nl + nl)
    if action.get("truncate"):
        half = max(1, len(wire) // 2)
        wire = wire[:half] + [wire[half][: len(wire[half]) // 2]]
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()
    delay = action.get("chunk_delay_ms", 0) / 1000.0
    state = handler.server.state
    first = True
    stall = action.get("stall_after")
    for i, piece in enumerate(wire):
        if stall is not None and i >= stall:
            hold(handler, None, 3600)  # ends when the client goes ("closed")
            return
        handler.wfile.write(piece.encode("utf-8"))
        handler.wfile.flush()
        if first and '"content": "' in piece and '"content": ""' not in piece:
            first = False
            state.event("first", handler.chat_n)
            if "hold_after" in action and not hold(handler, action["hold_after"]):
                return
        if delay and not hold(handler, None, delay):
            return
    state.event("done", handler.chat_n)
    handler.close_connection = True


ENDPOINTS = {"embeddings": embeddings, "chat/completions": chat}


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-openai/1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, headers=(), length=True):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in headers:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        try:
            self.handle_post()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def handle_post(self):
        state = self.server.state
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) if n else b""
        path = self.path
        if path == "/_control/reset":
            state.reset(json.loads(raw or b"{}"))
            return self.reply(200, "{}")
        if path == "/_control/release":
            with state.cond:
                state.released.add(json.loads(raw or b"{}").get("name"))
                state.cond.notify_all()
            return self.reply(200, "{}")
        if path == "/_control/wait":
            spec = json.loads(raw or b"{}")
            end = time.monotonic() + float(spec.get("timeout_s", 30))
            with state.cond:
                while True:
                    got = [e for e in state.events if e["kind"] == spec.get("kind", "start")]
                    left = end - time.monotonic()
                    if len(got) >= int(spec.get("count", 1)) or left <= 0:
                        break
                    state.cond.wait(left)
                body = {"ok": len(got) >= int(spec.get("count", 1)), "events": list(state.events)}
            return self.reply(200, json.dumps(body))
        if path == "/_control/log":
            with state.lock:
                return self.reply(200, json.dumps({"requests": state.log}))
        endpoint = next((e for e in ENDPOINTS if path.endswith("/" + e)), None)
        if endpoint is None:
            return self.reply(404, json.dumps({"error": {"message": "no such endpoint"}}))

        try:
            req = json.loads(raw)
        except ValueError:
            req = None
        auth = self.headers.get("Authorization")
        rest = path + "\n"
        for k, v in self.headers.items():
            if k.lower() != "authorization":
                rest += "%s: %s\n" % (k, v)
        rest += raw.decode("utf-8", "replace")
        inputs = req.get("input") if isinstance(req, dict) else None
        entry = {
            "endpoint": endpoint,
            "path": path,
            "auth": auth,
            "n_inputs": len(inputs) if isinstance(inputs, list) else -1,
            "model": req.get("model") if isinstance(req, dict) else None,
            "rest": rest,
        }
        if endpoint == "chat/completions":
            entry["json"] = req
        with state.lock:
            state.log.append(entry)
        action = state.next_action("chat" if endpoint == "chat/completions" else endpoint)
        self.chat_n = 0
        if endpoint == "chat/completions":
            with state.lock:
                state.n_chat += 1
                self.chat_n = state.n_chat
            state.event("start", self.chat_n)
        if "delay_ms" in action and not hold(self, None, action["delay_ms"] / 1000.0):
            return
        if "hold" in action and not hold(self, action["hold"]):
            return
        if "status" in action:
            headers = []
            if "retry_after" in action:
                headers.append(("Retry-After", str(action["retry_after"])))
            msg = "scripted failure"
            if action.get("echo_auth"):
                msg = "Incorrect API key provided: %s" % auth
            body = action.get("body", json.dumps({"error": {"message": msg}}))
            return self.reply(int(action["status"]), body, headers)
        if "raw" in action:
            return self.reply(200, action["raw"])
        if "big" in action:
            size = int(action["big"])
            chunked = bool(action.get("chunked"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if not chunked:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            block = b" " * 65536
            while size > 0:
                self.wfile.write(block[: min(size, len(block))])
                size -= len(block)
            return
        if action.get("cut"):
            body = json.dumps({"data": [{"embedding": [0.0] * 256}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if not isinstance(req, dict):
            return self.reply(400, json.dumps({"error": {"message": "body is not a JSON object"}}))
        ENDPOINTS[endpoint](self, req, action)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--script", default="{}", help='{"actions": {"embeddings": [...]}}')
    ap.add_argument("--watch-stdin", action="store_true", help="exit when stdin reaches EOF")
    args = ap.parse_args()

    script = json.loads(args.script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(int(script.get("dim", args.dim)), script.get("actions", {}))
    print(server.server_address[1], flush=True)
    if args.watch_stdin:

        def watch():
            sys.stdin.buffer.read()
            server.shutdown()

        threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
