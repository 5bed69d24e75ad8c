import { useLiveState } from "./live-stream";
import { ExplainPage } from "./pages/explain-page";
import { MigrationsPage } from "./pages/migrations-page";
import { OverviewPage } from "./pages/overview-page";
import { RulesPage } from "./pages/rules-page";
import { UsersPage } from "./pages/users-page";
import { Link, type PageName, ROUTES, useCurrentPage } from "./router";

const NAV: { page: PageName; label: string }[] = [
  { page: "overview", label: "Overview" },
  { page: "rules", label: "Rules" },
  { page: "explain", label: "Explain" },
  { page: "users", label: "Users" },
  { page: "migrations", label: "Migrations" },
];

const PAGES = {
  overview: OverviewPage,
  rules: RulesPage,
  explain: ExplainPage,
  users: UsersPage,
  migrations: MigrationsPage,
} as const;

/** The console: a side navigation, the live stream's state, and the current page. */
export function App() {
  const page = useCurrentPage();
  const live = useLiveState();
  const Page = PAGES[page];
  return (
    <div class="shell">
      <nav class="nav">
        <div class="brand">
          ratelimitd <span class="brand-sub">console</span>
        </div>
        {NAV.map((item) => (
          <Link
            key={item.page}
            href={ROUTES[item.page]}
            testId={`nav-${item.page}`}
            class={item.page === page ? "nav-link active" : "nav-link"}
          >
            {item.label}
          </Link>
        ))}
        <div class={live.open ? "live live-open" : "live live-closed"}>
          <span class="live-dot" />
          <span data-testid="live-status">{live.open ? "live" : "reconnecting"}</span>
        </div>
      </nav>
      <main class="main">
        <Page />
      </main>
    </div>
  );
}
