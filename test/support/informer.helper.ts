import { waitFor } from './net.helper.js';

/** What of a @kubernetes/client-node informer (its ListWatch, 1.x and 2.x alike) this reads. */
interface StoppableInformer {
  stop(): Promise<void>;
}

/**
 * Stops a client-node informer for good. Its ListWatch holds no request between two watches (the
 * server ended one and it is opening the next), and a stop() in that gap aborts nothing: the watch
 * it opens afterwards goes on and keeps reporting. Waiting for an open watch and stopping in the
 * same turn of the event loop leaves no gap. Reads the ListWatch's private `request`.
 */
export async function stopInformerWhileWatching(informer: StoppableInformer): Promise<void> {
  await waitFor('an open watch of the informer to stop', () => {
    if ((informer as unknown as { request?: unknown }).request === undefined) return Promise.resolve(false);
    void informer.stop(); // synchronous up to the abort
    return Promise.resolve(true);
  });
}
