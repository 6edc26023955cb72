/**
 * kubectl's columns of RoleBinding and ClusterRoleBinding (pkg/printers/internalversion
 * roleBindingsColumnDefinitions): NAME ROLE AGE, and USERS GROUPS SERVICEACCOUNTS with -o wide.
 */
import { ageOf, type TableColumn } from '@app/registry';
import type { RoleRef, Subject } from './rbac.validation.js';

const subjectsOf = (o: Record<string, unknown>, kind: string): Subject[] =>
  (Array.isArray(o.subjects) ? (o.subjects as Subject[]) : []).filter((s) => s?.kind === kind);

/** The binding columns after Name. */
export const BINDING_COLUMNS: TableColumn[] = [
  {
    name: 'Role',
    type: 'string',
    priority: 0,
    description: 'The role granted (roleRef kind/name)',
    cell: (o) => {
      const r = (o.roleRef ?? {}) as RoleRef;
      return `${r.kind ?? ''}/${r.name ?? ''}`;
    },
  },
  { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  {
    name: 'Users',
    type: 'string',
    priority: 1,
    description: 'Users in the binding',
    cell: (o) =>
      subjectsOf(o, 'User')
        .map((s) => s.name)
        .join(', '),
  },
  {
    name: 'Groups',
    type: 'string',
    priority: 1,
    description: 'Groups in the binding',
    cell: (o) =>
      subjectsOf(o, 'Group')
        .map((s) => s.name)
        .join(', '),
  },
  {
    name: 'ServiceAccounts',
    type: 'string',
    priority: 1,
    description: 'ServiceAccounts in the binding',
    cell: (o) =>
      subjectsOf(o, 'ServiceAccount')
        .map((s) => `${s.namespace ?? ''}/${s.name ?? ''}`)
        .join(', '),
  },
];
