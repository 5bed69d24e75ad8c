import { readFileSync } from "node:fs";
import { SettingsError } from "../errors.js";
import {
  DEFAULT_PROMETHEUS_MAPPING,
  RESPONSE_TIME_SCALE_LINE,
} from "../observability/default-prometheus-mapping.js";
import { PrometheusMapping } from "../observability/prometheus-mapping.js";
import type { Settings } from "../settings/load-settings.js";

/**
 * The statsd_exporter mapping: PROMETHEUS_MAPPER_YAML's file, or the reference's built-in one (without its
 * `scale` line when PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS, as the reference edits it).
 */
export function prometheusMapping(settings: Settings): PrometheusMapping {
  const file = settings.prometheusMapperYaml;
  let text = settings.prometheusResponseTimeAsMilliseconds
    ? DEFAULT_PROMETHEUS_MAPPING.replace(RESPONSE_TIME_SCALE_LINE, "")
    : DEFAULT_PROMETHEUS_MAPPING;
  if (file !== "") {
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new SettingsError([`PROMETHEUS_MAPPER_YAML=${file}: ${(error as Error).message}`]);
    }
  }
  const mapping = PrometheusMapping.parse(text);
  if (!mapping.ok) throw new SettingsError([`PROMETHEUS_MAPPER_YAML=${file}: ${mapping.reason}`]);
  return mapping.value;
}
