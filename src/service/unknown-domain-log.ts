import type { Counter, EngineStats } from "../engine/rule-set.js";
import type { ThrottledLog } from "../observability/throttled-log.js";

/** Options of {@link UnknownDomainLog}. */
export interface UnknownDomainLogOptions {
  /** Where the lines go: at most one a second, the ones between summed up (see {@link ThrottledLog}). */
  readonly log: Pick<ThrottledLog, "warn">;
  /** The domains of the rules in force, read only when a line is written. */
  readonly knownDomains: () => Iterable<string>;
  /** Domains remembered as already said; past it the memory starts over (default 1000). */
  readonly maxDomains?: number;
}

/** Domains named in a line at most; more are counted. */
const DOMAINS_SHOWN = 10;
/** Characters of a request's domain shown at most (a domain may be 8 KiB of a client's text). */
const DOMAIN_CHARS_SHOWN = 100;

/**
 * Says at warn, once per domain, that requests name a domain no loaded rule defines. They are answered OK
 * with no limit, as the reference answers them (which logs nothing: a typo in Envoy's `domain` goes
 * unnoticed); the answer stays, the line is added. A request for a known domain costs nothing here (the
 * engine reports only unknown domains); an unknown one costs a Set lookup once it has been said. Memory
 * stays bounded however many distinct domains clients send: after `maxDomains` the remembered set starts
 * over, and lines are throttled to one a second. A rule reload forgets them all (a domain may have come or
 * gone).
 */
export class UnknownDomainLog {
  readonly #warned = new Set<string>();
  readonly #options: UnknownDomainLogOptions;
  readonly #maxDomains: number;

  constructor(options: UnknownDomainLogOptions) {
    this.#options = options;
    this.#maxDomains = options.maxDomains ?? 1000;
  }

  /** A request named `domain`, which the rules in force do not define. */
  notice(domain: string): void {
    if (this.#warned.has(domain)) return;
    if (this.#warned.size >= this.#maxDomains) this.#warned.clear();
    this.#warned.add(domain);
    this.#options.log.warn("unknown domain", () => unknownDomainLine(domain, this.#options.knownDomains()));
  }

  /** Forgets which domains were said (the rules changed). */
  reset(): void {
    this.#warned.clear();
  }

  /** `stats` as the engine uses them, with every `domain_not_found` also told to {@link notice}. */
  watching(stats: EngineStats): EngineStats {
    return {
      ruleStats: (key: string) => stats.ruleStats(key),
      domainNotFound: (domain: string): Counter => {
        this.notice(domain);
        return stats.domainNotFound(domain);
      },
      globalShadowMode: stats.globalShadowMode,
    };
  }
}

/**
 * `domain "rl2" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains:
 * ai-gateway, api, beyond, rl)`.
 */
export function unknownDomainLine(domain: string, known: Iterable<string>): string {
  const shown =
    domain.length > DOMAIN_CHARS_SHOWN
      ? `${JSON.stringify(`${domain.slice(0, DOMAIN_CHARS_SHOWN)}…`)} (${domain.length} characters)`
      : JSON.stringify(domain);
  const domains = [...known].sort();
  const listed =
    domains.length === 0
      ? "none"
      : domains.length > DOMAINS_SHOWN
        ? `${domains.slice(0, DOMAINS_SHOWN).join(", ")} and ${domains.length - DOMAINS_SHOWN} more`
        : domains.join(", ");
  return `domain ${shown} is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: ${listed})`;
}
