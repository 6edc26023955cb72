/**
 * Provides core/v1 componentstatuses as its own module, because its answers need this node's
 * storage health (CLUSTER_NODE) while the core group's other kinds are plain data.
 */
import { Module } from '@nestjs/common';
import { ApiKinds } from '../../api-group.js';
import type { ClusterNode } from '../../../cluster/cluster.node.js';
import { CLUSTER_NODE } from '../../../tokens.js';
import { componentStatusKind } from './componentstatus.kind.js';

/** The componentstatuses kind of the core group. */
@Module({
  providers: [
    {
      provide: Symbol('kapi.ApiKinds:core/componentstatuses'),
      useFactory: (node: ClusterNode) => new ApiKinds('', [componentStatusKind(() => node.storageCheck())]),
      inject: [CLUSTER_NODE],
    },
  ],
})
export class ComponentStatusModule {}
