/** The signal names `process/signal` accepts (EXT-SIGNAL), case-sensitive. */
const SIGNALS: Record<string, NodeJS.Signals> = {
  interrupt: 'SIGINT',
  SIGINT: 'SIGINT',
  SIGTERM: 'SIGTERM',
  SIGKILL: 'SIGKILL',
  SIGHUP: 'SIGHUP',
  SIGQUIT: 'SIGQUIT',
  SIGUSR1: 'SIGUSR1',
  SIGUSR2: 'SIGUSR2',
  SIGCONT: 'SIGCONT',
  SIGSTOP: 'SIGSTOP',
  SIGTSTP: 'SIGTSTP',
  SIGWINCH: 'SIGWINCH',
};

export function signalByName(name: string): NodeJS.Signals | undefined {
  return Object.hasOwn(SIGNALS, name) ? SIGNALS[name] : undefined;
}
