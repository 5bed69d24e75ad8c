// Per-request events for tracing (zero cost when disabled): the decision and backend events are
// published around direct and promised answers and failures, only while someone listens; the request text
// is the reference's `request string` attribute.
import type { ChannelListener } from "node:diagnostics_channel";
import t from "tap";
import type { CounterIncrement, CounterStore } from "../../../src/engine/counter-store.js";
import { InstrumentedCounterStore } from "../../../src/observability/instrumented-counter-store.js";
import {
  type BackendCallEvent,
  backendEnd,
  backendStart,
  decisionEnd,
  decisionStart,
  traceDecision,
} from "../../../src/observability/request-channels.js";
import { requestText } from "../../../src/observability/request-text.js";

/** Records `start:<what>` / `end:<what>[:error]` while subscribed; returns the log and an unsubscribe. */
function record(start: typeof decisionStart, end: typeof decisionEnd, what: (event: never) => string) {
  const log: string[] = [];
  const onStart: ChannelListener = (message) => log.push(`start:${what(message as never)}`);
  const onEnd: ChannelListener = (message) => {
    const event = message as { error?: unknown };
    log.push(`end:${what(message as never)}${event.error === undefined ? "" : `:${String(event.error)}`}`);
  };
  start.subscribe(onStart);
  end.subscribe(onEnd);
  return {
    log,
    stop: () => {
      start.unsubscribe(onStart);
      end.unsubscribe(onEnd);
    },
  };
}

const request = { domain: "d", descriptors: [], hitsAddend: 0 };

t.test("traceDecision: around direct answers, promises and failures", async (t) => {
  const events = record(decisionStart, decisionEnd, (e: { request: { domain: string } }) => e.request.domain);
  t.teardown(events.stop);
  t.equal(
    traceDecision(request, () => 1),
    1,
  );
  t.equal(await traceDecision(request, () => Promise.resolve(2)), 2);
  t.throws(() =>
    traceDecision(request, () => {
      throw new Error("refused");
    }),
  );
  await t.rejects(traceDecision(request, () => Promise.reject(new Error("down"))));
  t.strictSame(events.log, [
    "start:d",
    "end:d",
    "start:d",
    "end:d",
    "start:d",
    "end:d:Error: refused",
    "start:d",
    "end:d:Error: down",
  ]);
});

t.test("the instrumented store publishes increments only while someone listens", async (t) => {
  const increments: CounterIncrement[] = [{ key: "d_k_v_0", hits: 1, ttlSeconds: 60, perSecond: false }];
  const store = {
    name: "memory",
    increment: (list: readonly CounterIncrement[]) => list.map(() => 7),
  } as unknown as CounterStore;
  const instrumented = new InstrumentedCounterStore(store);
  t.equal(backendStart.hasSubscribers, false, "nobody listens by default");
  t.strictSame(instrumented.increment(increments), [7]);
  const events = record(
    backendStart,
    backendEnd,
    (e: BackendCallEvent) => `${e.store}:${e.increments.length}`,
  );
  t.teardown(events.stop);
  t.strictSame(instrumented.increment(increments), [7]);
  t.strictSame(events.log, ["start:memory:1", "end:memory:1"], "one call published, the earlier one not");
});

t.test("requestText: Go's protobuf text of a RateLimitRequest", async (t) => {
  t.equal(
    requestText({
      domain: "envoy",
      descriptors: [
        { entries: [{ key: "remote_address", value: "10.0.0.1" }] },
        {
          entries: [
            { key: "path", value: 'a"b' },
            { key: "method", value: "GET" },
          ],
          limit: { requestsPerUnit: 5, unit: 2 },
          hitsAddend: 0n,
        },
        { entries: [{ key: "k", value: "v" }], hitsAddend: 3n },
      ],
      hitsAddend: 2,
    }),
    'domain:"envoy" descriptors:{entries:{key:"remote_address" value:"10.0.0.1"}} ' +
      'descriptors:{entries:{key:"path" value:"a\\"b"} entries:{key:"method" value:"GET"} ' +
      "limit:{requests_per_unit:5 unit:MINUTE} hits_addend:{}} " +
      'descriptors:{entries:{key:"k" value:"v"} hits_addend:{value:3}} hits_addend:2',
  );
  t.equal(requestText({ domain: "", descriptors: [], hitsAddend: 0 }), "", "zero values are omitted");
});
