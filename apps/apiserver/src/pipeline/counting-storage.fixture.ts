/** A storage that counts the lists made through it (specs of the watch-fed copies' readers). */
import type { Storage } from '@app/storage';

export function countingLists(storage: Storage): { storage: Storage; lists: () => number } {
  let lists = 0;
  const counted = new Proxy(storage, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'list') {
        return (...args: unknown[]) => {
          lists++;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { storage: counted, lists: () => lists };
}
