import process from 'node:process';
import { parentPort, workerData } from 'node:worker_threads';

/*
 * A worker thread for runInWorker's tests (test/unit/db/worker-thread.test.ts), in plain
 * JavaScript so that Node runs it as it is. workerData.mode says how it ends.
 */

const port = parentPort;
const { mode } = workerData;

if (mode === 'done') {
  port.postMessage({ type: 'progress', step: 1 });
  port.postMessage({ type: 'progress', step: 2 });
  port.postMessage({ type: 'done', result: { rows: 2 } });
} else if (mode === 'coded') {
  port.postMessage({
    type: 'failed',
    error: {
      kind: 'coded',
      options: { code: 'copy.target_busy', message: 'busy', hint: 'wait', isRetryable: false },
    },
  });
} else if (mode === 'silent') {
  process.exit(3);
} else if (mode === 'abortable') {
  // Waits for the main thread's order, then ends as an aborted job would.
  port.once('message', (order) => {
    port.postMessage({ type: 'done', result: { heard: order.type } });
    port.close();
  });
  port.postMessage({ type: 'progress', step: 'waiting' });
} else if (mode === 'hog') {
  // Holds more than its heap's cap allows.
  const held = [];
  for (;;) held.push(new Array(100_000).fill(held.length));
}
