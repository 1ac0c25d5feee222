/** The method families beyond processes: filesystem and HTTP (issue 3 adds them here). */
import type { Notifier } from './exec-server.js';
import type { MethodTable } from './method-table.js';

export interface ServerExtensions {
  methods: (notify: Notifier) => MethodTable;
  shutdown: () => Promise<void> | void;
}

export function serverExtensions(): ServerExtensions {
  return { methods: () => ({}), shutdown: () => undefined };
}
