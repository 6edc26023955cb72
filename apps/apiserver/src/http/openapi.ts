/**
 * /openapi/v3 and /openapi/v2 from the served kinds: a KindRegistry-aware front of the
 * OpenAPIPublisher (libs/apimachinery), which caches documents, hashes and ETags. kubectl finds
 * a kind's schema through x-kubernetes-group-version-kind and decides server-side validation
 * from the fieldValidation parameter of PATCH operations.
 */
import { OpenAPIPublisher, type OpenAPIResponse } from '@app/apimachinery';
import type { KindRegistry } from '@app/registry';
import { NO_AGGREGATOR, type Aggregator } from './aggregator.port.js';

/**
 * Serves the OpenAPI documents of a KindRegistry, rebuilding when its kinds change; the v3
 * documents of remote APIServices' group-versions (as their servers published them) are served
 * beside them.
 */
export class OpenApiService {
  private readonly publisher = new OpenAPIPublisher([], { title: 'Kubernetes', version: 'v1.32.0' });
  private at = -1;
  private remoteAt = -1;

  constructor(
    private readonly registry: KindRegistry,
    private readonly remote: Aggregator = NO_AGGREGATOR,
  ) {}

  /** Answers GET /openapi/v2, /openapi/v3 and /openapi/v3/<group-version path>. */
  handle(path: string, hash: string | undefined, ifNoneMatch: string | undefined, accept: string | undefined): OpenAPIResponse {
    if (this.at !== this.registry.version()) {
      this.publisher.setKinds(this.registry.all());
      this.at = this.registry.version();
    }
    if (this.remoteAt !== this.remote.version()) {
      this.publisher.setExternalV3(this.remote.openApiV3());
      this.remoteAt = this.remote.version();
    }
    return this.publisher.handle({ path, hash, ifNoneMatch, accept });
  }
}
