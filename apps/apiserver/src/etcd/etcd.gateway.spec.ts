import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { dirname } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import fc from 'fast-check';
import type { DuplexCall, Msg, UnaryCall } from '@app/grpc';
import { findProtoFile } from '@app/raft';
import { EtcdGateway, MAX_GATEWAY_BODY_BYTES } from './etcd.gateway.js';

const rpc = findProtoFile('etcd/rpc.proto');
const def = protoLoader.loadSync(rpc, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(rpc)] });

/** A request with `body`, as node:http hands it over. */
function request(body: string | Buffer, method = 'POST'): IncomingMessage {
  const r = Readable.from([Buffer.from(body)]) as unknown as IncomingMessage;
  r.method = method;
  return r;
}

/** A response that records what was written. */
class Recorder extends EventEmitter {
  status = 0;
  headers: Record<string, unknown> = {};
  body = '';
  destroyed = false;
  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(chunk: string): boolean {
    this.body += chunk;
    return true;
  }
  end(chunk?: string): this {
    if (chunk) this.body += chunk;
    return this;
  }
  flushHeaders(): void {}
  json(): Msg {
    return JSON.parse(this.body) as Msg;
  }
}

async function call(gw: EtcdGateway, path: string, body: string | Buffer, method?: string): Promise<Recorder> {
  const res = new Recorder();
  await gw.handle(request(body, method), res as unknown as ServerResponse, path);
  return res;
}

describe('the etcd JSON gateway', () => {
  const seen: Msg[] = [];
  const gw = new EtcdGateway(def, [rpc], {
    'etcdserverpb.KV': {
      // Echoes what the handler was given, in a RangeResponse.
      Range: (c: UnaryCall) => {
        seen.push(c.request);
        c.respond({ header: { revision: '7' }, kvs: [{ key: c.request.key, value: c.request.range_end, version: c.request.limit }], count: '1' });
      },
      Put: (c: UnaryCall) => c.fail({ code: 9, details: 'etcdserver: not leader' }),
      Txn: (c: UnaryCall) => c.respond({ succeeded: c.request.compare.length > 0 }),
    },
    'etcdserverpb.Lease': {
      LeaseKeepAlive: (c: DuplexCall) => {
        c.on('data', (m: Msg) => c.write({ ID: m.ID, TTL: '5' }));
        c.on('end', () => c.end());
      },
    },
  });

  it('hands the handler the message the JSON names, by .proto or lowerCamelCase names, and answers in etcd JSON', async () => {
    const res = await call(gw, '/v3/kv/range', JSON.stringify({ key: 'YQ==', rangeEnd: 'Yg==', limit: 3, sort_order: 'DESCEND', nosuch: { x: 1 } }));
    expect(res.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ key: Buffer.from('a'), range_end: Buffer.from('b'), limit: '3', sort_order: 'DESCEND' });
    expect(res.json()).toEqual({ header: { revision: '7' }, kvs: [{ key: 'YQ==', value: 'Yg==', version: '3' }], count: '1' });
  });

  it('answers a handler failure with its code, message and HTTP status', async () => {
    const res = await call(gw, '/v3/kv/put', '{"key":"YQ=="}');
    expect([res.status, res.json()]).toEqual([412, { error: 'etcdserver: not leader', message: 'etcdserver: not leader', code: 9 }]);
  });

  it('refuses bodies that make no message (400, code 3, naming the field), too large ones (413), other methods (405); unknown paths are 404', async () => {
    for (const [body, field] of [
      ['{"key":"%%"}', 'key'],
      ['{"limit":"1.5"}', 'limit'],
      ['{"limit":"9223372036854775808"}', 'limit'],
      ['{"serializable":"yes"}', 'serializable'],
      ['{"sort_order":"SIDEWAYS"}', 'sort_order'],
      ['[1]', 'the request'],
      ['{', 'not JSON'],
    ] as const) {
      const res = await call(gw, '/v3/kv/range', body);
      expect([res.status, res.json().code]).toEqual([400, 3]);
      expect(res.json().message).toContain(field);
    }
    expect((await call(gw, '/v3/kv/range', Buffer.alloc(MAX_GATEWAY_BODY_BYTES + 1, 0x20))).status).toBe(413);
    // Txns nested deeper than anyone writes: refused before the conversion recurses into them.
    const deep = '{"success":[{"request_txn":'.repeat(20_000) + '{}' + '}]}'.repeat(20_000);
    const nested = await call(gw, '/v3/kv/txn', deep);
    expect([nested.status, nested.json().code]).toEqual([400, 3]);
    expect((await call(gw, '/v3/kv/range', '', 'GET')).status).toBe(405);
    expect((await call(gw, '/v3/nothing', '{}')).status).toBe(404);
  });

  it('streams a keep-alive per message of the body, one JSON line each, and ends with the body', async () => {
    const res = await call(gw, '/v3/lease/keepalive', '{"ID":"1"}\n{"ID":"2"} {"ID":3}');
    expect(res.body.split('\n').filter((l) => l !== '')).toEqual([
      '{"result":{"ID":"1","TTL":"5"}}',
      '{"result":{"ID":"2","TTL":"5"}}',
      '{"result":{"ID":"3","TTL":"5"}}',
    ]);
  });

  it('answers any JSON body with 200 or a 400 error object, never a throw', async () => {
    const rangeBody = fc.dictionary(fc.constantFrom('key', 'range_end', 'limit', 'revision', 'keys_only', 'sort_order', 'sortTarget'), fc.jsonValue());
    const txnBody = fc.dictionary(
      fc.constantFrom('compare', 'success', 'failure'),
      fc.oneof(
        fc.jsonValue(),
        fc.array(
          fc.dictionary(fc.constantFrom('request_range', 'requestPut', 'target', 'result', 'key', 'version', 'value'), fc.oneof(fc.jsonValue(), rangeBody)),
        ),
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v3/kv/range', '/v3/kv/txn'), fc.oneof(fc.jsonValue(), rangeBody, txnBody), async (path, v) => {
        const res = await call(gw, path, JSON.stringify(v) ?? '');
        // 200, or 400 with code 3 (INVALID_ARGUMENT).
        const outcome = res.status === 200 ? 'ok' : `${res.status} code ${res.json().code as number}`;
        expect(['ok', '400 code 3']).toContain(outcome);
      }),
      { numRuns: 300 },
    );
  });
});
