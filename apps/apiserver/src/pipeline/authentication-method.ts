/**
 * The marker of an authentication method: a provider decorated with
 * `@AuthenticationMethod({ name, order })` joins the AUTHENTICATOR chain (pipeline.module.ts
 * DiscoveredAuthenticators), asked in ascending `order`. The orders follow kube-apiserver's
 * union: request header, x509, static token, bootstrap token, service account, OIDC, webhook.
 * A method whose flags are not given stays in the chain and answers undefined.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DiscoveryService } from '@nestjs/core';
import { parseWebhookKubeconfig, type WebhookTarget } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';

/** Marks a provider as an authentication method of the chain; lower `order` is asked first. */
export const AuthenticationMethod = DiscoveryService.createDecorator<{ name: string; order: number }>();

/** The orders of the methods. */
export const METHOD_ORDER = {
  requestHeader: 50,
  x509: 100,
  tokenFile: 200,
  bootstrapToken: 250,
  serviceAccount: 300,
  oidc: 400,
  webhook: 500,
  unrecognizedBearerToken: 1000,
} as const;

/** A start error of a method: names the flag (and its value, a path: never a credential). */
export function flagStartError(cfg: ServerConfig, flag: string, e: unknown): Error {
  return new Error(`--${flag}=${cfg.raw[flag]}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

/**
 * The remote service of a webhook kubeconfig named by `flag` (token authentication,
 * authorization, audit), read at start: undefined when the flag is not given; a file that
 * cannot be read or used stops the start, naming the flag.
 */
export function webhookTargetOf(cfg: ServerConfig, flag: string): WebhookTarget | undefined {
  const file = cfg.raw[flag];
  if (file === undefined || file === '') return undefined;
  try {
    return parseWebhookKubeconfig(readFileSync(file, 'utf8'), path.dirname(path.resolve(file)));
  } catch (e) {
    throw flagStartError(cfg, flag, e);
  }
}

/** The comma-separated list of every value of a string-slice flag (kube's flags repeat or take commas). */
export function listFlag(cfg: ServerConfig, flag: string): string[] {
  return (cfg.rawAll?.[flag] ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * Whether a bearer token method is configured. Service-account tokens are always on (as in
 * kube-apiserver, whose service-account key always exists), so a bearer token no method accepts
 * is always a 401; `cfg` stays a parameter for methods that depend on flags.
 */
export function tokenMethodsConfigured(cfg: ServerConfig): boolean {
  void cfg;
  return true;
}
