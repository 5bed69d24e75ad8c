import { DogStatsdSink } from "../observability/dogstatsd-sink.js";
import type { Logger } from "../observability/logger.js";
import type { StatsSink } from "../observability/stats-sink.js";
import { StatsdSink } from "../observability/statsd-sink.js";
import type { Settings } from "../settings/load-settings.js";

/** Where the stats flusher sends: DogStatsD, plain statsd or nothing (DISABLE_STATS, or neither enabled). */
export function statsSinks(settings: Settings, logger: Logger): StatsSink[] {
  if (settings.disableStats) return [];
  if (settings.useDogStatsd) {
    // DogStatsD replaces plain statsd: both would send to STATSD_HOST:STATSD_PORT and count twice.
    return [
      new DogStatsdSink({
        host: settings.statsdHost,
        port: settings.statsdPort,
        extraTags: settings.extraTags,
        mogrifiers: settings.dogStatsdMogrifiers,
        logger,
      }),
    ];
  }
  if (settings.useStatsd) {
    return [
      new StatsdSink({
        host: settings.statsdHost,
        port: settings.statsdPort,
        protocol: settings.statsdProtocol,
        extraTags: settings.extraTags,
        logger,
      }),
    ];
  }
  return [];
}
