/**
 * The flowcontrol.apiserver.k8s.io API group: FlowSchema and PriorityLevelConfiguration as
 * stored objects at v1, v1beta3 and v1beta2 (flowcontrol.kinds.ts).
 */
import { Module } from '@nestjs/common';
import { apiKinds } from '../api-group.js';
import { FLOWCONTROL_KINDS } from './flowcontrol.kinds.js';

export { FLOWCONTROL_KINDS };
import { FLOWCONTROL_GROUP } from './flowcontrol.schema.js';

/** Provides the flowcontrol kinds. */
@Module({ providers: [apiKinds(FLOWCONTROL_GROUP, FLOWCONTROL_KINDS)] })
export class FlowcontrolGroupModule {}
