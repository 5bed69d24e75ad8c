// The backend contract against BACKEND_TYPE=redis in every topology and authentication mode, built from the
// REDIS_* settings as the daemon builds it (docs/backends.md "Redis").
import t from "tap";
import { startCluster } from "../../helpers/redis-cluster.js";
import { makeTempDir, removeTempDir } from "../../helpers/redis-process.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { redisStoreFrom } from "../../helpers/redis-store-fixture.js";
import { generateCertificates } from "../../helpers/tls-certificates.js";
import { counterStoreContract } from "./counter-store-contract.js";

if (requireBinaries(t, ["redis-server", "redis-cli", "openssl"])) {
  t.test("single over TCP", async (t) => {
    const server = await startRedis(t);
    counterStoreContract(
      t,
      async () => ({
        store: (await redisStoreFrom(t, { REDIS_URL: server.url })).store,
        ttlSecondsOf: async (key) => Number(await server.cli("TTL", key)),
      }),
      { refreshesTtl: true, allAlgorithms: true },
    );
  });

  t.test("single over a unix socket", async (t) => {
    const server = await startRedis(t, { unixSocket: true });
    counterStoreContract(
      t,
      async () => ({
        store: (await redisStoreFrom(t, { REDIS_SOCKET_TYPE: "unix", REDIS_URL: server.socketPath! })).store,
        ttlSecondsOf: async (key) => Number(await server.cli("TTL", key)),
      }),
      { refreshesTtl: true, allAlgorithms: true },
    );
  });

  t.test("requirepass (REDIS_AUTH=password) and an ACL user (REDIS_AUTH=user:password)", async (t) => {
    const passworded = await startRedis(t, { password: "s3cret" });
    const { store } = await redisStoreFrom(t, { REDIS_URL: passworded.url, REDIS_AUTH: "s3cret" });
    t.strictSame(await store.increment([{ key: "auth_pw", hits: 2, ttlSeconds: 60, perSecond: false }]), [2]);
    const acl = await startRedis(t, { aclUser: { name: "limiter", password: "p4ss" } });
    const user = await redisStoreFrom(t, { REDIS_URL: acl.url, REDIS_AUTH: "limiter:p4ss" });
    t.strictSame(
      await user.store.increment([{ key: "auth_acl", hits: 3, ttlSeconds: 60, perSecond: false }]),
      [3],
    );
    t.equal(await acl.cli("GET", "auth_acl"), "3");
  });

  t.test("TLS with and without client certificates", async (t) => {
    const dir = makeTempDir("redis-tls-certs");
    t.teardown(() => removeTempDir(dir));
    const certificates = await generateCertificates(dir);
    const mutual = await startRedis(t, { tls: { certificates, requireClientCert: true } });
    const tlsEnv = {
      REDIS_TLS: "true",
      REDIS_TLS_CACERT: certificates.caCert,
      REDIS_TLS_CLIENT_CERT: certificates.clientCert,
      REDIS_TLS_CLIENT_KEY: certificates.clientKey,
    };
    counterStoreContract(
      t,
      async () => ({
        store: (await redisStoreFrom(t, { ...tlsEnv, REDIS_URL: `localhost:${mutual.port}` })).store,
        ttlSecondsOf: async (key) => Number(await mutual.cli("TTL", key)),
      }),
      { refreshesTtl: true, allAlgorithms: true },
    );
    t.test(
      "server-only TLS: REDIS_TLS_SKIP_HOSTNAME_VERIFICATION checks the chain but not the name",
      async (t) => {
        const serverOnly = await startRedis(t, { tls: { certificates, requireClientCert: false } });
        // `127.1` reaches 127.0.0.1 but is not a name the certificate carries (it has localhost and 127.0.0.1).
        const env = {
          REDIS_TLS: "true",
          REDIS_TLS_CACERT: certificates.caCert,
          REDIS_URL: `127.1:${serverOnly.port}`,
        };
        const strict = await redisStoreFrom(
          t,
          { ...env, REDIS_STARTUP_MAX_ELAPSED_TIME: "200ms" },
          { start: false },
        );
        await t.rejects(strict.store.start(), {
          message:
            /^timed out waiting for Redis connection to 127\.1:\d+ after \d+ms: .*(altnames|IP|Hostname)/,
        });
        const lenient = await redisStoreFrom(t, { ...env, REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: "true" });
        t.strictSame(
          await lenient.store.increment([{ key: "tls_name", hits: 1, ttlSeconds: 60, perSecond: false }]),
          [1],
        );
        const untrusted = await redisStoreFrom(
          t,
          {
            ...env,
            REDIS_TLS_CACERT: certificates.otherCaCert,
            REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: "true",
            REDIS_STARTUP_MAX_ELAPSED_TIME: "200ms",
          },
          { start: false },
        );
        await t.rejects(
          untrusted.store.start(),
          { message: /self-signed|unable to verify|certificate/ },
          "the chain is still checked",
        );
      },
    );
  });

  t.test("sentinel", async (t) => {
    const group = await startSentinelGroup(t);
    counterStoreContract(
      t,
      async () => ({
        store: (await redisStoreFrom(t, { REDIS_TYPE: "sentinel", REDIS_URL: group.sentinelUrl })).store,
        ttlSecondsOf: async (key) => Number(await group.primary.cli("TTL", key)),
      }),
      { refreshesTtl: true, allAlgorithms: true },
    );

    t.test("a master name no sentinel knows: start-up gives every sentinel's answer", async (t) => {
      const url = group.sentinelUrl.replace(/^mymaster,/, "nosuch,");
      const { store } = await redisStoreFrom(
        t,
        { REDIS_TYPE: "sentinel", REDIS_URL: url, REDIS_STARTUP_MAX_ELAPSED_TIME: "200ms" },
        { start: false },
      );
      const answers = group.sentinels.map((s) => `127\\.0\\.0\\.1:${s.port}: no primary named 'nosuch'`);
      await t.rejects(store.start(), {
        message: new RegExp(
          `^timed out waiting for Redis connection to nosuch,.* after \\d+ms: no sentinel gave the address of 'nosuch' \\(${answers.join("; ")}\\)$`,
        ),
      });
    });

    t.test("a replica answering READONLY: the call fails and the connection is replaced", async (t) => {
      const { store, stats } = await redisStoreFrom(t, {
        REDIS_URL: group.replica.url,
        REDIS_POOL_SIZE: "1",
      });
      const line = (name: string) =>
        stats.snapshotLines().find((l) => l.startsWith(`ratelimit.redis_pool.${name}: `));
      t.equal(line("cx_total"), "ratelimit.redis_pool.cx_total: 1");
      await t.rejects(
        async () => store.increment([{ key: "ro", hits: 1, ttlSeconds: 60, perSecond: false }]),
        {
          message: `redis ${group.replica.url}: READONLY You can't write against a read only replica.`,
        },
      );
      const deadline = Date.now() + 5000;
      while (line("cx_total") !== "ratelimit.redis_pool.cx_total: 2" && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      t.equal(line("cx_total"), "ratelimit.redis_pool.cx_total: 2", "a new connection (to look again)");
      t.equal(line("cx_active"), "ratelimit.redis_pool.cx_active: 1");
    });
  });

  t.test("cluster", async (t) => {
    const cluster = await startCluster(t);
    counterStoreContract(
      t,
      async () => ({
        store: (await redisStoreFrom(t, { REDIS_TYPE: "cluster", REDIS_URL: cluster.url })).store,
        ttlSecondsOf: async (key) => Number(await cluster.cli(cluster.nodes[0]!.port, "-c", "TTL", key)),
      }),
      { refreshesTtl: true, allAlgorithms: true },
    );
  });
}
