import { newApplicationPassword } from "../../auth/application-password.js";
import type { ApplicationPasswordInfo } from "../../auth/sql-auth-store.js";
import { ConflictError, NotFoundError } from "../../errors.js";
import { isoWithOffset } from "../../migrations/migration-records.js";
import type { AdminCommand } from "./admin-command.js";
import type { AdminContext } from "./admin-context.js";
import type { AdminIo } from "./admin-io.js";
import { orDash, textTable } from "./text-table.js";

type Command<Name extends AdminCommand["name"]> = Extract<AdminCommand, { name: Name }>;

/**
 * `capability grant/revoke`: idempotent (granting a capability the user has, or revoking one they lack,
 * succeeds and says so).
 */
export async function changeCapability(
  ctx: AdminContext,
  command: Command<"capability grant" | "capability revoke">,
  io: AdminIo,
): Promise<number> {
  const user = await ctx.userByEmail(command.email);
  const { capability } = command;
  if (command.name === "capability grant") {
    const granted = await ctx.auth.grant(user.id, capability, Date.now());
    io.out(granted ? `Granted ${capability} to ${user.email}.` : `${user.email} already has ${capability}.`);
  } else {
    const revoked = await ctx.auth.revoke(user.id, capability);
    io.out(
      revoked ? `Revoked ${capability} from ${user.email}.` : `${user.email} does not have ${capability}.`,
    );
  }
  return 0;
}

/** `capability list`: one capability per line, sorted. */
export async function listCapabilities(
  ctx: AdminContext,
  command: Command<"capability list">,
  io: AdminIo,
): Promise<number> {
  const user = await ctx.userByEmail(command.email);
  const capabilities = [...(await ctx.auth.capabilitiesOf(user.id))].sort();
  if (command.json) io.out(JSON.stringify(capabilities, null, 2));
  else if (capabilities.length === 0) io.out(`${user.email} has no capabilities.`);
  else for (const capability of capabilities) io.out(capability);
  return 0;
}

/** `app-password create`: the only time the secret is ever shown. */
export async function createAppPassword(
  ctx: AdminContext,
  command: Command<"app-password create">,
  io: AdminIo,
): Promise<number> {
  const user = await ctx.userByEmail(command.email);
  const existing = await ctx.auth.applicationPasswordsOf(user.id);
  if (existing.some((info) => info.name === command.appName)) {
    throw new ConflictError(`${user.email} already has an application password named "${command.appName}"`);
  }
  const { secret, display } = newApplicationPassword();
  const createdAtMs = Date.now();
  const uuid = await ctx.auth.addApplicationPassword(user.id, command.appName, secret, createdAtMs);
  if (command.json) {
    const created = isoWithOffset(createdAtMs);
    io.out(JSON.stringify({ uuid, name: command.appName, password: display, created }, null, 2));
    return 0;
  }
  io.out(`Created application password "${command.appName}" for ${user.email}.`);
  io.out(`uuid:     ${uuid}`);
  io.out(`password: ${display}`);
  io.out("Copy the password now: it cannot be shown again.");
  return 0;
}

/** `app-password list`: everything but the secret, which is not stored. */
export async function listAppPasswords(
  ctx: AdminContext,
  command: Command<"app-password list">,
  io: AdminIo,
): Promise<number> {
  const user = await ctx.userByEmail(command.email);
  const passwords = await ctx.auth.applicationPasswordsOf(user.id);
  if (command.json) io.out(JSON.stringify(passwords.map(appPasswordJson), null, 2));
  else if (passwords.length === 0) io.out(`${user.email} has no application passwords.`);
  else {
    const rows = passwords.map((p) => {
      const json = appPasswordJson(p);
      return [json.uuid, json.name, json.created, orDash(json.last_used), orDash(json.last_ip)];
    });
    for (const line of textTable(["uuid", "name", "created", "last used", "last ip"], rows)) io.out(line);
  }
  return 0;
}

/** `app-password revoke`: by uuid, or every one with that name; naming none is an error. */
export async function revokeAppPassword(
  ctx: AdminContext,
  command: Command<"app-password revoke">,
  io: AdminIo,
): Promise<number> {
  const user = await ctx.userByEmail(command.email);
  const { uuidOrName } = command;
  const matching = (await ctx.auth.applicationPasswordsOf(user.id)).filter(
    (info) => info.uuid === uuidOrName || info.name === uuidOrName,
  );
  if (matching.length === 0) {
    throw new NotFoundError(`${user.email} has no application password with uuid or name "${uuidOrName}"`);
  }
  await ctx.auth.revokeApplicationPassword(user.id, uuidOrName);
  for (const info of matching) {
    io.out(`Revoked application password "${info.name}" (${info.uuid}) of ${user.email}.`);
  }
  return 0;
}

/** An application password as `--json` shows it (the names WordPress's REST API uses). */
function appPasswordJson(info: ApplicationPasswordInfo) {
  return {
    uuid: info.uuid,
    name: info.name,
    created: isoWithOffset(info.createdAtMs),
    last_used: info.lastUsedAtMs === null ? null : isoWithOffset(info.lastUsedAtMs),
    last_ip: info.lastIp,
  };
}
