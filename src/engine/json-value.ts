/** A JSON value as carried by `google.protobuf.Struct` (rule `metadata`, response `dynamic_metadata`). */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };
