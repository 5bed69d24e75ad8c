const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;

/**
 * Sanitises a stat name as the reference does (stats only, never cache keys): `:` and `|` become `_`, and
 * the dots of anything that looks like an IPv4 address become `_`.
 */
export function sanitizeStatName(name: string): string {
  let out = name;
  if (out.includes(":") || out.includes("|")) out = out.replace(/[:|]/g, "_");
  if (/\d\.\d/.test(out)) out = out.replace(IPV4, (ip) => ip.replaceAll(".", "_"));
  return out;
}
