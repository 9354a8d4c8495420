/** A `ServerSecretStore` in memory, for the core's tests of what the shared keys make. */
import type { ServerSecretStore } from '../../src/core/credentials/ports.js';
import { SharedKeys } from '../../src/core/credentials/shared-keys.js';
import { TestClock } from './clock.js';

export function memoryServerSecrets(): ServerSecretStore & { readonly stored: Map<string, string> } {
  const stored = new Map<string, string>();
  return {
    stored,
    getOrCreate: async (name, fresh) => {
      if (!stored.has(name)) stored.set(name, fresh);
      return stored.get(name)!;
    },
  };
}

/** One instance's shared keys over `secrets` (a new store of its own by default). */
export function memorySharedKeys(secrets: ServerSecretStore = memoryServerSecrets()): SharedKeys {
  return new SharedKeys(secrets, new TestClock());
}
