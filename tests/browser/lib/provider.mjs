// A stand-in OpenAI-compatible provider for browser specs (node http on 127.0.0.1:0): each
// `POST …/chat/completions` is answered by `respond(body)`, which returns the stream's chunks
// (objects sent as `data:` lines), or `{hold: [chunks]}` to send those and keep the stream open
// until the client goes away (a run to cancel). `GET …/models` lists one model.
import { createServer } from "node:http";

/** A text delta chunk. */
export const text = (content) => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
/** One tool call (whole arguments in one chunk). */
export const toolCall = (id, name, args) => ({
  choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }, finish_reason: null }],
});
/** The last chunk of a response. */
export const finish = (reason) => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });

export async function startProvider(respond) {
  const open = new Set();
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"data":[{"id":"stand-in-1"}]}');
        return;
      }
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        // not JSON: answered like any request
      }
      requests.push(body);
      const answer = respond(body);
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (c) => res.write(`data: ${JSON.stringify(c)}\n\n`);
      if (Array.isArray(answer)) {
        // A little apart, so the deltas stream.
        let i = 0;
        const next = () => {
          if (i < answer.length) {
            send(answer[i++]);
            setTimeout(next, 30);
          } else {
            res.end("data: [DONE]\n\n");
          }
        };
        next();
      } else {
        for (const c of answer.hold) send(c);
        open.add(res);
        res.on("close", () => open.delete(res));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    async stop() {
      for (const res of open) res.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
