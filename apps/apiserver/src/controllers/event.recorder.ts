/**
 * The event recorder of the built-in controllers (client-go's EventBroadcaster and
 * EventRecorder, one per component): `recorder.for('controllermanager').record(obj, 'Normal',
 * 'NoPods', 'No matching pods found')` queues a core/v1 Event about `obj` and returns at once.
 * The logic (naming, correlation, the bounded queue and its retries) is in
 * event.recorder.logic.ts. Events are written through the Event kind's GenericStore, as the
 * controllers write their own objects: validation and admission apply, authorization does not
 * (the server writes them itself). reportingInstance is this node's name. Failed writes are
 * logged only with NODE_DEBUG=kapi-events.
 */
import { debuglog } from 'node:util';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG, STORES, type StoreFactory } from '../tokens.js';
import {
  EventCorrelator,
  EventSinkQueue,
  goSprintf,
  makeEvent,
  referenceOf,
  UniqueNanos,
  type CoreEvent,
  type EventType,
  type ObjectReference,
} from './event.recorder.logic.js';

const debug = debuglog('kapi-events');

const RECORDER_CTX = (): RequestContext => ({
  user: { username: 'system:kube-controller-manager', groups: ['system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** What a controller records with. */
export interface ComponentRecorder {
  /**
   * Records an event about `obj` (an object, or a reference to one). With `args`, `message` is a
   * format (Eventf: %v %s %d %q); without, the message itself (Event). Never waits, never throws.
   */
  record(obj: KubeObject | ObjectReference, type: EventType, reason: string, message: string, ...args: unknown[]): void;
}

/** The recorder provider: one correlator and one queue for every component of this node. */
@Injectable()
export class EventRecorder implements BeforeApplicationShutdown {
  private readonly nanos = new UniqueNanos();
  private readonly correlator = new EventCorrelator({ now: () => Date.now(), nanos: this.nanos });
  readonly queue: EventSinkQueue;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {
    this.queue = new EventSinkQueue({
      correlator: this.correlator,
      log: (line) => debug('%s', line),
      sink: {
        create: async (e) => (await this.store().create(e.metadata.namespace, e, this.writeOptions(e))) as CoreEvent,
        patch: async (e, patch) =>
          (await this.store().patch(e.metadata.namespace, e.metadata.name, 'strategic-merge-patch', patch, this.writeOptions(e))) as CoreEvent,
      },
    });
  }

  private store() {
    const d = this.registry.lookup('', 'v1', 'events') as KindDeclaration | undefined;
    if (!d) throw Object.assign(new Error('events are not served'), { code: 404 });
    return this.stores.storeFor(d);
  }

  private writeOptions(e: CoreEvent) {
    return { ctx: RECORDER_CTX(), fieldValidation: 'Ignore' as const, fieldManager: e.source.component };
  }

  /** The recorder of one component (source.component and reportingComponent of its events). */
  for(component: string): ComponentRecorder {
    return {
      record: (obj, type, reason, message, ...args) => {
        try {
          if (type !== 'Normal' && type !== 'Warning') {
            debug('event recorder: unsupported event type %s', String(type));
            return;
          }
          const now = Date.now();
          const ref = referenceOf(obj);
          const text = args.length ? goSprintf(message, ...args) : message;
          this.queue.push(makeEvent(ref, type, reason, text, { component }, this.cfg.name ?? '', now, this.nanos.next(now)));
        } catch (e) {
          debug('event recorder: %s', (e as Error).message);
        }
      },
    };
  }

  beforeApplicationShutdown(): void {
    this.queue.stop();
  }
}
