/** The `process/*` handlers: the attached session's process manager does the work. */
import type { HandlerGroup, MethodsOfFamily } from '../dispatcher.js';
import type { ProcessManager } from '../process/process-manager.js';

export function processHandlers(manager: () => ProcessManager): HandlerGroup<MethodsOfFamily<'exec'>> {
  return {
    'process/start': (params) => manager().start(params),
    'process/read': (params) => manager().read(params),
    'process/write': (params, request) => manager().write(params, request.decodeBase64),
    'process/terminate': (params) => manager().terminate(params.processId),
    'process/resize': (params) => manager().resize(params.processId, params.rows, params.cols),
    'process/signal': (params) => manager().signal(params.processId, params.signal),
  };
}
