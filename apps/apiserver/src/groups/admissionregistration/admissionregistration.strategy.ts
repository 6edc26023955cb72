/**
 * The strategy both webhook configuration kinds share (pkg/registry/admissionregistration
 * mutatingwebhookconfiguration and validatingwebhookconfiguration strategy.go): generation 1 on
 * create (the declaration's `generation: 'create'`), bumped by an update that changes the
 * webhooks; then the group's validation.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration, Strategy, TableColumn } from '@app/registry';
import { validateWebhookConfiguration, validateWebhookConfigurationUpdate, type WebhookKind } from './admissionregistration.validation.js';

/** The strategy of one of the two configuration kinds. */
export function webhookConfigurationStrategy(kind: WebhookKind): Strategy {
  return {
    prepareForUpdate(obj: KubeObject, old: KubeObject) {
      if (!isDeepStrictEqual(obj.webhooks, old.webhooks)) obj.metadata.generation = ((old.metadata.generation as number | undefined) ?? 0) + 1;
    },
    validate: (obj) => validateWebhookConfiguration(obj, kind),
    validateUpdate: (obj, old) => validateWebhookConfigurationUpdate(obj, old, kind),
  };
}

/** kubectl's WEBHOOKS column: how many webhooks the configuration holds. */
export const WEBHOOKS_COLUMN: TableColumn = {
  name: 'Webhooks',
  type: 'integer',
  priority: 0,
  description: 'Number of webhooks in the configuration',
  cell: (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0),
};

/** What the two declarations share: cluster-scoped, api-extensions, kube's update and generation rules. */
export const WEBHOOK_CONFIGURATION_COMMON: Pick<
  KindDeclaration,
  'group' | 'version' | 'namespaced' | 'categories' | 'generation' | 'allowUnconditionalUpdate' | 'tableColumns'
> = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  namespaced: false,
  categories: ['api-extensions'],
  generation: 'create',
  // The Kubernetes strategies refuse an update that names no resourceVersion.
  allowUnconditionalUpdate: false,
  tableColumns: [WEBHOOKS_COLUMN],
};
