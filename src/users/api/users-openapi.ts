import { MAX_EMAIL_LENGTH } from "../email-address.js";
import { MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH, USER_ACCESS_TEXT, USER_ERROR_TEXT } from "../user.js";
import { MAX_PAGE } from "../user-service.js";

const json = (schema: object) => ({ "application/json": { schema } });
const error = (description: string, text: string) => ({
  description,
  content: json({ $ref: "#/components/schemas/Error", examples: [{ error: text }] }),
});
const userResponse = { description: "The user", content: json({ $ref: "#/components/schemas/User" }) };
const idParameter = {
  name: "user_id",
  in: "path",
  required: true,
  description: "The user's id. Anything that is not a positive integer names no user (404).",
  schema: { type: "integer", minimum: 1 },
};
const badRequest = error("Malformed or invalid body", USER_ERROR_TEXT.badRequest);
const notFound = error("No user has that id", USER_ERROR_TEXT.notFound);
const duplicate = error("Another user has that e-mail address", USER_ERROR_TEXT.duplicateEmail);
const tooLarge = error("Body larger than USERS_MAX_BODY_BYTES", USER_ERROR_TEXT.tooLarge);
const serverError = error("Internal failure (details are logged)", USER_ERROR_TEXT.serverError);
const busy = error(
  "Too many passwords waiting to be hashed (USERS_PASSWORD_HASH_QUEUE); nothing was done, retry after Retry-After",
  USER_ERROR_TEXT.busy,
);
const notAllowed = error("Method not allowed (see the Allow header)", USER_ERROR_TEXT.methodNotAllowed);
/**
 * Changing or deleting a user that holds a capability takes the credentials of a `manage_options` user;
 * with USERS_REQUIRE_AUTH every operation does.
 */
const guarded = {
  security: [{}, { applicationPassword: [] }],
  responses: {
    "401": error(
      "No or wrong credentials where they are needed (WWW-Authenticate: Basic)",
      USER_ACCESS_TEXT.required,
    ),
    "403": error("The credentials' user does not hold manage_options", USER_ACCESS_TEXT.forbiddenPrivileged),
    "429": error("Too many failed logins from this address (Retry-After)", USER_ACCESS_TEXT.throttled),
  },
};

/** The OpenAPI 3.1 document of the users REST routes under `basePath` (served at `{base}/users/openapi.json`). */
export function usersOpenApi(basePath: string): object {
  return {
    openapi: "3.1.0",
    info: {
      title: "ratelimitd users API",
      version: "1",
      description:
        "Create, update, delete, get and list users. Passwords are stored as scrypt hashes and never returned.",
    },
    paths: {
      [`${basePath}/users`]: {
        get: {
          operationId: "listUsers",
          summary: "List users by id ascending",
          parameters: [
            pageParameter("limit", `Page size, 1–${MAX_PAGE}`, 1, MAX_PAGE),
            pageParameter("offset", "Users skipped", 0),
          ],
          responses: {
            "200": {
              description: "Users (`[]` when there are none); X-Total-Count is set when a page was asked for",
              headers: { "X-Total-Count": { schema: { type: "integer" } } },
              content: json({ type: "array", items: { $ref: "#/components/schemas/User" } }),
            },
            "400": badRequest,
            "405": notAllowed,
            "500": serverError,
          },
        },
        put: {
          operationId: "createUser",
          summary: "Create a user",
          requestBody: { required: true, content: json({ $ref: "#/components/schemas/CreateUser" }) },
          responses: {
            "200": userResponse,
            "400": badRequest,
            "403": duplicate,
            "405": notAllowed,
            "413": tooLarge,
            "500": serverError,
            "503": busy,
          },
        },
      },
      [`${basePath}/users/{user_id}`]: {
        parameters: [idParameter],
        get: {
          operationId: "getUser",
          summary: "Get one user",
          responses: { "200": userResponse, "404": notFound, "405": notAllowed, "500": serverError },
        },
        patch: {
          operationId: "updateUser",
          summary: "Change the attributes given (at least one)",
          description: "A user holding any capability may only be changed with manage_options credentials.",
          security: guarded.security,
          requestBody: { required: true, content: json({ $ref: "#/components/schemas/UpdateUser" }) },
          responses: {
            "200": userResponse,
            ...guarded.responses,
            "400": badRequest,
            "403": duplicate,
            "404": notFound,
            "405": notAllowed,
            "413": tooLarge,
            "500": serverError,
            "503": busy,
          },
        },
        delete: {
          operationId: "deleteUser",
          summary: "Delete a user for good (the e-mail address is free again at once)",
          description: "A user holding any capability may only be deleted with manage_options credentials.",
          security: guarded.security,
          responses: {
            "200": { description: "Deleted; empty body" },
            ...guarded.responses,
            "404": notFound,
            "405": notAllowed,
            "500": serverError,
          },
        },
      },
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
        User: {
          type: "object",
          required: ["id", "name", "email"],
          additionalProperties: false,
          properties: {
            id: { type: "integer", minimum: 1 },
            name: { type: "string" },
            email: { type: "string", format: "email" },
          },
        },
        CreateUser: {
          type: "object",
          required: ["name", "email", "password"],
          properties: attributes(),
        },
        UpdateUser: { type: "object", minProperties: 1, properties: attributes() },
        Error: { type: "object", required: ["error"], properties: { error: { type: "string" } } },
      },
    },
  };
}

function attributes(): object {
  return {
    name: { type: "string", minLength: 1, maxLength: MAX_NAME_LENGTH, description: "Trimmed" },
    email: {
      type: "string",
      format: "email",
      maxLength: MAX_EMAIL_LENGTH,
      description: "Trimmed; unique, case-insensitively",
    },
    password: { type: "string", minLength: 1, maxLength: MAX_PASSWORD_LENGTH, writeOnly: true },
  };
}

function pageParameter(name: string, description: string, minimum: number, maximum?: number): object {
  return {
    name,
    in: "query",
    required: false,
    description,
    schema: { type: "integer", minimum, ...(maximum ? { maximum } : {}) },
  };
}
