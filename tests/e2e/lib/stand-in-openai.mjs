// A local stand-in for an OpenAI-compatible chat-completions provider (node:http only), scripted
// per test: `POST /v1/chat/completions` answers the next queued reply as SSE `data:` chunks
// ending with `data: [DONE]`; `GET /v1/models` answers one model (the host's "Test
// connection"). Every request is recorded (method, path, authorization header, parsed body,
// arrival time).
//
// A reply is one of:
//   { deltas: [string | (i) => string, ...], delayMs?, firstByteDelayMs?, toolCall?: {name, arguments}, usage? }
//       text deltas (a function is called when its chunk is sent: the bench stamps send times),
//       `delayMs` between chunks (`firstByteDelayMs` before the response head), then an optional tool call (its JSON arguments in two chunks),
//       then finish_reason ("tool_calls" or "stop") and a usage chunk;
//   { error: { status, body? } }  an HTTP error with an OpenAI-style JSON error body.
// `replyWhen(keyword, ...replies)` queues replies for the requests whose first user message (the
// task's prompt, repeated in every round of its conversation) contains `keyword`: a scripted
// sequence of tool calls per prompt, unaffected by what other tasks ask meanwhile; a request
// matching no keyword with replies left takes the next plain `reply`.
// With no reply queued the request gets HTTP 400 `stand-in: no scripted reply` (a test that
// forgot one fails on that, never on a made-up answer). A client that disconnects (a cancelled
// run) stops its stream: nothing more is written.

import { createServer } from "node:http";

/**
 * Wall-clock milliseconds with sub-millisecond resolution: `Date.now()` aligned on one of its
 * ticks, advanced by `process.hrtime`. Comparable with a page's `performance.timeOrigin +
 * performance.now()` up to how each side's clock was read (see docs/benchmarks.md).
 */
export const wallClock = (() => {
  const first = Date.now();
  let base = first;
  let h0 = process.hrtime.bigint();
  // Wait for the next millisecond tick so `base` is the start of a millisecond (≤ 1 ms spin).
  for (;;) {
    const now = Date.now();
    if (now !== first) {
      base = now;
      h0 = process.hrtime.bigint();
      break;
    }
  }
  return () => base + Number(process.hrtime.bigint() - h0) / 1e6;
})();

export class StandInProvider {
  constructor({ model = "stand-in" } = {}) {
    this.model = model;
    /** @type {object[]} */
    this.replies = [];
    /** @type {{keyword: string, replies: object[]}[]} replies picked by prompt keyword */
    this.keyed = [];
    /** @type {{method: string, path: string, authorization: string | null, body: any, at: number}[]} */
    this.requests = [];
    /** Chat requests whose stream the client closed before the end. */
    this.aborted = 0;
    this.server = createServer((req, res) => this.#handle(req, res));
    this.port = 0;
    this.waiters = [];
  }

  /** Listens on 127.0.0.1 (a free port); resolves with the `/v1` base URL. */
  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = this.server.address().port;
    return this.baseUrl;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async stop() {
    this.server.closeAllConnections?.();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Queues replies for the next chat requests, in order. */
  reply(...replies) {
    this.replies.push(...replies);
    return this;
  }

  /** Queues replies for the next chat requests whose prompt contains `keyword`, in order. */
  replyWhen(keyword, ...replies) {
    let entry = this.keyed.find((k) => k.keyword === keyword);
    if (!entry) this.keyed.push((entry = { keyword, replies: [] }));
    entry.replies.push(...replies);
    return this;
  }

  /** The next reply for a request body: by prompt keyword first, else the plain queue. */
  #nextReply(body) {
    const first = Array.isArray(body?.messages) ? body.messages.find((m) => m?.role === "user") : undefined;
    const content = first?.content;
    const prompt = typeof content === "string" ? content
      : Array.isArray(content) ? content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("") : "";
    const keyed = this.keyed.find((k) => k.replies.length > 0 && prompt.includes(k.keyword));
    return keyed ? keyed.replies.shift() : this.replies.shift();
  }

  /** The chat-completions requests received so far. */
  get chats() {
    return this.requests.filter((r) => r.path.endsWith("/chat/completions"));
  }

  /** Resolves when at least `n` chat requests arrived (or rejects after `timeoutMs`). */
  waitForChats(n, timeoutMs = 20_000) {
    if (this.chats.length >= n) return Promise.resolve(this.chats);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stand-in: ${this.chats.length} of ${n} chat requests after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ n, resolve: (v) => { clearTimeout(timer); resolve(v); } });
    });
  }

  #handle(req, res) {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size <= 8 * 1024 * 1024) chunks.push(c);
    });
    req.on("end", () => {
      const at = wallClock();
      let body = null;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : null;
      } catch {
        body = { unparsed: true };
      }
      const path = (req.url ?? "").split("?")[0];
      this.requests.push({ method: req.method ?? "", path, authorization: req.headers.authorization ?? null, body, at });
      if (req.method === "GET" && path.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: this.model, object: "model" }] }));
        return;
      }
      if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
        this.#error(res, 404, `stand-in: no route ${req.method} ${path}`);
        return;
      }
      for (const w of this.waiters.filter((w) => this.chats.length >= w.n)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(this.chats);
      }
      const reply = this.#nextReply(body);
      if (reply === undefined) {
        this.#error(res, 400, "stand-in: no scripted reply");
      } else if (reply.error) {
        this.#error(res, reply.error.status, reply.error.message ?? "stand-in error", reply.error.body);
      } else {
        this.#stream(req, res, reply).catch(() => res.destroy());
      }
    });
  }

  #error(res, status, message, body) {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: { message, type: "invalid_request_error", code: "stand_in" } }));
  }

  async #stream(req, res, reply) {
    let closed = false;
    res.on("close", () => {
      if (!res.writableFinished) {
        closed = true;
        this.aborted += 1;
      }
    });
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    if (reply.firstByteDelayMs) await sleep(reply.firstByteDelayMs);
    if (closed) return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const id = `chatcmpl-standin-${this.requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta, finish = null, extra = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    const deltas = reply.deltas ?? [];
    res.write(chunk({ role: "assistant", content: "" }));
    for (let i = 0; i < deltas.length; i++) {
      if (i > 0 && reply.delayMs) await sleep(reply.delayMs);
      if (closed) return;
      const d = deltas[i];
      res.write(chunk({ content: typeof d === "function" ? d(i) : d }));
    }
    if (reply.toolCall) {
      if (reply.delayMs) await sleep(reply.delayMs);
      if (closed) return;
      const args = JSON.stringify(reply.toolCall.arguments ?? {});
      const half = Math.floor(args.length / 2);
      res.write(chunk({ tool_calls: [{ index: 0, id: reply.toolCall.id ?? "call_standin_1", type: "function",
        function: { name: reply.toolCall.name, arguments: args.slice(0, half) } }] }));
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }));
    }
    if (closed) return;
    res.write(chunk({}, reply.toolCall ? "tool_calls" : "stop"));
    const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: deltas.length };
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: this.model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  }
}
