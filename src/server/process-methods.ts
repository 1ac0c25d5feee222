/** The `process/*` and `environment/info` entries of the method table. */
import { Method } from '../protocol/methods.js';
import * as S from '../protocol/schemas.js';
import type { Generation } from './client-generation.js';
import { environmentInfo } from './environment-info.js';
import { method, type MethodTable } from './method-table.js';
import type { ProcessManager } from './process/process-manager.js';

export function processMethods(manager: ProcessManager, generation: () => Generation): MethodTable {
  return {
    [Method.ProcessStart]: method(S.ProcessStartParams, 'ExecParams', (params) => manager.start(params)),
    [Method.ProcessRead]: method(S.ProcessReadParams, 'ReadParams', (params) => manager.read(params)),
    [Method.ProcessWrite]: method(S.ProcessWriteParams, 'WriteParams', (params) => manager.write(params)),
    [Method.ProcessTerminate]: method(S.ProcessIdParams, 'TerminateParams', (params) =>
      manager.terminate(params.processId),
    ),
    [Method.ProcessResize]: method(S.ProcessResizeParams, 'ResizeParams', (params) =>
      manager.resize(params.processId, params.rows, params.cols),
    ),
    [Method.ProcessSignal]: method(S.ProcessSignalParams, 'SignalParams', (params) =>
      manager.signal(params.processId, params.signal),
    ),
    [Method.EnvironmentInfo]: method(S.EnvironmentInfoParams, 'EnvironmentInfoParams', () => environmentInfo(generation())),
    [Method.EnvironmentStatus]: method(S.EnvironmentInfoParams, 'EnvironmentStatusParams', () => ({ status: 'ready' })),
  };
}
