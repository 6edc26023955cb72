import fc from 'fast-check';
import { parseRequestInfo } from './request-info.js';

// Fixed seed, as every property spec's (libs/apimachinery property.fixtures.ts): FC_SEED explores others.
fc.configureGlobal({ seed: Number(process.env.FC_SEED) || 20261125 });

// FC_RUNS raises the number of generated cases (a longer, deeper run).
const numRuns = Number(process.env.FC_RUNS) || 500;

const segment = fc.oneof(
  fc.constantFrom(
    'api',
    'apis',
    'v1',
    'apps',
    'namespaces',
    'default',
    'watch',
    'proxy',
    'status',
    'configmaps',
    'pods',
    'x',
    '',
    '.',
    '..',
    '%',
    '%zz',
    '%2F',
    '%00',
    'é',
    '%E9',
  ),
  fc.string({ maxLength: 6 }),
);
const path = fc.array(segment, { maxLength: 9 }).map((xs) => `/${xs.join('/')}`);
const method = fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'FUZZ', ''), fc.string({ maxLength: 5 }));
const query = fc.dictionary(fc.constantFrom('watch', 'labelSelector', 'fieldSelector', 'x'), fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), {
  noNullPrototype: true,
});

describe('request info properties', () => {
  it('never throws, and describes the path it was given', () => {
    fc.assert(
      fc.property(method, fc.oneof(path, fc.string()), query, (m, p, q) => {
        const info = parseRequestInfo(m, p, q);
        expect(info.path).toBe(p);
        expect(typeof info.verb).toBe('string');
        expect(info.isResourceRequest ? ['api', 'apis'].includes(info.apiPrefix) : true).toBe(true);
      }),
      { numRuns },
    );
  });

  it('reads a well-formed namespaced object path back into its parts', () => {
    const name = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.constantFrom('', 'apps', 'example.com'), name, name, name, (group, ns, resource, obj) => {
        fc.pre(resource !== 'watch' && resource !== 'proxy' && ns !== 'watch');
        const prefix = group === '' ? '/api/v1' : `/apis/${group}/v1`;
        const info = parseRequestInfo('GET', `${prefix}/namespaces/${ns}/${resource}/${obj}`, {});
        expect(info).toMatchObject({
          isResourceRequest: true,
          verb: 'get',
          apiGroup: group,
          apiVersion: 'v1',
          namespace: ns,
          resource,
          name: obj,
          subresource: '',
        });
      }),
      { numRuns },
    );
  });
});
