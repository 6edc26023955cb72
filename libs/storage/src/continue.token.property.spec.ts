import fc from 'fast-check';
import { type ContinueToken, ContinueTokenError, decodeContinueToken, encodeContinueToken } from './continue.token.js';

// Fixed seed, as every property spec's (libs/apimachinery property.fixtures.ts): FC_SEED explores others.
fc.configureGlobal({ seed: Number(process.env.FC_SEED) || 20261125 });

// FC_RUNS raises the number of generated cases (a longer, deeper run).
const numRuns = Number(process.env.FC_RUNS) || 300;

/** 'refused' for a ContinueTokenError, 'same' for the token `same` holds, 'decoded' for another; anything else thrown is returned as its stack. */
function outcome(run: () => ContinueToken, same?: ContinueToken): string {
  try {
    const t = run();
    return same !== undefined && t.rv === same.rv && t.start === same.start ? 'same' : 'decoded';
  } catch (e) {
    return e instanceof ContinueTokenError ? 'refused' : String((e as Error)?.stack ?? e);
  }
}

const rv = fc.oneof(fc.constant(-1), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }));
const segment = fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('/') && !s.includes('\0') && s !== '.' && s !== '..');
const start = fc.array(segment, { minLength: 1, maxLength: 4 }).map((xs) => xs.join('/'));

describe('continue token properties', () => {
  it('decodes what it encodes', () => {
    fc.assert(
      fc.property(rv, start, (r, s) => {
        expect(decodeContinueToken(encodeContinueToken(r, s))).toEqual({ rv: r, start: s });
      }),
      { numRuns },
    );
  });

  it('rejects every changed token with ContinueTokenError', () => {
    const edit = fc.tuple(
      fc.nat(),
      fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.='.split('')),
      fc.constantFrom('replace', 'insert', 'delete'),
    );
    fc.assert(
      fc.property(rv, start, fc.array(edit, { minLength: 1, maxLength: 3 }), (r, s, edits) => {
        const token = encodeContinueToken(r, s);
        let t = token;
        for (const [at, ch, how] of edits) {
          const i = at % (t.length + 1);
          t = how === 'insert' ? t.slice(0, i) + ch + t.slice(i) : how === 'delete' ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + ch + t.slice(i + 1);
        }
        fc.pre(t !== token);
        // base64url has padding-free spellings only; a change that decodes to the same bytes is
        // the same token, so only a token that decodes to other content must be refused.
        expect(outcome(() => decodeContinueToken(t), { rv: r, start: s })).toMatch(/^(refused|same)$/);
      }),
      { numRuns },
    );
  });

  it('rejects a token forged with another payload or tag, and arbitrary text, with ContinueTokenError', () => {
    fc.assert(
      fc.property(rv, start, start, fc.string(), (r, s, other, noise) => {
        const [payload, tag] = encodeContinueToken(r, s).split('.');
        const forged = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: r, start: `${other}x` })).toString('base64url');
        expect(() => decodeContinueToken(`${forged}.${tag}`)).toThrow(ContinueTokenError);
        expect(() => decodeContinueToken(`${payload}.`)).toThrow(ContinueTokenError);
        expect(outcome(() => decodeContinueToken(noise))).toMatch(/^(refused|same|decoded)$/);
      }),
      { numRuns },
    );
  });
});
