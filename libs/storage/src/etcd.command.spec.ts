import fc from 'fast-check';
import {
  ETCD_COMMAND_FORMAT,
  ETCD_PUTS_FORMAT,
  ETCD_PUT_FORMAT,
  decodeEtcdCommand,
  decodeEtcdCommands,
  encodeEtcdCommand,
  encodeEtcdPuts,
  isEtcdCommand,
  isPackedEtcdPuts,
  type EtcdCommand,
  type EtcdPutSpec,
} from './etcd.command.js';

const lone = (put: EtcdPutSpec): EtcdCommand => ({ txn: { compare: [], success: [{ put }], failure: [] } });
const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

describe('etcd command encoding', () => {
  it('writes a lone Put in the binary form and reads back its key, value, lease and flags', () => {
    const cmd = lone({ key: '/registry/ünï/κ', value: bytes('v\u0000x'), lease: '7205759403792793602', prevKv: true, ignoreLease: false });
    const enc = encodeEtcdCommand(cmd);
    expect(enc[0]).toBe(ETCD_PUT_FORMAT);
    // Not JSON: the value is not base64-encoded on its way into the log.
    expect(Buffer.from(enc).includes(Buffer.from('v\u0000x'))).toBe(true);
    expect(decodeEtcdCommand(enc)).toEqual(lone({ key: '/registry/ünï/κ', value: bytes('v\u0000x'), lease: '7205759403792793602', prevKv: true }));
  });

  it('writes a lone Put as JSON when the binary form is turned off, with the same meaning', () => {
    const cmd = lone({ key: '/k', value: bytes('v\u0000x'), lease: '0', prevKv: true });
    const enc = encodeEtcdCommand(cmd, { binaryPut: false });
    expect(enc[0]).toBe(ETCD_COMMAND_FORMAT);
    expect(decodeEtcdCommand(enc)).toEqual(decodeEtcdCommand(encodeEtcdCommand(cmd)));
  });

  it('keeps the mark of a KV.Put request in both forms, and none on a Txn of one Put', () => {
    const put: EtcdPutSpec = { key: '/k', value: bytes('v'), lease: '5', ignoreValue: true };
    const request: EtcdCommand = { txn: { compare: [], success: [{ put }], failure: [], kvPut: true } };
    for (const binaryPut of [true, false]) {
      expect(decodeEtcdCommand(encodeEtcdCommand(request, { binaryPut }))).toEqual(request);
      expect(decodeEtcdCommand(encodeEtcdCommand(lone(put), { binaryPut }))).toEqual(lone(put));
    }
  });

  it('keeps a decoded value independent of the entry it came from', () => {
    const enc = encodeEtcdCommand(lone({ key: '/k', value: bytes('abc'), lease: '0' }));
    const cmd = decodeEtcdCommand(enc) as unknown as { txn: { success: [{ put: EtcdPutSpec }] } };
    enc.fill(0);
    expect(Buffer.from(cmd.txn.success[0].put.value).toString()).toBe('abc');
  });

  it('writes every other command as JSON and restores Put values to bytes, nested ones too', () => {
    const cmd: EtcdCommand = {
      txn: {
        compare: [{ key: '/a', target: 'VERSION', result: 'EQUAL', value: 0 }],
        success: [
          { put: { key: '/a', value: bytes('1'), lease: '0' } },
          { txn: { compare: [], success: [{ put: { key: '/b', value: bytes('2'), lease: '0' } }], failure: [] } },
        ],
        failure: [{ range: { key: '/a' } }],
      },
    };
    const enc = encodeEtcdCommand(cmd);
    expect(enc[0]).toBe(ETCD_COMMAND_FORMAT);
    expect(decodeEtcdCommand(enc)).toEqual(cmd);
    expect(decodeEtcdCommand(encodeEtcdCommand({ grant: { id: '5', ttl: 10 } }))).toEqual({ grant: { id: '5', ttl: 10 } });
  });

  it('reads the JSON entries of earlier logs, whose Put values are base64', () => {
    const json = JSON.stringify({
      txn: { compare: [], success: [{ put: { key: '/old', value: Buffer.from('old').toString('base64'), lease: '0' } }], failure: [] },
    });
    const enc = Buffer.concat([Buffer.from([ETCD_COMMAND_FORMAT]), Buffer.from(json)]);
    expect(decodeEtcdCommand(enc)).toEqual(lone({ key: '/old', value: bytes('old'), lease: '0' }));
  });

  it('refuses truncated or malformed binary Puts with an error (every replica alike)', () => {
    const enc = encodeEtcdCommand(lone({ key: '/key', value: bytes('value'), lease: '12' }));
    expect(() => decodeEtcdCommand(enc.subarray(0, 5))).toThrow(/truncated/);
    expect(() => decodeEtcdCommand(enc.subarray(0, 8))).toThrow(/truncated/);
    const badLease = Buffer.from(enc);
    badLease[1 + 1 + 4 + 4 + 1] = 0x41; // 'A' inside the lease digits
    expect(() => decodeEtcdCommand(badLease)).toThrow(/lease/);
  });

  it('round-trips any lone Put', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (key, value, lease, prevKv, ignoreValue, ignoreLease) => {
          const put: EtcdPutSpec = { key, value, lease: lease.toString() };
          if (prevKv) put.prevKv = true;
          if (ignoreValue) put.ignoreValue = true;
          if (ignoreLease) put.ignoreLease = true;
          expect(decodeEtcdCommand(encodeEtcdCommand(lone(put)))).toEqual(lone(put));
        },
      ),
    );
  });

  it('packs lone Puts into one entry and reads them back in order, flags and KV.Put marks kept', () => {
    const cmds: EtcdCommand[] = [
      { txn: { compare: [], success: [{ put: { key: '/a', value: bytes('1'), lease: '0' } }], failure: [], kvPut: true } },
      lone({ key: '/ü', value: new Uint8Array(0), lease: '7205759403792793602', prevKv: true, ignoreLease: true }),
      { txn: { compare: [], success: [{ put: { key: '/a', value: bytes('2'), lease: '3', ignoreValue: true } }], failure: [], kvPut: true } },
    ];
    const enc = encodeEtcdPuts(cmds);
    expect([enc[0], isEtcdCommand(enc), isPackedEtcdPuts(enc)]).toEqual([ETCD_PUTS_FORMAT, true, true]);
    expect(decodeEtcdCommands(enc)).toEqual(cmds);
    // The other forms decode to one command; decodeEtcdCommand does not take a pack.
    expect(decodeEtcdCommands(encodeEtcdCommand(cmds[0]!))).toEqual([cmds[0]]);
    expect(() => decodeEtcdCommand(enc)).toThrow(/not an etcd command/);
  });

  it('packs nothing but lone Puts', () => {
    const del: EtcdCommand = { txn: { compare: [], success: [{ del: { key: '/a' } }], failure: [] } };
    expect(() => encodeEtcdPuts([lone({ key: '/a', value: bytes('1'), lease: '0' }), del])).toThrow(/only lone Puts/);
    expect(() => encodeEtcdPuts([{ grant: { id: '1', ttl: 5 } }])).toThrow(/only lone Puts/);
  });

  it('refuses malformed packs with an error (every replica alike)', () => {
    const enc = Buffer.from(encodeEtcdPuts([lone({ key: '/a', value: bytes('one'), lease: '0' }), lone({ key: '/b', value: bytes('two'), lease: '0' })]));
    expect(() => decodeEtcdCommands(enc.subarray(0, 3))).toThrow(/truncated/);
    expect(() => decodeEtcdCommands(enc.subarray(0, enc.length - 1))).toThrow(/truncated/);
    expect(() => decodeEtcdCommands(Buffer.concat([enc, Buffer.from([0])]))).toThrow(/after the last Put/);
    const none = Buffer.from([ETCD_PUTS_FORMAT, 0, 0, 0, 0]);
    expect(() => decodeEtcdCommands(none)).toThrow(/no Put/);
    // A part in the JSON form is not a Put of the pack.
    const json = encodeEtcdCommand(lone({ key: '/a', value: bytes('1'), lease: '0' }), { binaryPut: false });
    const head = Buffer.alloc(9);
    head[0] = ETCD_PUTS_FORMAT;
    head.writeUInt32BE(1, 1);
    head.writeUInt32BE(json.length, 5);
    expect(() => decodeEtcdCommands(Buffer.concat([head, json]))).toThrow(/not a Put/);
  });
});
