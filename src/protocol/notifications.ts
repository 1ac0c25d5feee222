/**
 * The notifications of the protocol, described once (with `methods.ts`):
 * their params, direction and the generations that send them.
 */
import type { z } from 'zod/mini';
import { BOTH, type Generation } from './method-spec.js';
import { resultSchemas } from './results.js';
import * as P from './schemas.js';

export interface NotificationSpec<Params extends z.ZodMiniType = z.ZodMiniType> {
  readonly params: Params;
  readonly direction: 'toClient' | 'toServer';
  readonly generations: readonly Generation[];
  readonly summary: string;
}

const notification = <Params extends z.ZodMiniType>(value: NotificationSpec<Params>) => value;

export const Notifications = {
  initialized: notification({
    get params() {
      return P.InitializedParams();
    },
    direction: 'toServer',
    generations: BOTH,
    summary: 'Completes the handshake; opens the gated families.',
  }),
  'process/output': notification({
    get params() {
      return resultSchemas().ProcessOutputNotification;
    },
    direction: 'toClient',
    generations: BOTH,
    summary: 'Output of a process, numbered by seq.',
  }),
  'process/exited': notification({
    get params() {
      return resultSchemas().ProcessExitedNotification;
    },
    direction: 'toClient',
    generations: BOTH,
    summary: 'A process exited.',
  }),
  'process/closed': notification({
    get params() {
      return resultSchemas().ProcessClosedNotification;
    },
    direction: 'toClient',
    generations: BOTH,
    summary: "A process's output ended: its last event.",
  }),
  'fs/missingChanged': notification({
    get params() {
      return resultSchemas().FsMissingChangedNotification;
    },
    direction: 'toClient',
    generations: [2],
    summary: 'A path of the fs/watchMissing watch appeared, or its present path went (once per watch).',
  }),
  'http/request/bodyDelta': notification({
    get params() {
      return resultSchemas().HttpBodyDeltaNotification;
    },
    direction: 'toClient',
    generations: BOTH,
    summary: 'A piece of a streamed HTTP response body.',
  }),
} as const satisfies Record<string, NotificationSpec>;

export type NotificationName = keyof typeof Notifications;
export type NotificationParamsOf<N extends NotificationName> = z.output<(typeof Notifications)[N]['params']>;

export const Notification = {
  Initialized: 'initialized',
  ProcessOutput: 'process/output',
  ProcessExited: 'process/exited',
  ProcessClosed: 'process/closed',
  HttpBodyDelta: 'http/request/bodyDelta',
  FsMissingChanged: 'fs/missingChanged',
} as const satisfies Record<string, NotificationName>;
