// The backend contract against BACKEND_TYPE=memory.
import t from "tap";
import { MemoryStore } from "../../../src/backends/memory/memory-store.js";
import { counterStoreContract } from "./counter-store-contract.js";

counterStoreContract(
  t,
  async () => {
    const store = new MemoryStore();
    await store.start();
    t.teardown(() => store.close());
    return { store, ttlSecondsOf: async (key) => store.ttlSecondsOf(key) };
  },
  { refreshesTtl: true, allAlgorithms: true },
);
