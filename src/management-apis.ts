import { bootstrapAdmin } from "./auth/admin-bootstrap.js";
import { ApplicationPasswordAuthenticator } from "./auth/application-password-authenticator.js";
import { AUTH_SCHEMA } from "./auth/auth-schema.js";
import { type AccessGuard, accessGuard, MANAGE_OPTIONS } from "./auth/authenticator.js";
import { createFailedAttemptLimiter } from "./auth/failed-attempt-limiter.js";
import { SqlAuthStore } from "./auth/sql-auth-store.js";
import { usersAccess } from "./auth/users-access.js";
import { ManagedDatabase } from "./database/managed-database.js";
import { messageOf } from "./errors.js";
import { BatchRunner } from "./migrations/batch-runner.js";
import { BUILTIN_MIGRATIONS } from "./migrations/builtin/builtin-migrations.js";
import { BUILTIN_MIGRATIONS_SCHEMA } from "./migrations/builtin/builtin-schema.js";
import { MigrationRegistry } from "./migrations/migration-registry.js";
import { MigrationService } from "./migrations/migration-service.js";
import { MigrationWorker } from "./migrations/migration-worker.js";
import { migrationsOpenApi } from "./migrations/migrations-openapi.js";
import { MIGRATIONS_SCHEMA } from "./migrations/migrations-schema.js";
import { loadOperatorMigrations } from "./migrations/operator-migrations.js";
import { SqlMigrationStore } from "./migrations/sql-migration-store.js";
import type { Logger } from "./observability/logger.js";
import type { StatsRegistry } from "./observability/stats-registry.js";
import type { Settings } from "./settings/load-settings.js";
import type { RouteRegistrar } from "./transports/grpc/connect-routes.js";
import { migrationServiceRoutes } from "./transports/grpc/migration-service-routes.js";
import { userServiceRoutes } from "./transports/grpc/user-service-routes.js";
import type { HttpRoute } from "./transports/http/http-route.js";
import { migrationsNamespace, migrationsRoutes } from "./transports/http/migrations-routes.js";
import { usersRoutes } from "./transports/http/users-routes.js";
import { PasswordHasher } from "./users/password-hasher.js";
import { SqlUserStore } from "./users/sql-user-store.js";
import { UserService } from "./users/user-service.js";
import { usersOpenApi } from "./users/users-openapi.js";
import { USERS_SCHEMA } from "./users/users-schema.js";

/**
 * The users and migrations APIs and what they share: the database, application-password authentication
 * and the migration worker. Built by the daemon; rate limiting never depends on any of it.
 */
export class ManagementApis {
  readonly database: ManagedDatabase;
  readonly users: UserService;
  readonly migrations: MigrationService;
  readonly registry = new MigrationRegistry();
  /** Guards routes that need `manage_options`. */
  readonly guard: AccessGuard;
  readonly httpRoutes: HttpRoute[];
  readonly grpcRoutes: RouteRegistrar[];
  readonly #worker: MigrationWorker | undefined;
  readonly #settings: Settings;
  readonly #logger: Logger;
  readonly #userStore: SqlUserStore;
  readonly #authStore: SqlAuthStore;
  readonly #hasher: PasswordHasher;

  constructor(settings: Settings, logger: Logger, stats: StatsRegistry) {
    this.#settings = settings;
    this.#logger = logger;
    this.database = new ManagedDatabase({
      location: settings.databaseUrl,
      steps: [...USERS_SCHEMA, ...AUTH_SCHEMA, ...MIGRATIONS_SCHEMA, ...BUILTIN_MIGRATIONS_SCHEMA],
      maxConnections: settings.databaseMaxConnections,
      logger,
    });
    this.#userStore = new SqlUserStore(this.database);
    this.#authStore = new SqlAuthStore(this.database);
    this.#hasher = new PasswordHasher({
      parameters: { logN: settings.usersPasswordScryptLogN, r: 8, p: 1 },
      maxQueued: settings.usersPasswordHashQueue,
    });
    const debug = logger.debugEnabled ? (line: string) => logger.debug(line) : undefined;
    this.users = new UserService({ store: this.#userStore, hasher: this.#hasher, debug });
    const limiter = createFailedAttemptLimiter({ failuresPerMinute: settings.authFailuresPerMinute, stats });
    const authenticator = new ApplicationPasswordAuthenticator({
      users: this.#userStore,
      auth: this.#authStore,
      limiter,
      logger,
    });
    this.guard = accessGuard(authenticator, MANAGE_OPTIONS);
    for (const definition of BUILTIN_MIGRATIONS) this.registry.register(definition, "built-in");
    const store = new SqlMigrationStore(this.database);
    this.#worker = settings.migrationsWorker
      ? new MigrationWorker({
          store,
          runner: new BatchRunner({
            store,
            registry: this.registry,
            logger,
            retryBaseMs: settings.migrationsRetryBaseMs,
            retryMaxMs: settings.migrationsRetryMaxMs,
            nowMs: Date.now,
          }),
          logger,
          pollIntervalMs: settings.migrationsPollIntervalMs,
          leaseMs: settings.migrationsJobLeaseMs,
          nowMs: Date.now,
        })
      : undefined;
    this.migrations = new MigrationService({
      registry: this.registry,
      store,
      onScheduled: () => this.#worker?.wake(),
    });
    const access = usersAccess({
      guard: this.guard,
      requireAuth: settings.usersRequireAuth,
      isPrivileged: (userId) => this.#authStore.holdsAnyCapability(userId),
    });
    const migrationsBase = `/${migrationsNamespace(settings.migrationsHookPrefix)}/migrations/v1`;
    this.httpRoutes = [
      usersRoutes({
        service: this.users,
        basePath: settings.usersBasePath,
        maxBodyBytes: settings.usersMaxBodyBytes,
        openApi: usersOpenApi(settings.usersBasePath),
        access,
        logger,
      }),
      migrationsRoutes({
        service: this.migrations,
        basePath: migrationsBase,
        guard: this.guard,
        openApi: migrationsOpenApi(migrationsBase),
        logger,
      }),
    ];
    this.grpcRoutes = [
      userServiceRoutes(this.users, access),
      migrationServiceRoutes(this.migrations, this.guard),
    ];
  }

  /**
   * Loads the operator's migrations (a bad module stops start-up, naming the file), then makes the first
   * database attempt. Once the database is ready (now or after retries): the admin bootstrap, then the
   * worker.
   */
  async start(): Promise<void> {
    const { migrationsDir } = this.#settings;
    if (migrationsDir !== "") {
      for (const { file, definition } of await loadOperatorMigrations(migrationsDir)) {
        this.registry.register(definition, file);
      }
    }
    let afterReady: Promise<void> | undefined;
    this.database.onReady(() => {
      afterReady = this.#afterDatabaseReady();
    });
    await this.database.start();
    // When the database came up at once, the administrator exists before the listeners open.
    await afterReady;
  }

  /** Lets the batch in progress finish within `graceMs`, then closes the database and the hashing threads. */
  async stop(graceMs: number): Promise<void> {
    await this.#worker?.stop(graceMs);
    await this.database.close();
    await this.#hasher.close();
  }

  async #afterDatabaseReady(): Promise<void> {
    const { adminEmail, adminAppPassword } = this.#settings;
    if (adminEmail !== "") {
      try {
        const changes = await bootstrapAdmin({
          email: adminEmail,
          applicationPassword: adminAppPassword,
          users: this.#userStore,
          auth: this.#authStore,
          hasher: this.#hasher,
          nowMs: Date.now(),
        });
        if (changes.length > 0)
          this.#logger.warn(`admin bootstrap for ${adminEmail.trim()}: ${changes.join(", ")}`);
      } catch (error) {
        this.#logger.error(`admin bootstrap for ${adminEmail.trim()} failed: ${messageOf(error)}`);
      }
    }
    this.#worker?.start();
  }
}
