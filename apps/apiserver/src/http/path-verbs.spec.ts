import { StatusError } from '@app/apimachinery';
import type { Verb } from '@app/registry';
import { checkPathVerb, pathShape, type PathFacts } from './path-verbs.js';

const ALL: Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const facts = (f: Partial<PathFacts>): PathFacts => ({ namespaced: true, namespace: '', name: '', subresource: '', namespaceIsObject: false, ...f });

function code(fn: () => void): number | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as StatusError).code;
  }
}

describe('path shapes', () => {
  it('tells the four shapes apart and finds paths that name nothing', () => {
    expect(pathShape(facts({ namespace: 'a' }))).toBe('collection');
    expect(pathShape(facts({}))).toBe('allNamespaces');
    expect(pathShape(facts({ namespace: 'a', name: 'x' }))).toBe('object');
    expect(pathShape(facts({ namespace: 'a', name: 'x', subresource: 'status' }))).toBe('subresource');
    expect(pathShape(facts({ name: 'x' }))).toBeUndefined();
    expect(pathShape(facts({ namespaced: false }))).toBe('collection');
    expect(pathShape(facts({ namespaced: false, namespace: 'a' }))).toBeUndefined();
    expect(pathShape(facts({ namespaced: false, namespace: 'x', name: 'x', namespaceIsObject: true }))).toBe('object');
  });
});

describe('the route table (405 for a method a path has no route for)', () => {
  it.each([
    ['collection', 'create', undefined],
    ['collection', 'deletecollection', undefined],
    ['collection', 'update', 405],
    ['collection', 'patch', 405],
    ['allNamespaces', 'list', undefined],
    ['allNamespaces', 'create', 405],
    ['allNamespaces', 'deletecollection', 405],
    ['object', 'create', 405],
    ['object', 'update', undefined],
    ['object', 'delete', undefined],
  ] as const)('%s %s', (shape, verb, expected) => {
    expect(code(() => checkPathVerb(shape, verb, ALL))).toBe(expected);
  });

  it('narrows by the kind and the subresource declarations', () => {
    expect(code(() => checkPathVerb('collection', 'list', ['create']))).toBe(405);
    expect(code(() => checkPathVerb('subresource', 'get', ['get', 'update', 'patch']))).toBeUndefined();
    expect(code(() => checkPathVerb('subresource', 'create', ['get', 'update', 'patch']))).toBe(405);
  });
});
