/**
 * /openapi/v3 and /openapi/v2, built from the served kinds and cached until the set of kinds
 * changes. kubectl finds a kind's schema through x-kubernetes-group-version-kind and decides
 * server-side validation from the fieldValidation parameter of PATCH operations.
 */
import {
  buildOpenAPIV2Document,
  buildOpenAPIV3Discovery,
  buildOpenAPIV3Document,
  groupVersionPath,
  kindsByGroupVersion,
  publish,
  type PublishedDocument,
} from '@app/apimachinery';
import type { KindRegistry } from '@app/registry';

/** A document ready to send. */
export interface OpenApiDoc {
  body: string;
  etag: string;
}

/** Builds and caches the OpenAPI documents of a KindRegistry. */
export class OpenApiService {
  private at = -1;
  private v3docs = new Map<string, PublishedDocument>();
  private index?: OpenApiDoc;
  private v2doc?: OpenApiDoc;

  constructor(private readonly registry: KindRegistry) {}

  private refresh(): void {
    if (this.at === this.registry.version()) return;
    this.at = this.registry.version();
    this.v3docs.clear();
    this.index = undefined;
    this.v2doc = undefined;
  }

  private ensureV3(): void {
    this.refresh();
    if (this.index) return;
    for (const [gv, kinds] of kindsByGroupVersion(this.registry.all())) {
      this.v3docs.set(gv, publish(buildOpenAPIV3Document(kinds)));
    }
    const idx = publish(buildOpenAPIV3Discovery(this.v3docs));
    this.index = { body: idx.body, etag: `"${idx.hash}"` };
  }

  /** GET /openapi/v3 */
  v3Index(): OpenApiDoc {
    this.ensureV3();
    return this.index as OpenApiDoc;
  }

  /** GET /openapi/v3/<api/v1 | apis/g/v>; undefined when not served. */
  v3(gvPath: string): OpenApiDoc | undefined {
    this.ensureV3();
    const d = this.v3docs.get(gvPath.replace(/\/+$/, ''));
    return d ? { body: d.body, etag: `"${d.hash}"` } : undefined;
  }

  /** GET /openapi/v2 (JSON). */
  v2(): OpenApiDoc {
    this.refresh();
    if (!this.v2doc) {
      const d = publish(buildOpenAPIV2Document(this.registry.all()));
      this.v2doc = { body: d.body, etag: `"${d.hash}"` };
    }
    return this.v2doc;
  }
}

export { groupVersionPath };
