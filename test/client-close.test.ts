import { describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';

describe('ExecServerClient.close', () => {
  it('lets the server answer what was sent before it: closing stdin is not losing the connection', async () => {
    for (const before of ['same tick', 'a turn of the event loop'] as const) {
      const client = await ExecServerClient.spawn({ clientName: 'close-test' });
      const answer = client.getMetadata('/tmp').then(
        (metadata) => metadata.isDirectory,
        (error: Error) => error.message,
      );
      if (before !== 'same tick') await new Promise((resolve) => setImmediate(resolve));
      await client.close();
      expect(await answer, before).toBe(true);
      await expect(client.getMetadata('/tmp')).rejects.toThrow('exec-server transport disconnected: client closed');
    }
  });
});
