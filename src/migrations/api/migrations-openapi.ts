import { LOG_TYPES } from "../migration.js";
import { MAX_BATCH_SIZE } from "../migration-service.js";

const json = (schema: object) => ({ "application/json": { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: json(ref("Error")) });
const ERRORS = {
  "401": error("No credentials, or wrong ones (with WWW-Authenticate: Basic)"),
  "403": error("The user lacks manage_options"),
  "429": error("Too many failed authentication attempts from this address (with Retry-After)"),
  "500": error("Internal failure (details are logged)"),
};
const migrationId = {
  name: "migration_id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[a-zA-Z0-9_-]+$" },
};
const executionId = {
  name: "execution_id",
  in: "path",
  required: true,
  schema: { type: "integer", minimum: 1 },
};
const query = (name: string, description: string, schema: object) => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});
const batchParameters = {
  type: "object",
  properties: {
    "from-batch": { type: "integer", minimum: 1, default: 1 },
    "to-batch": { type: "integer", minimum: 1, description: "Default: the last batch. A hard stop." },
    "batch-size": {
      type: "integer",
      minimum: 1,
      maximum: MAX_BATCH_SIZE,
      description: "Default: the migration's own",
    },
  },
};
const logParameters = [
  query("type", `Comma-separated types to include (${LOG_TYPES.join(", ")})`, { type: "string" }),
  query("not-type", "Comma-separated types to exclude (not with type)", { type: "string" }),
  query("search", "Case-insensitive substring of the message", { type: "string" }),
  query("limit", "Entries returned", { type: "integer", minimum: 1, maximum: 200, default: 100 }),
  query("offset", "Entries skipped", { type: "integer", minimum: 0, default: 0 }),
  query("order", "Sort direction (any case)", { type: "string", enum: ["ASC", "DESC"], default: "DESC" }),
  query("order-by", "Sort column; ties by id", {
    type: "string",
    enum: ["id", "type", "created_at"],
    default: "created_at",
  }),
];

const ACTIVE = "An execution of this migration is already scheduled or running";

function schedule(operationId: string, summary: string, conflict: string) {
  return {
    operationId,
    summary,
    parameters: [migrationId],
    requestBody: { required: false, content: json(batchParameters) },
    responses: {
      "200": { description: "Scheduled", content: json(ref("ScheduleResult")) },
      "400": error("Invalid parameters, not applicable, or cannot run"),
      "404": error("Unknown migration"),
      "409": error(conflict),
      ...ERRORS,
    },
  };
}

function logs(operationId: string) {
  return {
    get: {
      operationId,
      summary: "An execution's log entries",
      parameters: [executionId, ...logParameters],
      responses: {
        "200": { description: "Log entries", content: json({ type: "array", items: ref("LogEntry") }) },
        "400": error("Invalid query parameter"),
        "404": error("Unknown execution"),
        ...ERRORS,
      },
    },
  };
}

/** The OpenAPI 3.1 document of the migrations REST routes under `basePath`. */
export function migrationsOpenApi(basePath: string): object {
  return {
    openapi: "3.1.0",
    info: {
      title: "ratelimitd migrations API",
      version: "1",
      description:
        "List, run and roll back batched data migrations in the background; follow executions and logs.",
    },
    servers: [{ url: basePath }],
    security: [{ applicationPassword: [] }],
    paths: {
      "/migrations": {
        get: {
          operationId: "listMigrations",
          summary: "Registered migrations",
          parameters: [query("tags", "Comma-separated; any-of, exact, case-sensitive", { type: "string" })],
          responses: {
            "200": { description: "Migrations", content: json({ type: "array", items: ref("Migration") }) },
            ...ERRORS,
          },
        },
      },
      "/migrations/{migration_id}/run": {
        post: schedule("runMigration", "Schedule a run (operation up)", ACTIVE),
      },
      "/migrations/{migration_id}/rollback": {
        post: schedule(
          "rollbackMigration",
          "Schedule a rollback (operation down)",
          `${ACTIVE}, or its latest execution is reverted (it is already rolled back)`,
        ),
      },
      "/migrations/{migration_id}/executions": {
        get: {
          operationId: "listExecutions",
          summary: "A migration's executions, id ascending",
          parameters: [migrationId],
          responses: {
            "200": { description: "Executions", content: json({ type: "array", items: ref("Execution") }) },
            "404": error("Unknown migration"),
            ...ERRORS,
          },
        },
      },
      "/executions/{execution_id}/logs": logs("listLogs"),
      "/migrations/executions/{execution_id}/logs": logs("listLogsUnderMigrations"),
    },
    components: {
      securitySchemes: {
        applicationPassword: {
          type: "http",
          scheme: "basic",
          description: "E-mail address and an application password of a user holding manage_options",
        },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["code", "success", "message"],
          properties: { code: { type: "string" }, success: { const: false }, message: { type: "string" } },
        },
        Migration: {
          type: "object",
          properties: {
            id: { type: "string" },
            label: { type: "string" },
            description: { type: "string" },
            tags: { type: "array", items: { type: "string" } },
            total_batches: { type: "integer" },
            can_run: { type: "boolean" },
            is_applicable: { type: "boolean" },
            status: {
              type: "string",
              enum: ["pending", "scheduled", "running", "completed", "failed", "reverted", "not-applicable"],
            },
          },
        },
        ScheduleResult: {
          type: "object",
          properties: {
            success: { const: true },
            message: { type: "string" },
            execution_id: { type: "integer" },
            operation: { enum: ["up", "down"] },
            from_batch: { type: "integer" },
            to_batch: { type: "integer" },
            batch_size: { type: "integer" },
          },
        },
        Execution: {
          type: "object",
          properties: {
            id: { type: "integer" },
            migration_id: { type: "string" },
            operation: { enum: ["up", "down"] },
            parent_execution_id: { type: ["integer", "null"] },
            start_date_gmt: { type: ["string", "null"], format: "date-time" },
            end_date_gmt: { type: ["string", "null"], format: "date-time" },
            status: { enum: ["scheduled", "running", "completed", "failed", "reverted"] },
            items_total: { type: "integer" },
            items_processed: { type: "integer" },
            created_at: { type: "string", format: "date-time" },
          },
        },
        LogEntry: {
          type: "object",
          properties: {
            id: { type: "integer" },
            execution_id: { type: "integer" },
            type: { enum: [...LOG_TYPES] },
            message: { type: "string" },
            data: { type: "object" },
            created_at: { type: "string", format: "date-time" },
          },
        },
      },
    },
  };
}
