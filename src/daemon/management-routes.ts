import type { AccessGuard } from "../auth/authenticator.js";
import type { UsersAccess } from "../auth/users-access.js";
import { migrationServiceRoutes } from "../migrations/api/migration-service-routes.js";
import { migrationsOpenApi } from "../migrations/api/migrations-openapi.js";
import { migrationsNamespace, migrationsRoutes } from "../migrations/api/migrations-routes.js";
import type { MigrationService } from "../migrations/migration-service.js";
import type { Logger } from "../observability/logger.js";
import type { Settings } from "../settings/load-settings.js";
import type { RouteRegistrar } from "../transports/grpc/route-registrar.js";
import type { HttpRoute } from "../transports/http/http-route.js";
import { userServiceRoutes } from "../users/api/user-service-routes.js";
import { usersOpenApi } from "../users/api/users-openapi.js";
import { usersRoutes } from "../users/api/users-routes.js";
import type { UserService } from "../users/user-service.js";

/** What the users and migrations routes serve. */
export interface ManagementServices {
  readonly users: UserService;
  readonly migrations: MigrationService;
  /** Who may call the users API (USERS_REQUIRE_AUTH). */
  readonly access: UsersAccess;
  /** Guards the migrations API: `manage_options`. */
  readonly guard: AccessGuard;
}

/** The users and migrations APIs' REST routes (HTTP port) and Connect/gRPC services (gRPC port). */
export function managementRoutes(
  settings: Settings,
  services: ManagementServices,
  logger: Logger,
): { http: HttpRoute[]; grpc: RouteRegistrar[] } {
  const { users, migrations, access, guard } = services;
  const migrationsBase = `/${migrationsNamespace(settings.migrationsHookPrefix)}/migrations/v1`;
  const http = [
    usersRoutes({
      service: users,
      basePath: settings.usersBasePath,
      maxBodyBytes: settings.usersMaxBodyBytes,
      openApi: usersOpenApi(settings.usersBasePath),
      access,
      logger,
    }),
    migrationsRoutes({
      service: migrations,
      basePath: migrationsBase,
      guard,
      openApi: migrationsOpenApi(migrationsBase),
      logger,
    }),
  ];
  return { http, grpc: [userServiceRoutes(users, access), migrationServiceRoutes(migrations, guard)] };
}

/**
 * The same users and migrations routes for the operator console, under `/console/api` on the debug port
 * (docs/console.md): every request needs `manage_options` credentials (`access` says so), and a
 * 401 carries no `WWW-Authenticate`, so browsers never prompt for or remember credentials themselves.
 */
export function consoleManagementRoutes(
  services: ManagementServices,
  settings: Settings,
  logger: Logger,
): HttpRoute[] {
  const base = "/console/api";
  const users = usersRoutes({
    service: services.users,
    basePath: base,
    maxBodyBytes: settings.usersMaxBodyBytes,
    openApi: usersOpenApi(base),
    access: services.access,
    logger,
    challenge: false,
  });
  const migrations = migrationsRoutes({
    service: services.migrations,
    basePath: base,
    guard: services.guard,
    openApi: migrationsOpenApi(base),
    logger,
    challenge: false,
  });
  return [
    users,
    {
      // Only the migrations API's own paths: the rest of /console/api is the console's.
      matches: (path) => path.startsWith(`${base}/migrations`) || path.startsWith(`${base}/executions/`),
      handle: migrations.handle,
    },
  ];
}
