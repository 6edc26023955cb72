/**
 * core/v1 LimitRange: its declaration. kubectl shows NAME and CREATED AT (the printer's
 * default columns); DELETE answers with a Status (resources doc).
 */
import type { KindDeclaration } from '@app/registry';
import { LimitRangeSchema } from './limitrange.schema.js';
import { limitRangeStrategy } from './limitrange.strategy.js';

/** The LimitRange declaration. */
export const limitRangeKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  plural: 'limitranges',
  singular: 'limitrange',
  shortNames: ['limits'],
  namespaced: true,
  schema: LimitRangeSchema,
  protobufMessage: 'k8s.io.api.core.v1.LimitRange',
  strategy: limitRangeStrategy,
  generation: 'none',
};
