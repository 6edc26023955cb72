/**
 * The environment of the servers the e2e tests start (they inherit the test's `process.env`).
 *
 * KAPI_FREEZE_COPIES=1: every object a watch-fed copy keeps, and every object of a live watch
 * event that watchers share, is frozen, so that code changing one in place (they are shared
 * between controllers, caches and watch streams, docs/testing.md) fails the tests instead of
 * quietly changing what other readers see. A test may still set it to 0 itself.
 */
process.env.KAPI_FREEZE_COPIES ??= '1';
