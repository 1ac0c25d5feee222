// The table of every error the server and the client create, in Markdown
// (docs/errors.md, written by `npm run schema`; a unit test keeps it current).
// Each constructor is called with its parameter names as placeholders.

/** `(limit) => …` → ['limit']. */
function parameterNames(fn) {
  const match = /^\(?([^)=]*)\)?\s*=>/.exec(fn.toString());
  return match
    ? match[1]
        .split(',')
        .map((name) => name.trim().replace(/\s*=.*$/, ''))
        .filter(Boolean)
    : [];
}

function rows(constructors) {
  return Object.entries(constructors)
    .filter(([name]) => name !== 'fromServer')
    .map(([name, make]) => {
      const error = make(...parameterNames(make).map((parameter) => `<${parameter}>`));
      return { name, code: error.code ?? error.kind, message: error.message };
    });
}

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
/** Inline code that may itself contain backticks. */
const code = (text) => `\`\` ${text} \`\``;
const table = (header, entries) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...entries.map((row) => `| ${row.map(cell).join(' | ')} |`)].join(
    '\n',
  );

export function errorTableMarkdown({ Errors, ErrorTexts, ClientErrors }) {
  return `${[
    '# Errors',
    '',
    'Generated from `src/protocol/errors.ts` and `src/client/errors.ts` by `npm run schema`; do not edit.',
    '`<name>` stands for a value filled in at run time. `osError` takes its code from the errno (see `src/server/os-error.ts`).',
    '',
    '## Server errors (JSON-RPC error responses)',
    '',
    table(
      ['constructor', 'code', 'message'],
      rows(Errors).map((row) => [code(row.name), row.code, code(row.message)]),
    ),
    '',
    '## Texts within other messages',
    '',
    'Params checks worded by the schemas (sent as −32602), and the `error` of a failed streamed HTTP body.',
    '',
    table(
      ['name', 'text'],
      Object.entries(ErrorTexts).map(([name, text]) => [code(name), code(text)]),
    ),
    '',
    '## Client errors',
    '',
    "A server's error response reaches the caller as an `ExecServerError` with the server's code and message (`fromServer`); the client's own failures are `ExecServerClientError`s with a `kind`.",
    '',
    table(
      ['constructor', 'code or kind', 'message'],
      rows(ClientErrors).map((row) => [code(row.name), row.code, code(row.message)]),
    ),
  ].join('\n')}\n`;
}
