/** The method families beyond processes: filesystem and HTTP. */
import { Method } from '../protocol/methods.js';
import * as S from '../protocol/schemas.js';
import type { NotificationChannel } from './exec-server.js';
import { fsMethods } from './fs/fs-methods.js';
import { HttpClient } from './http/http-client.js';
import { method, type MethodTable } from './method-table.js';

export interface ServerExtensions {
  methods: (channel: NotificationChannel) => MethodTable;
  shutdown: () => Promise<void> | void;
}

export function serverExtensions(): ServerExtensions {
  let http: HttpClient | undefined;
  return {
    methods: (channel) => {
      http = new HttpClient(channel);
      const client = http;
      return {
        ...fsMethods(channel.generation),
        [Method.HttpRequest]: method(S.HttpRequestParams, 'HttpRequestParams', (params) => client.request(params)),
      };
    },
    shutdown: () => http?.shutdown(),
  };
}
