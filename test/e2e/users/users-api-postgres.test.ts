// The users REST route table on PostgreSQL (a schema of this test's own on the machine's server).
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { createPostgresSchema } from "../../helpers/postgres-schema.js";
import { usersApiCases } from "./users-api-cases.js";

const schema = await createPostgresSchema(t);
if (schema !== undefined) {
  const dir = t.testdir({ config: {} });
  const daemon = await startDaemon({
    RUNTIME_ROOT: dir,
    DATABASE_URL: schema.url,
    USERS_MAX_BODY_BYTES: "4096",
  });
  t.teardown(() => daemon.stop());
  usersApiCases(t, {
    port: daemon.httpPort,
    maxBodyBytes: 4096,
    async passwordHashOf(emailKey) {
      const rows = await schema.query<{ password_hash: string }>(
        "SELECT password_hash FROM users WHERE email_key = $1",
        [emailKey],
      );
      return rows[0]?.password_hash;
    },
  });
}
