/**
 * The ClusterRole aggregation controller (kube-controller-manager's clusterrole-aggregation):
 * keeps the rules of every ClusterRole with an aggregationRule equal to the union of the rules
 * of the ClusterRoles its selectors match (@app/authz aggregatedRules). It reads the node's
 * RBAC policy, which the storage watch keeps current, and runs a pass after each change of a
 * ClusterRole; its own writes come back as changes and end in a pass with nothing to do.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { aggregatedRules, sameRules, type PolicyRule, type RbacObject } from '@app/authz';
import { KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import { RbacPolicyWatcher } from '../pipeline/rbac-policy.watcher.js';
import { STORES, type StoreFactory } from '../tokens.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';
import { PassScheduler } from './pass.scheduler.js';

/**
 * The identity of the controller's writes. It runs inside the server, so it writes as a
 * loopback client does (system:masters): the escalation check then lets it grant the union of
 * rules, as kube-controller-manager's controller may through its `escalate` permission.
 */
const CONTROLLER_CTX = (): RequestContext => ({
  user: { username: 'system:serviceaccount:kube-system:clusterrole-aggregation-controller', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** Runs the aggregation while this node holds the controller Lease. */
@ManagedController({ name: 'clusterrole-aggregation' })
@Injectable()
export class ClusterRoleAggregationRunner implements ControllerRunner {
  private unsubscribe: (() => void) | undefined;
  private readonly scheduler = new PassScheduler('clusterrole-aggregation', () => this.pass());

  constructor(
    private readonly rbac: RbacPolicyWatcher,
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    this.scheduler.start();
    this.unsubscribe = this.rbac.policy.onChange((kind) => {
      if (kind === 'ClusterRole') this.scheduler.schedule();
    });
    void this.rbac.whenSynced().then(() => this.scheduler.schedule());
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.scheduler.stop();
  }

  private async pass(): Promise<void> {
    const decl = this.registry.lookup('rbac.authorization.k8s.io', 'v1', 'clusterroles') as KindDeclaration;
    const store = this.stores.storeFor(decl);
    const all = this.rbac.policy.clusterRoleList();
    for (const role of all) {
      const want = aggregatedRules(role, all);
      if (want === undefined || sameRules(want, role.rules)) continue;
      const name = role.metadata.name ?? '';
      // The policy may lag the store by a write; recompute against what is stored.
      const cur = await store.get('', name);
      const rules = aggregatedRules(cur as RbacObject, all);
      if (rules === undefined || sameRules(rules, cur.rules as PolicyRule[] | undefined)) continue;
      const next: KubeObject = { ...cur, rules };
      await store.update('', name, next, { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', fieldManager: 'clusterrole-aggregation-controller' });
    }
  }
}
