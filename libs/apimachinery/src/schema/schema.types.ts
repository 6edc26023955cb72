/**
 * A structural OpenAPI v3 schema (the subset Kubernetes allows for CRDs, apiextensions
 * JSONSchemaProps) plus the x-kubernetes-* extensions. A kind's schema is the single source for
 * structural validation, unknown-field detection, defaults, the published OpenAPI documents and
 * the merge keys of strategic merge patch and server-side apply.
 */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string; // int32, int64, byte, date-time, double, ...
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  /** Map values (type object without properties). `true` = any value. */
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  /** Definitions are referenced by name (e.g. '#/components/schemas/io.k8s...ObjectMeta'). */
  $ref?: string;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  /** Value may be an integer or a string (IntOrString). */
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** Strategic merge patch: e.g. 'merge', 'retainKeys', 'merge,retainKeys'. */
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
  /**
   * Names in `required` that are published (kubectl explain marks them) but that schema
   * validation does not check, because the kind's own validation decides as Kubernetes' Go
   * validation does (metav1.Condition's `message`). Never published.
   */
  'x-kapi-required-unchecked'?: string[];
  [ext: `x-${string}`]: unknown;
}
