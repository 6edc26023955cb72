/**
 * The server's own start-up and shutdown milestones, set by the code that reaches them and read
 * by the readiness checks (docs/health.md).
 */

/** Milestones of one server's life. Each flag only ever goes one way. */
export class ServerLifecycle {
  private bootstrapped = false;
  private shutting = false;

  /** The system namespaces exist (server start-up, after a quorum confirmed or created them). */
  markBootstrapped(): void {
    this.bootstrapped = true;
  }

  /** Shutdown began: from here the node takes no new clients. */
  markShuttingDown(): void {
    this.shutting = true;
  }

  /** Readiness check `poststarthook/system-namespaces`. */
  bootstrapCheck(): string | undefined {
    return this.bootstrapped ? undefined : 'the system namespaces are not confirmed yet (waiting for a Raft quorum)';
  }

  /** Readiness check `shutdown`. */
  shutdownCheck(): string | undefined {
    return this.shutting ? 'the server is shutting down' : undefined;
  }

  get isBootstrapped(): boolean {
    return this.bootstrapped;
  }
}
