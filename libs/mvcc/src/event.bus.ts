/**
 * In-memory fan-out of applied writes. The store emits each batch's events synchronously right
 * after the LevelDB batch that holds them resolved, in revision order, so a subscriber never
 * sees an event whose write could still be lost by this process (it is on disk, and fsynced when
 * the batch was written with sync). Listeners must not throw; a throwing listener is isolated so
 * it cannot stop delivery to others or fail the apply (its error is counted).
 */
import type { MvccEvent } from './mvcc.types.js';

/** Receives events in revision order. Called synchronously: keep it cheap, queue work. */
export type EventListener = (event: MvccEvent) => void;

/** Subscription registry with isolated, ordered delivery. */
export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private readonly resetListeners = new Set<() => void>();
  /** Number of listener invocations that threw (they were skipped). */
  listenerErrors = 0;

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Adds a listener told when history stops being continuous (a snapshot replaced the state):
   * watchers must end, since events between their position and the snapshot are unknown.
   */
  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  /** Delivers events, in order, to every current listener. */
  emit(events: readonly MvccEvent[]): void {
    if (events.length === 0 || this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    for (const e of events) {
      for (const l of listeners) {
        try {
          l(e);
        } catch {
          this.listenerErrors++;
        }
      }
    }
  }

  /** Tells reset listeners that history was replaced. */
  emitReset(): void {
    for (const l of [...this.resetListeners]) {
      try {
        l();
      } catch {
        this.listenerErrors++;
      }
    }
  }

  /** Current listener count (for tests and metrics). */
  get size(): number {
    return this.listeners.size;
  }
}
