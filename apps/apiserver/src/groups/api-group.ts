/**
 * How an API group module hands its kinds to the server: each group module provides one
 * `ApiKinds` value (`apiKinds('apps', [deploymentKind, ...])`), and the KindRegistry collects
 * every such provider of every imported module at start (registry/registry.module.ts), the way
 * @nestjs/cqrs finds its handlers. Adding a kind is one line in its group's list; adding a
 * group is one module imported by the app module.
 */
import type { Provider } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';

/** The kinds one group module serves, in preference order (the first version listed is preferred). */
export class ApiKinds {
  constructor(
    /** '' for the core group. */
    readonly group: string,
    readonly kinds: readonly KindDeclaration[],
  ) {}
}

/** The provider of a group module's kinds (each call makes its own token, so any number can coexist). */
export function apiKinds(group: string, kinds: readonly KindDeclaration[]): Provider {
  for (const k of kinds) {
    if (k.group !== group) throw new Error(`kind ${k.kind} of group ${JSON.stringify(k.group)} listed in the module of group ${JSON.stringify(group)}`);
  }
  return { provide: Symbol(`kapi.ApiKinds:${group || 'core'}`), useValue: new ApiKinds(group, kinds) };
}
