/**
 * Marks a provider as an admission plugin (an `Admission` with admit and validate phases).
 * `order` places it in the chain: kube-apiserver runs its plugins in one fixed order
 * (NamespaceLifecycle first), whatever order they are enabled in.
 */
import { DiscoveryService } from '@nestjs/core';

/**
 * The decorator and its metadata. `required`: part of the server's own checks (kube does them
 * in the storage, not as a plugin), so `--disable-admission-plugins` cannot turn it off.
 * `defaultOff`: off unless `--enable-admission-plugins` names it (kube's plugins outside its
 * default set, such as SecurityContextDeny).
 */
export const AdmissionPlugin = DiscoveryService.createDecorator<{ name: string; order: number; required?: boolean; defaultOff?: boolean }>();
