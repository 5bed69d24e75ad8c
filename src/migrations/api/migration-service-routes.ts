import { create } from "@bufbuild/protobuf";
import type { AccessGuard } from "../../auth/authenticator.js";
import type { JsonObject } from "../../engine/json-value.js";
import { InvalidArgumentError } from "../../errors.js";
import {
  ExecutionSchema,
  ListExecutionsResponseSchema,
  ListLogsResponseSchema,
  ListMigrationsResponseSchema,
  LogEntrySchema,
  MigrationSchema,
  MigrationService as MigrationServiceDescriptor,
  type ScheduleRequest,
  ScheduleResponseSchema,
} from "../../gen/ratelimitd/migrations/v1/migrations_pb.js";
import { guarded } from "../../transports/grpc/call-credentials.js";
import type { RouteRegistrar } from "../../transports/grpc/route-registrar.js";
import { parseLogQuery } from "../log-query.js";
import type { Operation } from "../migration.js";
import type { MigrationService } from "../migration-service.js";
import { executionJson, logJson } from "./migrations-json.js";

/**
 * `ratelimitd.migrations.v1.MigrationService` over gRPC, gRPC-Web and Connect: the same
 * {@link MigrationService} and checks as the REST routes; every call needs `manage_options` credentials
 * in the `authorization` metadata.
 */
export function migrationServiceRoutes(service: MigrationService, guard: AccessGuard): RouteRegistrar {
  const check = guarded(guard);
  const schedule = (operation: Operation) =>
    check(async (request: ScheduleRequest) => {
      const result = await service.schedule(request.migrationId, operation, {
        fromBatch: request.fromBatch,
        toBatch: request.toBatch,
        batchSize: request.batchSize,
      });
      return create(ScheduleResponseSchema, {
        success: true,
        ...result,
        executionId: BigInt(result.executionId),
      });
    });
  return (router) => {
    router.service(MigrationServiceDescriptor, {
      listMigrations: check(async (request) => {
        const migrations = await service.list(request.tags.length > 0 ? request.tags : undefined);
        return create(ListMigrationsResponseSchema, {
          migrations: migrations.map((m) => create(MigrationSchema, { ...m, tags: [...m.tags] })),
        });
      }),
      runMigration: schedule("up"),
      rollbackMigration: schedule("down"),
      listExecutions: check(async (request) => {
        const executions = await service.executions(request.migrationId);
        return create(ListExecutionsResponseSchema, {
          executions: executions.map((e) => {
            const json = executionJson(e);
            return create(ExecutionSchema, {
              id: BigInt(e.id),
              migrationId: e.migrationId,
              operation: e.operation,
              parentExecutionId: e.parentExecutionId === null ? undefined : BigInt(e.parentExecutionId),
              startDateGmt: json.start_date_gmt ?? undefined,
              endDateGmt: json.end_date_gmt ?? undefined,
              status: e.status,
              itemsTotal: BigInt(e.itemsTotal),
              itemsProcessed: BigInt(e.itemsProcessed),
              createdAt: json.created_at,
            });
          }),
        });
      }),
      listLogs: check(async (request) => {
        const params: Record<string, string | undefined> = {
          type: request.type,
          "not-type": request.notType,
          search: request.search,
          limit: request.limit?.toString(),
          offset: request.offset?.toString(),
          order: request.order,
          "order-by": request.orderBy,
        };
        const parsed = parseLogQuery((name) => params[name]);
        if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
        const logs = await service.logs(request.executionId.toString(), parsed.query);
        return create(ListLogsResponseSchema, {
          logs: logs.map((l) => {
            const json = logJson(l);
            return create(LogEntrySchema, {
              id: BigInt(l.id),
              executionId: BigInt(l.executionId),
              type: l.type,
              message: l.message,
              data: l.data as JsonObject,
              createdAt: json.created_at,
            });
          }),
        });
      }),
    });
  };
}
