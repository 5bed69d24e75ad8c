// The operator console in a real headless chromium against the built daemon (issue 18): every page renders
// with the values the API gives and without console errors or CSP violations; `/` redirects browsers only;
// a burst of decisions moves a rule's live counts; the explain form gives the status a real decision gets.
// Screenshots of the overview, the rules and the explain page (console-harness.ts says where they go).
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { httpRequest } from "../../helpers/http-request.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import {
  byTestId,
  type ConsoleTab,
  CSP,
  callJson,
  DOMAIN,
  eventually,
  launchChromium,
  openTab,
  RULE_COUNT,
  screenshot,
  screenshotDir,
  startConsoleDaemon,
  textBecomes,
  watchHighest,
} from "./console-harness.js";

const browser = await launchChromium(t);
if (browser !== undefined) {
  const { daemon, origin, dir } = await startConsoleDaemon(t);
  const shots = screenshotDir(t);
  const tabs: ConsoleTab[] = [];
  const tab = async (path: string) => {
    const opened = await openTab(browser);
    tabs.push(opened);
    const response = await opened.page.goto(`${origin}${path}`);
    return { ...opened, response };
  };
  const decide = (value: string, key = "client") =>
    callJson(daemon.httpPort, "POST", "/json", {
      body: { domain: DOMAIN, descriptors: [{ entries: [{ key, value }] }] },
    });
  // Counts below are exact only inside one day's window (the fixture's limits are per day).
  await stayInsideWindow(86_400, 60);

  t.test("GET / redirects browsers to /console; other clients still get the endpoint listing", async (t) => {
    const browserGet = await httpRequest(daemon.debugPort, "/", {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    t.equal(browserGet.status, 302);
    t.equal(browserGet.headers.location, "/console");
    const clients: Record<string, string>[] = [{}, { accept: "*/*" }, { accept: "text/plain" }];
    for (const headers of clients) {
      const plain = await httpRequest(daemon.debugPort, "/", { headers });
      t.equal(plain.status, 200, `Accept ${JSON.stringify(headers)}`);
      // The reference's listing (test/e2e/debug-port.test.ts has it whole): one `/path: what` per line.
      for (const line of [
        "/debug/pprof/: root of various pprof endpoints. hit for help.",
        "/explain: POST a /json request body: the decision it would get and why, counting nothing",
        "/rlconfig: print out the currently loaded configuration for debugging",
        "/stats: print out stats",
      ]) {
        t.ok(plain.body.split("\n").includes(line), `the listing has ${JSON.stringify(line)}`);
      }
    }
  });

  t.test("the HTML shell: security headers exactly, hashed assets, nothing inline", async (t) => {
    for (const path of [
      "/console",
      "/console/rules",
      "/console/explain",
      "/console/users",
      "/console/migrations",
    ]) {
      const reply = await httpRequest(daemon.debugPort, path, { headers: { accept: "text/html" } });
      t.equal(reply.status, 200, path);
      t.match(reply.headers["content-type"], /^text\/html/, path);
      t.equal(reply.headers["content-security-policy"], CSP, `${path} CSP`);
      t.equal(reply.headers["x-content-type-options"], "nosniff", path);
      t.equal(reply.headers["referrer-policy"], "no-referrer", path);
      t.equal(reply.headers["x-frame-options"], "DENY", path);
      t.equal(reply.headers["cross-origin-opener-policy"], "same-origin", path);
      t.equal(reply.headers["cross-origin-resource-policy"], "same-origin", path);
      t.equal(reply.headers["cache-control"], "no-store", path);
      t.match(reply.body, /<div id="app"><\/div>/, `${path} has the app root`);
      t.notMatch(reply.body, /\sstyle=/i, `${path} has no style attribute`);
      t.notMatch(reply.body, /<style/i, `${path} has no <style>`);
      const scripts = [...reply.body.matchAll(/<script\b([^>]*)>/gi)].map((m) => m[1]!);
      t.equal(scripts.length, 1, `${path} has one script`);
      t.match(scripts[0], /type="module"/, `${path}: a module script`);
      t.match(scripts[0], /src="[^"]*app-[^"/]+\.js"/, `${path}: a hashed script file`);
      const styles = [...reply.body.matchAll(/<link\b[^>]*rel="?stylesheet"?[^>]*>/gi)];
      t.equal(styles.length, 1, `${path} has one stylesheet`);
    }
    const shell = (await httpRequest(daemon.debugPort, "/console")).body;
    const assets = [
      /src="([^"]*app-[^"/]+\.js)"/.exec(shell)?.[1],
      /href="([^"]*app-[^"/]+\.css)"/.exec(shell)?.[1],
    ];
    for (const asset of assets) {
      t.type(asset, "string", "the shell names its hashed assets");
      if (asset === undefined) continue;
      const reply = await httpRequest(daemon.debugPort, new URL(asset, `${origin}/console`).pathname);
      t.equal(reply.status, 200, asset);
      t.equal(reply.headers["cache-control"], "public, max-age=31536000, immutable", asset);
      t.equal(reply.headers["content-security-policy"], CSP, `${asset} CSP`);
      t.ok(reply.body.length > 0, `${asset} is not empty`);
      t.equal(reply.headers["content-encoding"], undefined, `${asset} plain unless asked`);
      const zipped = await fetch(new URL(asset, `${origin}/console`), {
        headers: { "accept-encoding": "gzip" },
      });
      t.equal(zipped.headers.get("content-encoding"), "gzip", `${asset} gzipped when accepted`);
      t.equal(await zipped.text(), reply.body, `${asset} gzipped is the same file`);
    }
  });

  t.test("every page renders its root and the API's values", async (t) => {
    const overview = (await callJson(daemon.debugPort, "GET", "/console/api/overview")).json as {
      store: { type: string; failureMode: string; breaker: string };
      rules: { source: string; rules: number; domains: number; version: string | null };
      health: { healthy: boolean; components: Record<string, boolean> };
      management: { database: string; ready: boolean };
    };
    t.equal(overview.rules.source, "file");
    t.equal(overview.rules.rules, RULE_COUNT);
    t.equal(overview.rules.domains, 1);
    t.equal(overview.store.type, "memory");
    t.equal(overview.health.healthy, true);
    t.ok(
      Object.values(overview.health.components).every((ok) => ok),
      "every component healthy",
    );
    t.match(overview.rules.version, /^[0-9a-f]{12}$/, "files' version: 12 hex digits");
    t.strictSame(overview.management, { database: "sqlite", ready: true });

    const home = await tab("/console");
    t.equal(home.response?.status(), 200);
    t.equal(home.response?.headers()["content-security-policy"], CSP, "the page's CSP");
    const { page } = home;
    await byTestId(page, "page-overview").waitFor({ state: "visible" });
    await textBecomes(byTestId(page, "health-overall"), "healthy");
    await textBecomes(byTestId(page, "store-type"), "memory");
    await textBecomes(byTestId(page, "failure-mode"), overview.store.failureMode);
    await textBecomes(byTestId(page, "breaker-state"), overview.store.breaker);
    await textBecomes(byTestId(page, "rules-source"), "file");
    await textBecomes(byTestId(page, "rules-count"), String(RULE_COUNT));
    await textBecomes(byTestId(page, "database-state"), "ready");
    await textBecomes(byTestId(page, "live-status"), "live");
    t.equal(await byTestId(page, "last-reload-error").count(), 0, "no reload error shown");
    await textBecomes(byTestId(page, "rules-version"), overview.rules.version ?? "");
    const components = await page
      .locator('[data-testid="health-component"]')
      .evaluateAll((elements) =>
        elements.map((element) => [element.getAttribute("data-component"), element.textContent?.trim()]),
      );
    t.strictSame(
      Object.fromEntries(components),
      Object.fromEntries(Object.keys(overview.health.components).map((name) => [name, "ok"])),
      "each component ok",
    );
    t.ok(Object.keys(overview.health.components).includes("backend"), "backend among the components");
    const chart = page.locator('svg[data-testid="traffic-chart"], [data-testid="traffic-chart"] svg');
    t.ok((await chart.count()) > 0, "the traffic chart is an inline svg");

    for (const [path, root] of [
      ["/console/rules", "page-rules"],
      ["/console/explain", "page-explain"],
      ["/console/users", "page-users"],
      ["/console/migrations", "page-migrations"],
    ] as const) {
      const opened = await tab(path);
      t.equal(opened.response?.status(), 200, path);
      t.equal(opened.response?.headers()["content-security-policy"], CSP, `${path} CSP`);
      await byTestId(opened.page, root).waitFor({ state: "visible" });
      t.pass(`${path} shows ${root}`);
    }
    // The navigation links lead to each page without a reload.
    for (const [link, root] of [
      ["nav-rules", "page-rules"],
      ["nav-explain", "page-explain"],
      ["nav-users", "page-users"],
      ["nav-migrations", "page-migrations"],
      ["nav-overview", "page-overview"],
    ] as const) {
      await byTestId(page, link).click();
      await byTestId(page, root).waitFor({ state: "visible" });
      t.pass(`${link} shows ${root}`);
    }
    // Signed out, Users and Migrations offer the sign-in form.
    for (const path of ["/console/users", "/console/migrations"]) {
      const opened = tabs.find((open) => open.page.url() === `${origin}${path}`)!;
      await byTestId(opened.page, "signin-form").waitFor({ state: "visible" });
      t.equal(
        await byTestId(opened.page, "signin-help").textContent(),
        "Sign in with an e-mail address and an application password of a user holding manage_options — not the password the account was created with. Application passwords come from ADMIN_EMAIL and ADMIN_APP_PASSWORD at start-up, or from ratelimitd-admin app-password create <e-mail> <name>.",
        `${path} offers the sign-in form, saying which credential it wants`,
      );
    }
  });

  t.test("a burst of decisions moves the rule's live counts and the overview's traffic", async (t) => {
    const rules = await tab("/console/rules");
    const home = await tab("/console");
    const row = rules.page.locator('[data-testid="rule-row"][data-full-key="console.client_burst"]');
    await textBecomes(row.locator('[data-testid="rule-total-hits"]'), "0");
    await textBecomes(row.locator('[data-testid="rule-total-over"]'), "0");
    await textBecomes(row.locator('[data-testid="rule-limit"]'), "1000 / DAY");
    await textBecomes(row.locator('[data-testid="rule-algorithm"]'), "fixed_window");
    const shadow = rules.page.locator('[data-testid="rule-row"][data-full-key="console.tenant"]');
    await textBecomes(shadow.locator('[data-testid="rule-flag"]'), "shadow");
    await textBecomes(shadow.locator('[data-testid="rule-limit"]'), "60 / MINUTE");
    await textBecomes(byTestId(rules.page, "live-status"), "live");
    await textBecomes(byTestId(home.page, "live-status"), "live");

    // Rates show for one interval (1 s) only: watched from inside the pages.
    const highestRate = await watchHighest(
      rules.page,
      '[data-testid="rule-row"][data-full-key="console.client_burst"] [data-testid="rule-hits-rate"]',
    );
    const highestTraffic = await watchHighest(home.page, '[data-testid="traffic-hits"]');
    t.equal(await highestRate(), 0, "no rate before the burst");
    t.equal(await highestTraffic(), 0, "no traffic before the burst");

    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await decide("burst")).status);
    t.strictSame(statuses, Array(40).fill(200), "40 allowed");

    const seen = await eventually(
      "total hits 40, a hit rate above 0 on the rule and on the overview",
      async () => ({
        total: (await row.locator('[data-testid="rule-total-hits"]').textContent())?.trim(),
        rate: await highestRate(),
        traffic: await highestTraffic(),
      }),
      (seen) => seen.total === "40" && seen.rate > 0 && seen.traffic > 0,
      10_000,
    );
    t.pass(`rule total 40, rule rate up to ${seen.rate}/s, overview traffic up to ${seen.traffic}/s`);
    t.equal(
      await row
        .locator('[data-testid="rule-total-over"]')
        .textContent()
        .then((s) => s?.trim()),
      "0",
    );

    // Over the limit: 5 allowed, 3 refused.
    const limited = rules.page.locator('[data-testid="rule-row"][data-full-key="console.client_limited"]');
    await textBecomes(limited.locator('[data-testid="rule-total-hits"]'), "0");
    const limitedStatuses: number[] = [];
    for (let i = 0; i < 8; i++) limitedStatuses.push((await decide("limited")).status);
    t.strictSame(limitedStatuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    await textBecomes(limited.locator('[data-testid="rule-total-over"]'), "3");
    await textBecomes(limited.locator('[data-testid="rule-total-hits"]'), "8");
    await textBecomes(row.locator('[data-testid="rule-total-hits"]'), "40");

    const api = (await callJson(daemon.debugPort, "GET", "/console/api/rules")).json as {
      domains: {
        domain: string;
        rules: { fullKey: string; totals: { hits: number; over: number } | null }[];
      }[];
    };
    const totals = Object.fromEntries(
      api.domains.flatMap((d) => d.rules).map((rule) => [rule.fullKey, rule.totals]),
    );
    t.match(totals["console.client_burst"], { hits: 40, over: 0 });
    t.match(totals["console.client_limited"], { hits: 8, over: 3 });

    await screenshot(t, rules.page, shots, "rules");
    await screenshot(t, home.page, shots, "overview");
  });

  t.test("the explain form gives the status a real decision gets, OK and over the limit", async (t) => {
    const { page } = await tab("/console/explain");
    await byTestId(page, "page-explain").waitFor({ state: "visible" });
    t.equal(await byTestId(page, "explain-hits").inputValue(), "1", "hits default to 1");
    const explainInPage = async () => {
      await byTestId(page, "explain-domain").fill(DOMAIN);
      await byTestId(page, "explain-descriptors").fill("user=alice");
      await byTestId(page, "explain-submit").click();
    };
    const shown = async () => ({
      overall: (await byTestId(page, "explain-overall").textContent())?.trim(),
      status: (await byTestId(page, "explain-status").first().textContent())?.trim(),
      remaining: (await byTestId(page, "explain-remaining").first().textContent())?.trim(),
      rule: (await byTestId(page, "explain-rule").first().textContent())?.trim(),
      descriptors: await byTestId(page, "explain-descriptor").count(),
    });

    await explainInPage();
    const ok = await eventually("an OK answer", shown, (s) => s.overall === "OK");
    t.strictSame(ok, { overall: "OK", status: "OK", remaining: "2", rule: "console.user", descriptors: 1 });
    const real = await callJson(daemon.httpPort, "POST", "/json", {
      body: { domain: DOMAIN, descriptors: [{ entries: [{ key: "user", value: "alice" }] }] },
    });
    t.equal(real.status, 200);
    const realOk = real.json as {
      overallCode: string;
      statuses: { code: string; limitRemaining?: number }[];
    };
    t.equal(realOk.overallCode, ok.overall);
    t.equal(realOk.statuses[0]?.code, ok.status);
    t.equal(realOk.statuses[0]?.limitRemaining, Number(ok.remaining));

    // Two more use up the 3 a day; the fourth would be refused.
    for (let i = 0; i < 2; i++) t.equal((await decide("alice", "user")).status, 200);
    await explainInPage();
    const over = await eventually("an OVER_LIMIT answer", shown, (s) => s.overall === "OVER_LIMIT");
    t.strictSame(over, {
      overall: "OVER_LIMIT",
      status: "OVER_LIMIT",
      remaining: "0",
      rule: "console.user",
      descriptors: 1,
    });
    await screenshot(t, page, shots, "explain");
    const refused = await decide("alice", "user");
    t.equal(refused.status, 429);
    const realOver = refused.json as {
      overallCode: string;
      statuses: { code: string; limitRemaining?: number }[];
    };
    t.equal(realOver.overallCode, over.overall);
    t.equal(realOver.statuses[0]?.code, over.status);
    // proto3 JSON leaves out a zero limitRemaining.
    t.equal(realOver.statuses[0]?.limitRemaining ?? 0, Number(over.remaining));
  });

  t.test("rule search: text filters rows; a descriptor marks the rule it matches", async (t) => {
    const { page } = await tab("/console/rules");
    const search = byTestId(page, "rule-search");
    const visibleKeys = () =>
      page
        .locator('[data-testid="rule-row"]:visible')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-full-key")));
    const all = ["console.client_burst", "console.client_limited", "console.user", "console.tenant"];
    await eventually("every rule listed", visibleKeys, (keys) => keys.length === all.length);
    t.strictSame(await visibleKeys(), all);
    for (const [text, expected] of [
      ["limited", ["console.client_limited"]],
      ["LIMITED", ["console.client_limited"]],
      ["client", ["console.client_burst", "console.client_limited"]],
      ["console.ten", ["console.tenant"]],
      ["", all],
    ] as const) {
      await search.fill(text);
      const keys = await eventually(
        `rows for ${JSON.stringify(text)}`,
        visibleKeys,
        (keys) => keys.join() === expected.join(),
      );
      t.strictSame(keys, expected, `search ${JSON.stringify(text)}`);
    }
    const matched = () =>
      page
        .locator('[data-testid="rule-row"][data-matched="true"]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-full-key")));
    await search.fill("domain=console; user=bob");
    await textBecomes(byTestId(page, "rule-search-result"), "console.user");
    t.strictSame(await eventually("the matched row", matched, (keys) => keys.length > 0), ["console.user"]);
    await search.fill("domain=console; client=nobody");
    await textBecomes(byTestId(page, "rule-search-result"), "no rule matches");
    t.strictSame(await matched(), [], "no row marked");
    // The search explained, counting nothing: the rule's total is still the explain test's 4 decisions.
    const totals = (await callJson(daemon.debugPort, "GET", "/console/api/rules")).json as {
      domains: { rules: { fullKey: string; totals: { hits: number } | null }[] }[];
    };
    t.match(totals.domains[0]!.rules.find((rule) => rule.fullKey === "console.user")!.totals, { hits: 4 });
    const user = page.locator('[data-testid="rule-row"][data-full-key="console.user"]');
    await textBecomes(user.locator('[data-testid="rule-total-hits"]'), "4");
  });

  t.test(
    "a rule reload shows without reloading the page: a broken file's error, then a new rule",
    async (t) => {
      const home = tabs.find((open) => open.page.url() === `${origin}/console`)!.page;
      const rules = tabs.find((open) => open.page.url() === `${origin}/console/rules`)!.page;
      const lastLoad = async () =>
        (
          (await callJson(daemon.debugPort, "GET", "/console/api/overview")).json as {
            rules: { rules: number; lastLoad: { ok: boolean; error: string | null } | null };
          }
        ).rules;
      const file = join(dir, "config", "zz-extra.yaml");
      t.teardown(() => rmSync(file, { force: true }));
      writeFileSync(file, "domain: extra\ndescriptors:\n  - key: b\n    rate_limit: { unit: fortnight }\n");
      const broken = await eventually("a failed load", lastLoad, (now) => now.lastLoad?.ok === false);
      t.equal(broken.rules, RULE_COUNT, "the rules in force stay");
      t.type(broken.lastLoad?.error, "string");
      // The open page shows the failure by itself (the contract: last-reload-error while lastLoad.ok is
      // false)…
      await textBecomes(byTestId(home, "last-reload-error"), broken.lastLoad!.error!, 5_000).then(
        () => t.pass("the open overview shows the failed load"),
        (error: Error) => t.fail(`the open overview shows the failed load: ${error.message}`),
      );
      // …and so does a page opened now.
      await home.reload();
      await textBecomes(byTestId(home, "last-reload-error"), broken.lastLoad!.error!);
      await textBecomes(byTestId(home, "rules-count"), String(RULE_COUNT));

      writeFileSync(
        file,
        "domain: extra\ndescriptors:\n  - key: b\n    rate_limit: { unit: hour, requests_per_unit: 7 }\n",
      );
      await eventually(
        "a good load",
        lastLoad,
        (now) => now.lastLoad?.ok === true && now.rules === RULE_COUNT + 1,
      );
      await textBecomes(byTestId(home, "rules-count"), String(RULE_COUNT + 1));
      await eventually(
        "the error gone",
        () => byTestId(home, "last-reload-error").count(),
        (n) => n === 0,
      );
      const row = rules.locator('[data-testid="rule-row"][data-full-key="extra.b"]');
      await textBecomes(row.locator('[data-testid="rule-limit"]'), "7 / HOUR");
      await textBecomes(row.locator('[data-testid="rule-total-hits"]'), "0");
      // The older rules keep their totals.
      const burst = rules.locator('[data-testid="rule-row"][data-full-key="console.client_burst"]');
      await textBecomes(burst.locator('[data-testid="rule-total-hits"]'), "40");
    },
  );

  t.test("no page reported a console error, an uncaught exception or a CSP violation", async (t) => {
    for (const { page, problems } of tabs) t.strictSame(problems, [], page.url());
  });

  t.test("live-status reads reconnecting once the daemon is gone", async (t) => {
    const { page } = tabs[0]!;
    await textBecomes(byTestId(page, "live-status"), "live");
    t.equal(await daemon.stop(), 0, "the daemon stopped cleanly");
    await textBecomes(byTestId(page, "live-status"), "reconnecting");
  });
}
