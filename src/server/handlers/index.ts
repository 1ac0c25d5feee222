/** Every method's handler, assembled for one connection (`Handlers` fails to compile if one is missing). */
import type { AnswerBudget } from '../answer-budget.js';
import type { Generation } from '../client-generation.js';
import type { SandboxSupport } from '../environment-info.js';
import type { Handlers } from '../dispatcher.js';
import type { FileHandles } from '../fs/file-handles.js';
import type { MissingWatches } from '../fs/missing-watch.js';
import type { FsSandbox } from '../sandbox/confined-fs.js';
import { environmentInfo } from '../environment-info.js';
import type { HttpClient } from '../http/http-client.js';
import { initializeResult } from '../initialize-result.js';
import type { Lifecycle } from '../lifecycle.js';
import type { ProcessManager } from '../process/process-manager.js';
import { fsHandlers } from './fs.js';
import { processHandlers } from './process.js';

export interface HandlerDependencies {
  lifecycle: Lifecycle;
  /** Attaches the connection to a new session or the one named; returns its id. */
  attach: (resumeSessionId: string | undefined) => string;
  /** The attached session's processes. */
  processes: () => ProcessManager;
  sandboxSupport: () => SandboxSupport;
  http: HttpClient;
  files: FileHandles;
  watches: MissingWatches;
  sandbox: FsSandbox;
  /** File contents held in answers the client has not taken yet. */
  answers: AnswerBudget;
  generation: () => Generation;
}

export function serverHandlers(dependencies: HandlerDependencies): Handlers {
  const { lifecycle, attach, processes, sandboxSupport, http, files, watches, sandbox, answers, generation } = dependencies;
  return {
    initialize: (params) => initializeResult(lifecycle.initialize(params, attach).sessionId, sandboxSupport()),
    ...processHandlers(processes),
    'environment/info': () => environmentInfo(generation(), sandboxSupport()),
    'environment/status': () => ({ status: 'ready' }),
    ...fsHandlers(generation, files, watches, sandbox, answers),
    'http/request': (params, request) => http.request(params, request.decodeBase64, generation()),
  };
}
