// The backend contract against BACKEND_TYPE=memcache on real memcached processes, over TCP, a unix socket
// and TLS, built from the MEMCACHE_* settings as the daemon builds it (docs/backends.md "Memcached").
import t, { type Test } from "tap";
import { type MemcachedServer, requireBinaries, startMemcached } from "../../helpers/memcached-process.js";
import { memcachedStoreFrom } from "../../helpers/memcached-store-fixture.js";
import { makeTempDir, removeTempDir } from "../../helpers/redis-process.js";
import { generateCertificates, type TlsCertificates } from "../../helpers/tls-certificates.js";
import { counterStoreContract } from "./counter-store-contract.js";

const inc = (key: string, hits: number, ttlSeconds = 60) => ({ key, hits, ttlSeconds, perSecond: false });

/** The contract against a store built from `env`, probing TTLs on `server` once increments have landed. */
function contractOn(t: Test, server: () => MemcachedServer, env: () => Record<string, string>): void {
  counterStoreContract(
    t,
    async () => {
      const { store } = await memcachedStoreFrom(t, env());
      return {
        store,
        settle: () => store.settle(),
        ttlSecondsOf: async (key) => {
          await store.settle();
          return server().ttlOf(key);
        },
      };
    },
    { refreshesTtl: false, incrementsLater: true },
  );
}

if (requireBinaries(t, ["memcached", "openssl"])) {
  t.test("one node over TCP", async (t) => {
    const server = await startMemcached(t);
    contractOn(
      t,
      () => server,
      () => ({ MEMCACHE_HOST_PORT: server.url }),
    );
  });

  t.test("one node over a unix socket (an item with a slash, as gomemcache)", async (t) => {
    const server = await startMemcached(t, { unixSocket: true });
    contractOn(
      t,
      () => server,
      () => ({ MEMCACHE_HOST_PORT: server.url }),
    );
  });

  t.test("ALTCACHE_* spellings and MEMCACHE_MAX_IDLE_CONNS=3: three connections per node", async (t) => {
    const server = await startMemcached(t);
    // total_connections counts every accepted connection, so unlike curr_connections it does not depend on
    // when memcached notices that the previous `stats` connection closed; the second `stats` adds one.
    const before = (await server.stats()).total_connections!;
    const { store } = await memcachedStoreFrom(t, {
      ALTCACHE_HOST_PORT: server.url,
      ALTCACHE_MAX_IDLE_CONNS: "3",
    });
    // Enough keys that every connection carries some (a key's connection: floor(crc32 / nodes) mod 3).
    await store.increment(Array.from({ length: 30 }, (_, i) => inc(`idle_conns_${i}`, 1)));
    await store.settle();
    t.equal((await server.stats()).total_connections! - before - 1, 3);
  });

  t.test("TLS", async (t) => {
    const dir = makeTempDir("memcached-tls-certs");
    t.teardown(() => removeTempDir(dir));
    const certificates = await generateCertificates(dir);
    const mutual = await startMemcached(t, { tls: { certificates, requireClientCert: true } });
    const tlsEnv = (server: MemcachedServer, files: TlsCertificates) => ({
      MEMCACHE_TLS: "true",
      MEMCACHE_TLS_CACERT: files.caCert,
      MEMCACHE_TLS_CLIENT_CERT: files.clientCert,
      MEMCACHE_TLS_CLIENT_KEY: files.clientKey,
      MEMCACHE_HOST_PORT: `localhost:${server.port}`,
    });
    t.test("mutual TLS: the contract", async (t) => {
      contractOn(
        t,
        () => mutual,
        () => tlsEnv(mutual, certificates),
      );
    });

    t.test("without a client certificate the server refuses, and start-up keeps retrying", async (t) => {
      const { store, logs } = await memcachedStoreFrom(
        t,
        {
          MEMCACHE_TLS: "true",
          MEMCACHE_TLS_CACERT: certificates.caCert,
          MEMCACHE_HOST_PORT: `localhost:${mutual.port}`,
        },
        { start: false },
      );
      const started = store.start();
      await waitFor(() => logs.some((l) => l.includes("Retrying memcache connection to localhost:")));
      await store.close();
      await t.rejects(started, {
        message: `stopped while waiting for memcache connection to localhost:${mutual.port}`,
      });
    });

    t.test("MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION checks the chain but not the name", async (t) => {
      const serverOnly = await startMemcached(t, { tls: { certificates, requireClientCert: false } });
      // `127.1` reaches 127.0.0.1 but is not a name the certificate carries (it has localhost and 127.0.0.1).
      const env = {
        MEMCACHE_TLS: "true",
        MEMCACHE_TLS_CACERT: certificates.caCert,
        MEMCACHE_HOST_PORT: `127.1:${serverOnly.port}`,
      };
      const strict = await memcachedStoreFrom(t, env, { start: false });
      const strictStart = strict.store.start();
      await waitFor(() =>
        strict.logs.some((l) => /Retrying memcache connection to 127\.1:\d+ .*altnames/.test(l)),
      );
      await strict.store.close();
      await t.rejects(strictStart);
      const relaxed = await memcachedStoreFrom(t, {
        ...env,
        MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: "true",
      });
      t.strictSame(await relaxed.store.increment([inc("tls_skip_name", 2)]), [2]);
      await relaxed.store.settle();
      t.equal(await serverOnly.valueOf("tls_skip_name"), "2");
      const wrongCa = await memcachedStoreFrom(
        t,
        {
          ...env,
          MEMCACHE_TLS_CACERT: certificates.otherCaCert,
          MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: "true",
        },
        { start: false },
      );
      const wrongStart = wrongCa.store.start();
      await waitFor(() => wrongCa.logs.some((l) => l.includes("Retrying memcache connection to 127.1:")));
      await wrongCa.store.close();
      await t.rejects(wrongStart);
      t.match(wrongCa.logs.join("\n"), /unable to verify|self[- ]signed|unable to get local issuer/);
    });
  });
}

/** Polls `condition` every 20 ms for up to 10 s (for log lines written by a retry loop). */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in 10 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
