import { bootstrapAdmin } from "../auth/admin-bootstrap.js";
import { ApplicationPasswordAuthenticator } from "../auth/application-password-authenticator.js";
import { type AccessGuard, accessGuard, MANAGE_OPTIONS } from "../auth/authenticator.js";
import { SqlAuthStore } from "../auth/sql-auth-store.js";
import { usersAccess } from "../auth/users-access.js";
import type { ManagedDatabase } from "../database/managed-database.js";
import type { SqlDatabase } from "../database/sql-database.js";
import { messageOf } from "../errors.js";
import type { MigrationRegistry } from "../migrations/migration-registry.js";
import { MigrationService } from "../migrations/migration-service.js";
import type { MigrationWorker } from "../migrations/migration-worker.js";
import { SqlMigrationStore } from "../migrations/sql-migration-store.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { Settings } from "../settings/load-settings.js";
import type { RouteRegistrar } from "../transports/grpc/route-registrar.js";
import type { HttpRoute } from "../transports/http/http-route.js";
import { PasswordHasher } from "../users/password-hasher.js";
import { SqlUserStore } from "../users/sql-user-store.js";
import { UserService } from "../users/user-service.js";
import { daemonMigrationWorker } from "./daemon-migration-worker.js";
import { createFailedAttemptLimiter } from "./failed-attempt-limiter.js";
import {
  builtinMigrationRegistry,
  managedDatabase,
  registerOperatorMigrations,
} from "./management-database.js";
import { consoleManagementRoutes, managementRoutes } from "./management-routes.js";

/**
 * How a worker thread (WORKERS > 1, docs/workers.md) reaches the database the main thread owns: every
 * statement is relayed there, and a migration scheduled here wakes the main thread's migration worker.
 */
export interface RelayedManagement {
  readonly database: SqlDatabase;
  readonly wakeMigrationWorker: () => void;
  /** The failed-login throttle's counters, shared with the main thread and the other workers. */
  readonly authTable: SharedArrayBuffer;
}

/**
 * The users and migrations APIs and what they share: the database, application-password authentication
 * and the migration worker. Built by the daemon; rate limiting never depends on any of it. In a worker
 * thread (`relayed`) the database is the main thread's, and the schema, the administrator bootstrap and
 * the migration worker are left to the main thread, so each happens once.
 */
export class ManagementApis {
  readonly database: SqlDatabase;
  /** The database this thread opens and brings to the schema; undefined in a worker thread. */
  readonly #managed: ManagedDatabase | undefined;
  readonly users: UserService;
  readonly migrations: MigrationService;
  readonly registry: MigrationRegistry = builtinMigrationRegistry();
  /** Guards routes that need `manage_options`. */
  readonly guard: AccessGuard;
  readonly httpRoutes: HttpRoute[];
  readonly grpcRoutes: RouteRegistrar[];
  /** The users and migrations APIs for the operator console: credentials always required. */
  readonly consoleRoutes: HttpRoute[];
  readonly #worker: MigrationWorker | undefined;
  readonly #settings: Settings;
  readonly #logger: Logger;
  readonly #userStore: SqlUserStore;
  readonly #authStore: SqlAuthStore;
  readonly #hasher: PasswordHasher;

  /**
   * `authTable` (WORKERS > 1, in the main thread): the failed-login throttle's counter table, which the
   * workers share (a worker gets it in `relayed`).
   */
  constructor(
    settings: Settings,
    logger: Logger,
    stats: StatsRegistry,
    relayed?: RelayedManagement,
    authTable?: SharedArrayBuffer,
  ) {
    this.#settings = settings;
    this.#logger = logger;
    this.#managed = relayed === undefined ? managedDatabase(settings, logger) : undefined;
    this.database = relayed?.database ?? (this.#managed as ManagedDatabase);
    this.#userStore = new SqlUserStore(this.database);
    this.#authStore = new SqlAuthStore(this.database);
    this.#hasher = new PasswordHasher({
      parameters: { logN: settings.usersPasswordScryptLogN, r: 8, p: 1 },
      maxQueued: settings.usersPasswordHashQueue,
    });
    const debug = logger.debugEnabled ? (line: string) => logger.debug(line) : undefined;
    this.users = new UserService({ store: this.#userStore, hasher: this.#hasher, debug });
    this.guard = this.#authenticationGuard(stats, relayed?.authTable ?? authTable);
    const store = new SqlMigrationStore(this.database);
    this.#worker =
      relayed === undefined ? daemonMigrationWorker(settings, store, this.registry, logger) : undefined;
    this.migrations = new MigrationService({
      registry: this.registry,
      store,
      onScheduled: () => (relayed === undefined ? this.#worker?.wake() : relayed.wakeMigrationWorker()),
    });
    const accessOptions = {
      guard: this.guard,
      requireAuth: settings.usersRequireAuth,
      isPrivileged: (userId: number) => this.#authStore.holdsAnyCapability(userId),
    };
    const access = usersAccess(accessOptions);
    const services = { users: this.users, migrations: this.migrations, guard: this.guard, access };
    const routes = managementRoutes(settings, services, logger);
    this.httpRoutes = routes.http;
    this.grpcRoutes = routes.grpc;
    const signedIn = usersAccess({ ...accessOptions, requireAuth: true });
    this.consoleRoutes = consoleManagementRoutes({ ...services, access: signedIn }, settings, logger);
  }

  /**
   * Loads the operator's migrations (a bad module stops start-up, naming the file), then makes the first
   * database attempt. Once the database is ready (now or after retries): the admin bootstrap, then the
   * worker.
   */
  async start(): Promise<void> {
    await registerOperatorMigrations(this.registry, this.#settings);
    const managed = this.#managed;
    if (managed === undefined) return;
    let afterReady: Promise<void> | undefined;
    managed.onReady(() => {
      afterReady = this.#afterDatabaseReady();
    });
    await managed.start();
    // When the database came up at once, the administrator exists before the listeners open.
    await afterReady;
  }

  /** The database's dialect, and whether it is ready (a worker thread's is the main thread's). */
  get databaseStatus(): { readonly dialect: "sqlite" | "postgres"; readonly ready: boolean } {
    return { dialect: this.database.dialect, ready: this.#managed?.ready ?? true };
  }

  /** Wakes the migration worker (a migration was scheduled in a worker thread). */
  wakeMigrationWorker(): void {
    this.#worker?.wake();
  }

  /** Lets the batch in progress finish within `graceMs`, then closes the database and the hashing threads. */
  async stop(graceMs: number): Promise<void> {
    await this.#worker?.stop(graceMs);
    await this.database.close();
    await this.#hasher.close();
  }

  /** Application passwords, with the failed-login throttle (AUTH_FAILURES_PER_MINUTE). */
  #authenticationGuard(stats: StatsRegistry, sharedTable: SharedArrayBuffer | undefined): AccessGuard {
    const limiter = createFailedAttemptLimiter({
      failuresPerMinute: this.#settings.authFailuresPerMinute,
      stats,
      sharedTable,
    });
    const authenticator = new ApplicationPasswordAuthenticator({
      users: this.#userStore,
      auth: this.#authStore,
      limiter,
      logger: this.#logger,
    });
    return accessGuard(authenticator, MANAGE_OPTIONS);
  }

  async #afterDatabaseReady(): Promise<void> {
    const { adminEmail, adminAppPassword } = this.#settings;
    if (adminEmail === "") await this.#sayHowToGetAnAdministrator();
    else {
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

  /**
   * A first run (no user holds manage_options, no ADMIN_EMAIL): one line at info saying how to get the
   * credential the console's sign-in and the migrations API want. Nothing reachable without credentials
   * creates one; the operator does, through the daemon's own settings or ratelimitd-admin.
   */
  async #sayHowToGetAnAdministrator(): Promise<void> {
    try {
      if (await this.#authStore.anyoneHolds(MANAGE_OPTIONS)) return;
      this.#logger.info(NO_ADMINISTRATOR_YET);
    } catch (error) {
      // Only a hint: the database's own failures are logged by ManagedDatabase.
      this.#logger.debug(`could not look for an administrator: ${messageOf(error)}`);
    }
  }
}

/** The first-run hint of {@link ManagementApis} (docs/console.md, "First sign-in"). */
export const NO_ADMINISTRATOR_YET =
  "no administrator yet: the console's Users and Migrations pages and the migrations API need the e-mail address and an application password of a user holding manage_options; to create one, start the daemon with ADMIN_EMAIL=<your e-mail address> and ADMIN_APP_PASSWORD=<an application password of 16 or more characters>";
