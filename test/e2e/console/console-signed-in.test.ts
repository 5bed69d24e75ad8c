// The operator console's signed-in pages in a real headless chromium against the built daemon (issue 18):
// state-changing calls without credentials, without the console's header or from a foreign origin are
// refused (from Node and from inside the page); users are created and deleted through the form; a
// migration run from the console reaches 100 % with exactly the log lines it wrote, and the log filter
// narrows them. Screenshots of the users and migrations pages (console-harness.ts says where they go).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import t from "tap";
import { httpRequest } from "../../helpers/http-request.js";
import {
  ADMIN,
  ADMIN_AUTHORIZATION,
  byTestId,
  CONSOLE_HEADER,
  type ConsoleTab,
  callJson,
  eventually,
  launchChromium,
  openTab,
  SLOW_MIGRATION,
  screenshot,
  screenshotDir,
  startConsoleDaemon,
  textBecomes,
  textsOf,
} from "./console-harness.js";

const USERS_AUTH_REQUIRED = {
  error:
    "Authentication required: use HTTP Basic with an application password of a user holding manage_options.",
};
const MIGRATIONS_AUTH_REQUIRED = {
  code: "migrations_unauthorized",
  success: false,
  message: "Authentication required: use HTTP Basic with an application password.",
};
const CROSS_SITE = { error: "Cross-site request refused." };
// A built-in migration (README "Migrations API") for the refused runs: were one let through by mistake, it
// would not disturb the slow test migration's run below.
const REFUSED_RUN = "collapse-user-name-whitespace";
const NEW_USER = { name: "Console Tester", email: "console-tester@example.com", password: "correct horse" };

/** What the slow migration (fixtures/migrations/slow-five.mjs) and the runner log, oldest first. */
const SLOW_LOGS: [type: string, message: string][] = [
  ["info", "Migration scheduled for execution."],
  ...[1, 2, 3, 4, 5].flatMap((batch): [string, string][] => [
    ["info", `slow batch ${batch} of 5 done`],
    ...(batch === 3 ? [["warning", "batch 3 took its time"] as [string, string]] : []),
    ["info", `Batch ${batch} of 5 processed: 1 items.`],
  ]),
  ["info", "Migration completed."],
];

/** The console's session token in a tab's sessionStorage (the contract's key), or null. */
const storedSession = (page: Page) =>
  page.evaluate<string | null>('sessionStorage.getItem("ratelimitd-console-auth")');

/** The rows of the open execution's log, types and messages read in one look at the page. */
const shownLogs = async (page: Page) => {
  const rows = await page
    .locator('[data-testid="migration-logs"] [data-testid="log-row"]')
    .evaluateAll((elements) =>
      elements.map((row) =>
        ["log-type", "log-message"].map(
          (id) => row.querySelector(`[data-testid="${id}"]`)?.textContent?.trim() ?? null,
        ),
      ),
    );
  return { types: rows.map(([type]) => type), messages: rows.map(([, message]) => message) };
};

/** What rolling the slow migration back logs, oldest first. */
const SLOW_ROLLBACK_LOGS: [type: string, message: string][] = [
  ["info", "Rollback scheduled for execution."],
  ...[1, 2, 3, 4, 5].flatMap((batch): [string, string][] => [
    ["info", `slow batch ${batch} undone`],
    ["info", `Batch ${batch} of 5 processed: 1 items.`],
  ]),
  ["info", "Rollback completed."],
];

const browser = await launchChromium(t);
if (browser !== undefined) {
  const { daemon, origin } = await startConsoleDaemon(t);
  const shots = screenshotDir(t);
  const checkedTabs: ConsoleTab[] = [];
  const api = (method: string, path: string, headers: Record<string, string> = {}, body: unknown = {}) =>
    callJson(daemon.debugPort, method, path, { body, headers });

  t.test(
    "state-changing calls from Node: 401 without credentials, 403 without the header or cross-site",
    async (t) => {
      const calls: [string, string, unknown, unknown][] = [
        ["PUT", "/console/api/users", NEW_USER, USERS_AUTH_REQUIRED],
        ["POST", `/console/api/migrations/${REFUSED_RUN}/run`, {}, MIGRATIONS_AUTH_REQUIRED],
      ];
      for (const [method, path, body, unauthorized] of calls) {
        const anonymous = await api(method, path, { ...CONSOLE_HEADER }, body);
        t.equal(anonymous.status, 401, `${method} ${path} without credentials`);
        t.strictSame(anonymous.json, unauthorized);
        t.equal(anonymous.headers["www-authenticate"], undefined, "no WWW-Authenticate");

        const noHeader = await api(method, path, { authorization: ADMIN_AUTHORIZATION }, body);
        t.equal(noHeader.status, 403, `${method} ${path} without X-Ratelimitd-Console`);
        t.strictSame(noHeader.json, CROSS_SITE);

        const foreign = await api(
          method,
          path,
          { authorization: ADMIN_AUTHORIZATION, ...CONSOLE_HEADER, origin: "http://evil.example" },
          body,
        );
        t.equal(foreign.status, 403, `${method} ${path} from Origin http://evil.example`);
        t.strictSame(foreign.json, CROSS_SITE);

        const crossSite = await api(
          method,
          path,
          { authorization: ADMIN_AUTHORIZATION, ...CONSOLE_HEADER, "sec-fetch-site": "cross-site" },
          body,
        );
        t.equal(crossSite.status, 403, `${method} ${path} with Sec-Fetch-Site: cross-site`);
        t.strictSame(crossSite.json, CROSS_SITE);
      }
      // Nothing was done: no user created, no execution of the migration.
      const users = await callJson(daemon.httpPort, "GET", "/users");
      t.strictSame(
        (users.json as { email: string }[]).map((user) => user.email),
        [ADMIN.email],
      );
      const executions = await api("GET", `/console/api/migrations/${REFUSED_RUN}/executions`, {
        authorization: ADMIN_AUTHORIZATION,
      });
      t.equal(executions.status, 200);
      t.strictSame(executions.json, []);
    },
  );

  t.test("state-changing calls from inside the page: the same refusals", async (t) => {
    // This tab's failed fetches are logged by chromium as console errors, on purpose: not checked below.
    const { page, problems } = await openTab(browser);
    // Only the page's origin matters here, not what the UI draws.
    await page.goto(`${origin}/console`);
    const inPage = (path: string, method: string, headers: Record<string, string>, body: unknown) =>
      page.evaluate(
        async ({ path, method, headers, body }) => {
          const reply = await fetch(path, {
            method,
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body),
          });
          return {
            status: reply.status,
            wwwAuthenticate: reply.headers.get("www-authenticate"),
            json: await reply.json(),
          };
        },
        { path, method, headers, body },
      );
    const calls: [string, string, unknown, unknown][] = [
      ["PUT", "/console/api/users", NEW_USER, USERS_AUTH_REQUIRED],
      ["POST", `/console/api/migrations/${REFUSED_RUN}/run`, {}, MIGRATIONS_AUTH_REQUIRED],
    ];
    for (const [method, path, body, unauthorized] of calls) {
      t.strictSame(
        await inPage(path, method, CONSOLE_HEADER, body),
        { status: 401, wwwAuthenticate: null, json: unauthorized },
        `${method} ${path} without Authorization`,
      );
      t.strictSame(
        await inPage(path, method, { authorization: ADMIN_AUTHORIZATION }, body),
        { status: 403, wwwAuthenticate: null, json: CROSS_SITE },
        `${method} ${path} without X-Ratelimitd-Console`,
      );
    }
    const users = await callJson(daemon.httpPort, "GET", "/users");
    t.equal((users.json as unknown[]).length, 1, "still only the administrator");
    // The problem listener hears what the other tests' empty lists claim is absent.
    t.ok(
      problems.some((problem) => /status of 401/.test(problem)),
      "the refused fetches reached the problem list",
    );
    // (Page code as strings: this file is compiled without the DOM's types.)
    await page.evaluate(
      'const script = document.createElement("script"); script.textContent = "window.inlineRan = true"; ' +
        "document.head.append(script);",
    );
    await eventually(
      "a CSP violation reported",
      async () => problems.join("\n"),
      (text) => /CSP violation: script-src/.test(text),
    );
    t.equal(await page.evaluate("typeof window.inlineRan"), "undefined", "the inline script did not run");
    await page.close();
  });

  t.test("a page of another site cannot change anything, even knowing the credentials", async (t) => {
    // Another origin: a server of the test's own on another port, serving an empty page.
    const site = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>another site</title>");
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
    const sitePort = (site.address() as AddressInfo).port;
    // Its failed fetches are console errors, on purpose: this tab is not checked below.
    const { page, problems } = await openTab(browser);
    await page.goto(`http://127.0.0.1:${sitePort}/`);
    const attempt = (path: string, init: Record<string, unknown>) =>
      page.evaluate(
        async ({ url, init }) => {
          try {
            const reply = await fetch(url, init);
            return `answered ${reply.type} ${reply.status}`;
          } catch (error) {
            return `failed: ${String(error)}`;
          }
        },
        { url: `${origin}${path}`, init },
      );
    const withHeaders = {
      headers: { authorization: ADMIN_AUTHORIZATION, ...CONSOLE_HEADER, "content-type": "application/json" },
    };
    // The console's header (and Authorization) need a CORS preflight, which the daemon never approves.
    t.equal(
      await attempt(`/console/api/migrations/${REFUSED_RUN}/run`, {
        method: "POST",
        body: "{}",
        ...withHeaders,
      }),
      "failed: TypeError: Failed to fetch",
    );
    t.equal(
      await attempt("/console/api/users", { method: "PUT", body: JSON.stringify(NEW_USER), ...withHeaders }),
      "failed: TypeError: Failed to fetch",
    );
    // A request no preflight precedes reaches the daemon, which refuses it (no header, a foreign Origin);
    // its answer is not even handed to the page (Cross-Origin-Resource-Policy: same-origin).
    t.equal(
      await attempt(`/console/api/migrations/${REFUSED_RUN}/run`, {
        method: "POST",
        mode: "no-cors",
        headers: { "content-type": "text/plain" },
        body: "{}",
      }),
      "failed: TypeError: Failed to fetch",
    );
    await eventually(
      "chromium blocked the answer",
      async () => problems.join("\n"),
      (text) => /ERR_BLOCKED_BY_RESPONSE\.NotSameOrigin/.test(text),
    );
    const preflight = await httpRequest(daemon.debugPort, "/console/api/users", {
      method: "OPTIONS",
      headers: {
        origin: `http://127.0.0.1:${sitePort}`,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "authorization,content-type,x-ratelimitd-console",
      },
    });
    t.equal(preflight.headers["access-control-allow-origin"], undefined, "the preflight is not approved");
    t.equal(preflight.headers["access-control-allow-headers"], undefined);
    // Nothing was done.
    const users = await callJson(daemon.httpPort, "GET", "/users");
    t.strictSame(
      (users.json as { email: string }[]).map((user) => user.email),
      [ADMIN.email],
    );
    const executions = await api("GET", `/console/api/migrations/${REFUSED_RUN}/executions`, {
      authorization: ADMIN_AUTHORIZATION,
    });
    t.strictSame(executions.json, [], "no execution");
    await page.close();
  });

  t.test("a wrong password shows the server's error in the sign-in form", async (t) => {
    // A failed sign-in is a 401 that chromium logs as a console error: a tab of its own, not checked below.
    const { page } = await openTab(browser);
    await page.goto(`${origin}/console/users`);
    await byTestId(page, "signin-email").fill(ADMIN.email);
    await byTestId(page, "signin-password").fill("not the application password");
    await byTestId(page, "signin-submit").click();
    await textBecomes(byTestId(page, "signin-error"), "Invalid e-mail address or application password.");
    t.equal(await byTestId(page, "signed-in-as").count(), 0, "not signed in");
    t.equal(await storedSession(page), null);
    await page.close();
  });

  // One tab for the signed-in pages: the session lives in this tab's sessionStorage.
  const signedIn = await openTab(browser);
  checkedTabs.push(signedIn);
  const { page } = signedIn;

  t.test("sign in; create a user with the form, see it, delete it, see it gone", async (t) => {
    await page.goto(`${origin}/console/users`);
    await byTestId(page, "signin-form").waitFor({ state: "visible" });
    await byTestId(page, "signin-email").fill(ADMIN.email);
    await byTestId(page, "signin-password").fill(ADMIN.password);
    await byTestId(page, "signin-submit").click();
    await textBecomes(byTestId(page, "signed-in-as"), ADMIN.email);
    await byTestId(page, "users-table").waitFor({ state: "visible" });
    await eventually(
      "the administrator's row",
      () => textsOf(byTestId(page, "user-email")),
      (emails) => emails.includes(ADMIN.email),
    );

    await byTestId(page, "user-create-name").fill(NEW_USER.name);
    await byTestId(page, "user-create-email").fill(NEW_USER.email);
    await byTestId(page, "user-create-password").fill(NEW_USER.password);
    await byTestId(page, "user-create-submit").click();
    const row = byTestId(page, "user-row").filter({
      has: page.locator(`[data-testid="user-email"]:text-is("${NEW_USER.email}")`),
    });
    await eventually(
      "the new user's row",
      () => row.count(),
      (count) => count === 1,
    );
    t.equal((await row.locator('[data-testid="user-name"]').textContent())?.trim(), NEW_USER.name);
    const id = Number(await row.getAttribute("data-user-id"));
    t.ok(Number.isSafeInteger(id) && id > 1, `the new user's id ${id}`);
    const created = await callJson(daemon.httpPort, "GET", `/users/${id}`);
    t.equal(created.status, 200);
    t.strictSame(created.json, { id, name: NEW_USER.name, email: NEW_USER.email });
    t.equal(await byTestId(page, "users-error").count(), 0, "no error shown");
    await screenshot(t, page, shots, "users");

    await row.locator('[data-testid="user-delete"]').click();
    await byTestId(page, "confirm-yes").click();
    await eventually(
      "the row gone",
      () => row.count(),
      (count) => count === 0,
    );
    const gone = await callJson(daemon.httpPort, "GET", `/users/${id}`);
    t.equal(gone.status, 404);
    t.strictSame(gone.json, { error: "User with that id does not exist" });
    t.strictSame(await textsOf(byTestId(page, "user-email")), [ADMIN.email], "only the administrator left");

    // The session is the Basic token in this tab's sessionStorage: a reload keeps it.
    const token = Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString("base64");
    t.equal(await storedSession(page), token);
    await page.reload();
    await textBecomes(byTestId(page, "signed-in-as"), ADMIN.email);
  });

  t.test(
    "a migration run from the console reaches 100 % with its logs, and the type filter narrows them",
    async (t) => {
      await byTestId(page, "nav-migrations").click();
      await byTestId(page, "page-migrations").waitFor({ state: "visible" });
      await textBecomes(byTestId(page, "signed-in-as"), ADMIN.email, 5_000);
      const row = page.locator(`[data-testid="migration-row"][data-migration-id="${SLOW_MIGRATION}"]`);
      await textBecomes(row.locator('[data-testid="migration-status"]'), "pending");
      await textBecomes(row.locator('[data-testid="migration-progress"]'), "—");

      await row.locator('[data-testid="migration-run"]').click();
      const seen: string[] = [];
      const final = await eventually(
        "progress 100 % and status completed",
        async () => {
          const progress = (
            (await row.locator('[data-testid="migration-progress"]').textContent()) ?? ""
          ).trim();
          const status = ((await row.locator('[data-testid="migration-status"]').textContent()) ?? "").trim();
          if (seen.at(-1) !== progress) seen.push(progress);
          return { progress, status };
        },
        (now) => now.progress === "100 %" && now.status === "completed",
        15_000,
      );
      t.strictSame(final, { progress: "100 %", status: "completed" });
      const percents = seen.filter((text) => text !== "—").map((text) => Number(/^(\d+) %$/.exec(text)?.[1]));
      t.ok(
        percents.every((p, i) => Number.isInteger(p) && (i === 0 || p >= percents[i - 1]!)),
        `progress only grows: ${seen.join(" → ")}`,
      );
      t.ok(percents.length >= 2, `progress moved through more than one value: ${seen.join(" → ")}`);

      const executions = (
        await api("GET", `/console/api/migrations/${SLOW_MIGRATION}/executions`, {
          authorization: ADMIN_AUTHORIZATION,
        })
      ).json as { id: number; status: string; items_total: number; items_processed: number }[];
      t.equal(executions.length, 1);
      const execution = executions[0]!;
      t.match(execution, { status: "completed", items_total: 5, items_processed: 5 });

      await row.locator('[data-testid="migration-open"]').click();
      const executionRow = page.locator(`[data-testid="execution-row"][data-execution-id="${execution.id}"]`);
      await textBecomes(executionRow.locator('[data-testid="execution-status"]'), "completed");
      await textBecomes(executionRow.locator('[data-testid="execution-progress"]'), "100 %");
      await executionRow.locator('[data-testid="execution-open"]').click();
      const logs = byTestId(page, "migration-logs");
      await logs.waitFor({ state: "visible" });
      const order = await byTestId(page, "log-order").inputValue();
      t.ok(order === "ASC" || order === "DESC", `log order ${order}`);
      const expected = order === "ASC" ? SLOW_LOGS : [...SLOW_LOGS].reverse();
      // Types and messages in one look at the page: the list may change between two reads.
      const shown = async () => {
        const rows = await logs
          .locator('[data-testid="log-row"]')
          .evaluateAll((elements) =>
            elements.map((row) =>
              ["log-type", "log-message"].map(
                (id) => row.querySelector(`[data-testid="${id}"]`)?.textContent?.trim() ?? null,
              ),
            ),
          );
        return { types: rows.map(([type]) => type), messages: rows.map(([, message]) => message) };
      };
      const all = await eventually("every log line", shown, (now) => now.messages.length === expected.length);
      t.equal(await logs.locator('[data-testid="log-row"]').count(), SLOW_LOGS.length, "13 log rows");
      t.strictSame(all, {
        types: expected.map(([type]) => type),
        messages: expected.map(([, message]) => message),
      });
      await screenshot(t, page, shots, "migrations");

      await byTestId(page, "log-type-filter").selectOption("warning");
      const warnings = await eventually("only warnings", shown, (now) => now.messages.length === 1);
      t.strictSame(warnings, { types: ["warning"], messages: ["batch 3 took its time"] });
      t.equal(await logs.locator('[data-testid="log-row"]').count(), 1, "one log row");
      t.equal(await byTestId(page, "migrations-error").count(), 0, "no error shown");
    },
  );

  t.test("a rollback from the console ends reverted, with its own log; search narrows the log", async (t) => {
    const row = page.locator(`[data-testid="migration-row"][data-migration-id="${SLOW_MIGRATION}"]`);
    // Filters back to all before another execution's log is shown.
    await byTestId(page, "log-type-filter").selectOption("all");
    await row.locator('[data-testid="migration-rollback"]').click();
    await textBecomes(row.locator('[data-testid="migration-status"]'), "reverted", 15_000);
    await textBecomes(row.locator('[data-testid="migration-progress"]'), "100 %");
    const executions = (
      await api("GET", `/console/api/migrations/${SLOW_MIGRATION}/executions`, {
        authorization: ADMIN_AUTHORIZATION,
      })
    ).json as {
      id: number;
      operation: string;
      status: string;
      items_total: number;
      items_processed: number;
    }[];
    t.equal(executions.length, 2);
    const rollback = executions[1]!;
    t.match(rollback, { operation: "down", status: "reverted", items_total: 5, items_processed: 5 });
    const executionRow = page.locator(`[data-testid="execution-row"][data-execution-id="${rollback.id}"]`);
    await textBecomes(executionRow.locator('[data-testid="execution-status"]'), "reverted");
    await executionRow.locator('[data-testid="execution-open"]').click();
    t.equal(await byTestId(page, "log-type-filter").inputValue(), "all");
    const order = await byTestId(page, "log-order").inputValue();
    const expected = order === "ASC" ? SLOW_ROLLBACK_LOGS : [...SLOW_ROLLBACK_LOGS].reverse();
    const all = await eventually(
      "the rollback's log",
      () => shownLogs(page),
      (now) => now.messages.join() === expected.map(([, message]) => message).join(),
    );
    t.strictSame(all, {
      types: expected.map(([type]) => type),
      messages: expected.map(([, message]) => message),
    });
    await byTestId(page, "log-search").fill("undone");
    const undone = await eventually(
      "only undone batches",
      () => shownLogs(page),
      (now) => now.messages.length === 5,
    );
    t.strictSame(
      undone.messages,
      expected.map(([, message]) => message).filter((message) => message.includes("undone")),
    );
    await byTestId(page, "log-order").selectOption(order === "ASC" ? "DESC" : "ASC");
    const reversed = await eventually(
      "the other order",
      () => shownLogs(page),
      (now) => now.messages.join() === [...undone.messages].reverse().join(),
    );
    t.strictSame(reversed.messages, [...undone.messages].reverse(), "log-order reverses the rows");
    await byTestId(page, "log-search").fill("");
    t.equal(await byTestId(page, "migrations-error").count(), 0, "no error shown");
  });

  t.test("the users table pages by 50 with users-next and users-prev", async (t) => {
    // 55 more users through the users API (open by default), ids 3 to 57 (2 was created and deleted above).
    for (let i = 1; i <= 55; i++) {
      const reply = await callJson(daemon.httpPort, "PUT", "/users", {
        body: { name: `Paged ${i}`, email: `paged-${i}@example.com`, password: "pw" },
      });
      t.equal(reply.status, 200, `user ${i} created`);
    }
    await byTestId(page, "nav-users").click();
    await byTestId(page, "users-table").waitFor({ state: "visible" });
    const ids = () =>
      page
        .locator('[data-testid="user-row"]')
        .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-user-id"))));
    const first = await eventually("the first page", ids, (now) => now.length === 50 && now[0] === 1);
    t.strictSame(first, [1, ...Array.from({ length: 49 }, (_, i) => i + 3)], "ids 1, 3…51");
    await byTestId(page, "users-next").click();
    const second = await eventually("the second page", ids, (now) => now[0] !== 1);
    t.strictSame(
      second,
      Array.from({ length: 6 }, (_, i) => i + 52),
      "ids 52…57",
    );
    await byTestId(page, "users-prev").click();
    t.strictSame(await eventually("the first page again", ids, (now) => now[0] === 1), first);
  });

  t.test("sign out forgets the session", async (t) => {
    await byTestId(page, "signout").click();
    await byTestId(page, "signin-form").waitFor({ state: "visible" });
    t.equal(await byTestId(page, "signed-in-as").count(), 0);
    t.equal(await storedSession(page), null);
    await page.reload();
    await byTestId(page, "signin-form").waitFor({ state: "visible" });
    t.pass("still signed out after a reload");
  });

  t.test("the signed-in pages reported no console error, uncaught exception or CSP violation", async (t) => {
    for (const { page, problems } of checkedTabs) t.strictSame(problems, [], page.url());
  });
}
