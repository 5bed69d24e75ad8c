import { LOG_TYPES, type LogType } from "./migration.js";
import type { LogQuery } from "./migration-records.js";

/** A parsed log query, or the 400 message naming the parameter at fault. */
export type ParsedLogQuery = { ok: true; query: LogQuery } | { ok: false; message: string };

const ORDER_BY = ["id", "type", "created_at"] as const;

/**
 * Reads the logs route's query parameters (docs/migrations-api.md): `type` / `not-type` (comma-separated log
 * types, not both), `search`, `limit` (1–200, default 100), `offset` (≥ 0, default 0), `order`
 * (ASC/DESC, any case, default DESC), `order-by` (id, type, created_at; default created_at).
 */
export function parseLogQuery(get: (name: string) => string | undefined): ParsedLogQuery {
  const type = get("type");
  const notType = get("not-type");
  if (type !== undefined && notType !== undefined) {
    return { ok: false, message: "Invalid parameters: type and not-type cannot be used together." };
  }
  const types = typeList("type", type);
  if (typeof types === "string") return { ok: false, message: types };
  const notTypes = typeList("not-type", notType);
  if (typeof notTypes === "string") return { ok: false, message: notTypes };
  const limit = integer("limit", get("limit"), 100, 1, 200);
  if (typeof limit === "string") return { ok: false, message: limit };
  const offset = integer("offset", get("offset"), 0, 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset === "string") return { ok: false, message: offset };
  const order = (get("order") ?? "DESC").toUpperCase();
  if (order !== "ASC" && order !== "DESC") {
    return { ok: false, message: "Invalid parameter order: must be ASC or DESC." };
  }
  const orderBy = get("order-by") ?? "created_at";
  if (!(ORDER_BY as readonly string[]).includes(orderBy)) {
    return { ok: false, message: `Invalid parameter order-by: must be one of ${ORDER_BY.join(", ")}.` };
  }
  const search = get("search");
  // PostgreSQL refuses a NUL in a query parameter (and no message there can hold one).
  if (search?.includes("\u0000")) {
    return { ok: false, message: "Invalid parameter search: must not contain NUL characters." };
  }
  return {
    ok: true,
    query: {
      ...(types ? { types } : {}),
      ...(notTypes ? { notTypes } : {}),
      ...(search ? { search } : {}),
      limit,
      offset,
      order,
      orderBy: orderBy as LogQuery["orderBy"],
    },
  };
}

function typeList(name: string, text: string | undefined): LogType[] | undefined | string {
  if (text === undefined) return undefined;
  const items = text.split(",").map((item) => item.trim());
  const unknown = items.find((item) => !(LOG_TYPES as readonly string[]).includes(item));
  if (unknown !== undefined) {
    return `Invalid parameter ${name}: "${unknown}" is not one of ${LOG_TYPES.join(", ")}.`;
  }
  return items as LogType[];
}

function integer(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number | string {
  if (text === undefined) return fallback;
  const value = /^-?\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (Number.isSafeInteger(value) && value >= min && value <= max) return value;
  return max === Number.MAX_SAFE_INTEGER
    ? `Invalid parameter ${name}: must be an integer greater than or equal to ${min}.`
    : `Invalid parameter ${name}: must be an integer between ${min} and ${max}.`;
}
