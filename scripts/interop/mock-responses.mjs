/**
 * A loopback mock of the OpenAI Responses API that plays a scripted
 * conversation, so the real Codex CLI can drive an exec-server with no model
 * and no API key (PROTOCOL-V2.md §3 B).
 *
 * Each `POST …/responses` is answered (as SSE, which is what Codex reads) with
 * the next step of the script: a function call such as `exec_command`,
 * `write_stdin` or `view_image`. When the script is exhausted the answer is a
 * final assistant message, which ends `codex exec`. Every request body is
 * recorded: what Codex sends back to the model (`function_call_output` items,
 * input images) is how a scenario is judged.
 */
import http from 'node:http';

const FINAL_TEXT = 'interop-done';

/** The `response.completed` event Codex needs before it acts on the items. */
const completed = (id) => ({
  type: 'response.completed',
  response: {
    id,
    usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 },
  },
});

function writeSse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

/** The names of the tools offered in a request (function tools have `name`, built-ins only `type`). */
export function toolNames(body) {
  return (body?.tools ?? []).map((tool) => tool.name ?? tool.type);
}

/** The function_call_output items of a request, keyed by call_id. */
export function functionOutputs(body) {
  const outputs = new Map();
  for (const item of body?.input ?? []) if (item.type === 'function_call_output') outputs.set(item.call_id, item.output);
  return outputs;
}

/**
 * Text of a function_call_output's `output`, which Codex sends either as a
 * string or as a list of content items (view_image sends an image item).
 */
export function outputText(output) {
  if (output === undefined || output === null) return '';
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((part) => part.text ?? '').join('');
  if (typeof output === 'object' && 'content' in output) return outputText(output.content);
  return JSON.stringify(output);
}

/**
 * Starts the mock. `script` is a list of steps; each step is `{ name, args }`
 * or a function `(body, requests) => { name, args }` (so a step can depend on
 * the tool schema Codex offered, or on an earlier output). Resolves to
 * `{ baseUrl, requests, close() }`; `requests` fills up as Codex talks.
 */
export async function startMockResponses(script) {
  const requests = [];
  let step = 0;
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      // Anything but the Responses endpoint (model list probes and the like) gets a plain 404.
      if (req.method !== 'POST' || !req.url.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
      } catch (error) {
        res.writeHead(400);
        res.end(String(error));
        return;
      }
      requests.push(body);
      const id = `resp_${requests.length}`;
      const events = [{ type: 'response.created', response: { id } }];
      if (step < script.length) {
        const entry = script[step];
        const callId = `call_${step + 1}`;
        step += 1;
        const { name, args } = typeof entry === 'function' ? entry(body, requests) : entry;
        events.push({
          type: 'response.output_item.done',
          item: { type: 'function_call', name, arguments: JSON.stringify(args), call_id: callId },
        });
      } else {
        events.push({
          type: 'response.output_item.done',
          item: { type: 'message', role: 'assistant', id: `msg_${requests.length}`, content: [{ type: 'output_text', text: FINAL_TEXT }] },
        });
      }
      events.push(completed(id));
      writeSse(res, events);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    finalText: FINAL_TEXT,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
