// Every runnable command of the documentation (README.md and docs/*.md) runs, top to bottom per page, against
// daemons started the way the page starts them, and prints what the page shows (docs/development.md, "Every
// example is a test"). Blocks that cannot run here are checked by test/unit/docs-examples.test.ts.
import t from "tap";
import { shellExamples } from "../helpers/docs-blocks.js";
import { docsPages } from "../helpers/docs-pages.js";
import { runDocsPage } from "../helpers/docs-runner.js";
import { requireBinaries } from "../helpers/redis-servers.js";

// Pages run one after another (each with daemons of its own), some waiting for an hour's window to have room.
t.setTimeout(30 * 60_000);

const only = process.env.DOCS_PAGE;
if (requireBinaries(t, ["redis-server", "memcached", "curl"])) {
  for (const page of docsPages()) {
    if (only !== undefined && page.name !== only) continue;
    const examples = shellExamples(page.name, page.source);
    const run = examples.filter((example) => example.kind !== "not-runnable");
    if (run.length === 0) continue;
    t.test(`${page.name}: ${run.length} runnable blocks`, (t) => runDocsPage(t, page.name, examples));
  }
}
