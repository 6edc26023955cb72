import { negotiateOutput, bodyFormatOf, parseAccept } from './negotiation.js';
import { StatusError } from '@app/apimachinery';

describe('content negotiation', () => {
  it('defaults to JSON', () => {
    expect(negotiateOutput(undefined, true)).toEqual({ kind: 'json' });
    expect(negotiateOutput('*/*', false)).toEqual({ kind: 'json' });
  });
  it('serves the Table kubectl get asks for', () => {
    const a = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiateOutput(a, true)).toEqual({ kind: 'table', version: 'v1' });
    expect(negotiateOutput(a, true, { allowTable: false })).toEqual({ kind: 'json' });
  });
  it('prefers JSON when kubectl lists protobuf then JSON, protobuf when it is the only choice', () => {
    expect(negotiateOutput('application/vnd.kubernetes.protobuf,application/json', true)).toEqual({ kind: 'json' });
    expect(negotiateOutput('application/vnd.kubernetes.protobuf', true)).toEqual({ kind: 'protobuf' });
  });
  it('answers 406 when nothing acceptable can be produced (custom resources have no protobuf)', () => {
    for (const [accept, protobuf] of [
      ['application/vnd.kubernetes.protobuf', false],
      ['text/html', true],
    ] as const) {
      let thrown: unknown;
      try {
        negotiateOutput(accept, protobuf);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(StatusError);
      expect({ accept, code: (thrown as StatusError).code, reason: (thrown as StatusError).reason }).toEqual({ accept, code: 406, reason: 'NotAcceptable' });
    }
  });
  it('honours q values', () => {
    expect(parseAccept('application/yaml;q=0.5, application/json')[0].type).toBe('application/json');
    expect(negotiateOutput('application/yaml', true)).toEqual({ kind: 'yaml' });
  });
  it('maps content types to body formats', () => {
    expect(bodyFormatOf('application/json; charset=utf-8')).toBe('json');
    expect(bodyFormatOf('application/strategic-merge-patch+json')).toBe('strategic-merge-patch');
    expect(bodyFormatOf('application/apply-patch+yaml')).toBe('apply-patch');
    expect(bodyFormatOf('text/plain')).toBeUndefined();
  });
});
