import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/** The console's pages; the server answers every one with the same HTML shell. */
export const ROUTES = {
  overview: "/console",
  rules: "/console/rules",
  explain: "/console/explain",
  users: "/console/users",
  migrations: "/console/migrations",
} as const;

export type PageName = keyof typeof ROUTES;

const listeners = new Set<() => void>();

/** The page a path shows; unknown paths under /console show the overview. */
export function pageOf(path: string): PageName {
  const trimmed = path.replace(/\/+$/, "") || "/";
  for (const [name, route] of Object.entries(ROUTES)) if (route === trimmed) return name as PageName;
  return "overview";
}

export function navigate(path: string): void {
  if (path === location.pathname) return;
  history.pushState(null, "", path);
  for (const listener of listeners) listener();
}

/** The current page, following links and the back button. */
export function useCurrentPage(): PageName {
  const [page, setPage] = useState(() => pageOf(location.pathname));
  useEffect(() => {
    const update = () => setPage(pageOf(location.pathname));
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return page;
}

interface LinkProps {
  href: string;
  class?: string;
  testId?: string;
  children: ComponentChildren;
}

/** A link that changes page without reloading (a modified click still opens a new tab). */
export function Link({ href, class: className, testId, children }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} class={className} data-testid={testId} onClick={onClick}>
      {children}
    </a>
  );
}
