/**
 * This node's etcd handlers called in-process, as a client would call them: each request is
 * encoded and decoded with its protobuf message (so a handler sees exactly what a client's call
 * gives it) and each answer likewise. The Lock and Election services (etcd.concurrency.service.ts)
 * are built on it, as etcd builds its own on a client of the member itself.
 */
import { EventEmitter } from 'node:events';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { SerializedMessage, type CallStatus, type DuplexCall, type DuplexHandler, type Msg, type ServiceHandlers, type UnaryHandler } from '@app/grpc';
import { EtcdApiError } from './etcd.convert.js';

interface Codec {
  requestSerialize(m: Msg): Buffer;
  requestDeserialize(b: Buffer): Msg;
  responseSerialize(m: Msg): Buffer;
  responseDeserialize(b: Buffer): Msg;
}

/** A watcher opened through the loopback; close() ends it (as a client cancelling its stream). */
export interface LoopbackWatch {
  close(): void;
}

/** The in-process client of one node's etcd services. */
export class EtcdLoopback {
  constructor(
    private readonly def: PackageDefinition,
    private readonly services: Readonly<Record<string, ServiceHandlers>>,
  ) {}

  private codec(service: string, method: string): Codec {
    const m = (this.def[service] as Record<string, Codec> | undefined)?.[method];
    if (!m) throw new Error(`${service}.${method} is not defined`);
    return m;
  }

  private static decode(codec: Codec, msg: Msg): Msg {
    return codec.responseDeserialize(msg instanceof SerializedMessage ? msg.frame().subarray(5) : codec.responseSerialize(msg));
  }

  /** One unary call (`service` with its package, e.g. `etcdserverpb.KV`); its failure is an EtcdApiError with the call's code. */
  call(service: string, method: string, request: Msg): Promise<Msg> {
    const codec = this.codec(service, method);
    const handler = this.services[service]?.[method] as UnaryHandler | undefined;
    if (!handler) return Promise.reject(new Error(`${service}.${method} is not served`));
    const req = codec.requestDeserialize(codec.requestSerialize(request));
    return new Promise((resolve, reject) => {
      handler({
        request: req,
        cancelled: false,
        respond: (msg) => resolve(EtcdLoopback.decode(codec, msg)),
        fail: (st: CallStatus) => reject(new EtcdApiError(st.code ?? GrpcStatus.UNKNOWN, st.details ?? '')),
      });
    });
  }

  /**
   * Opens one watcher with `create` (a WatchCreateRequest): `onResponse` gets every
   * WatchResponse of it (the creation's first), `onEnd` the end of the stream (an error status
   * when it failed). Nothing more is delivered after close().
   */
  watch(create: Msg, onResponse: (r: Msg) => void, onEnd: (status?: CallStatus) => void): LoopbackWatch {
    const codec = this.codec('etcdserverpb.Watch', 'Watch');
    const handler = this.services['etcdserverpb.Watch']?.Watch as DuplexHandler | undefined;
    if (!handler) throw new Error('etcdserverpb.Watch is not served');
    let open = true;
    const finish = (status?: CallStatus): void => {
      if (!open) return;
      open = false;
      onEnd(status);
    };
    const call = new (class extends EventEmitter {
      get cancelled(): boolean {
        return !open;
      }
      // Responses are handed over as they are written: nothing is ever buffered.
      readonly bufferedBytes = 0;
      sendHeaders(): void {}
      pause(): void {}
      resume(): void {}
      write(msg: Msg): boolean {
        if (open) onResponse(EtcdLoopback.decode(codec, msg));
        return true;
      }
      end(): void {
        finish();
      }
      fail(status: CallStatus): void {
        finish(status);
      }
    })();
    handler(call as unknown as DuplexCall);
    call.emit('data', codec.requestDeserialize(codec.requestSerialize({ create_request: create })));
    return {
      close: () => {
        if (!open) return;
        open = false;
        // What a client's cancelled stream does: the watch service drops every watcher of it.
        call.emit('cancelled');
      },
    };
  }
}
