/**
 * The shape of a conformance row: one rule of the conventions or resources documents (or
 * upstream behaviour where they are silent), the request that probes it, upstream's answer, and
 * ours as the expectation the test pins. docs/conformance.md is generated from these rows
 * (scripts/conformance-doc.mjs), so the document and the tests cannot drift apart.
 */

/** One HTTPS request of a row. */
export interface Req {
  method: string;
  path: string;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** What a response must be. */
export interface Expect {
  status: number;
  reason?: string;
  /** Exact message, or a pattern it must match. */
  message?: string | RegExp;
  /** The JSON body must match this (toMatchObject). */
  body?: Record<string, unknown>;
  /** JSON paths (dot-separated) that must be absent from the body. */
  absent?: string[];
  /** A pattern the raw body must match (streams, YAML). */
  text?: RegExp;
  /** What the raw body must start with (the protobuf envelope's magic, `k8s\u0000`). */
  prefix?: string;
  /** Response headers (lower-case names) and what they must equal or match. */
  headers?: Record<string, string | RegExp>;
}

/** A kubectl run of a row. */
export interface KubectlStep {
  args: string[];
  input?: string;
  /** True: kubectl must fail. */
  fail?: boolean;
  stdout?: RegExp;
  stderr?: RegExp;
  /** Run again until stdout matches, up to this long (ms): what a controller writes asynchronously. */
  waitMs?: number;
}

/** One rule and its probe. */
export interface Row {
  /** Unique id, e.g. `verbs-03`; the test case is named after it. */
  id: string;
  /** The rule, in a few words. */
  rule: string;
  /** Where the rule comes from: `conventions <section>`, `resources <section>` or `upstream <file>`. */
  source: string;
  /** Upstream's answer (kube-apiserver 1.33). */
  upstream: string;
  /** Set when we answer differently on purpose: the reason. */
  divergence?: string;
  /** Requests run first; each must succeed (2xx) unless it has `expect`. */
  /** Requests before the probe; with `waitMs`, sent again until they answer as expected, up to that long. */
  setup?: Array<Req & { expect?: Expect; waitMs?: number }>;
  /** The probing request. */
  req?: Req;
  /** Or the probing kubectl command. */
  kubectl?: KubectlStep;
  /** What the probe must answer. */
  expect?: Expect;
  /**
   * Follow-up requests that check the probe's effect. With `waitMs`, the request is sent again
   * until it answers as expected, up to that long (what a controller writes asynchronously).
   */
  then?: Array<{ req: Req; expect: Expect; waitMs?: number }>;
}

/** A group of rows sharing one namespace (created before the group runs). */
export interface RowGroup {
  name: string;
  namespace: string;
  rows: Row[];
}
