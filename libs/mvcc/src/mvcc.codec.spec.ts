import { BinReader, BinWriter, CodecError } from './mvcc.codec.js';

describe('BinWriter / BinReader strings', () => {
  it('reads back every string as written: a leading U+FEFF, NUL, surrogate pairs, the empty string', () => {
    const strings = ['\uFEFFkey', '\uFEFF', 'a\uFEFF', '', '\u0000x', '/registry/é/😀', '\u{10FF00}'];
    const w = new BinWriter();
    for (const s of strings) w.str(s);
    const r = new BinReader(w.finish());
    expect(strings.map(() => r.str())).toEqual(strings);
  });

  it('refuses bytes that are not UTF-8', () => {
    const w = new BinWriter();
    w.u32(2);
    w.u8(0xc3);
    w.u8(0x28);
    expect(() => new BinReader(w.finish()).str()).toThrow(CodecError);
  });
});
