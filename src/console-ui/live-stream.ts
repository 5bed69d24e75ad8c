import { useEffect, useState } from "preact/hooks";
import type { LiveEvents, TrafficTick } from "../console/console-contract";

/** Ticks kept for the chart: ten minutes at one a second, as the server's `hello` history. */
const MAX_TICKS = 600;
/** After the stream was refused: as the daemon's `Retry-After`. */
const RETRY_AFTER_MS = 5000;

/** What the live stream knows: the connection, the recent ticks, and how many rule reloads it saw. */
export interface LiveState {
  open: boolean;
  ticks: TrafficTick[];
  latest: TrafficTick | null;
  reloads: number;
}

type TickListener = (tick: TrafficTick) => void;

let state: LiveState = { open: false, ticks: [], latest: null, reloads: 0 };
const stateListeners = new Set<() => void>();
const tickListeners = new Set<TickListener>();
let source: EventSource | null = null;

function update(next: Partial<LiveState>): void {
  state = { ...state, ...next };
  for (const listener of stateListeners) listener();
}

/**
 * Opens `/console/api/events` once for the whole app. `hello` brings the history, `tick` one second of
 * traffic, `rules` a reload (pages re-fetch on `reloads` changing); EventSource reconnects by itself.
 */
export function startLiveStream(): void {
  if (source !== null) return;
  const opened = new EventSource("/console/api/events");
  source = opened;
  opened.onopen = () => update({ open: true });
  opened.onerror = () => {
    update({ open: opened.readyState === EventSource.OPEN });
    // EventSource gives up for good after an answer other than a stream (the daemon's 503 when too many
    // pages follow it, a proxy's 502 during a restart): start again a little later.
    if (opened.readyState === EventSource.CLOSED && source === opened) {
      source = null;
      setTimeout(startLiveStream, RETRY_AFTER_MS);
    }
  };
  opened.addEventListener("hello", (event) => {
    const hello = JSON.parse((event as MessageEvent<string>).data) as LiveEvents["hello"];
    const ticks = hello.history.slice(-MAX_TICKS);
    // A (re)connection may follow a restart or a reload it did not see: pages fetch what they show again.
    update({ open: true, ticks, latest: ticks.at(-1) ?? null, reloads: state.reloads + 1 });
  });
  opened.addEventListener("tick", (event) => {
    const tick = JSON.parse((event as MessageEvent<string>).data) as LiveEvents["tick"];
    const ticks = state.ticks.length >= MAX_TICKS ? state.ticks.slice(1) : state.ticks.slice();
    ticks.push(tick);
    update({ open: true, ticks, latest: tick });
    for (const listener of tickListeners) listener(tick);
  });
  opened.addEventListener("rules", () => update({ reloads: state.reloads + 1 }));
}

/** The live state, re-rendering the caller on every change. */
export function useLiveState(): LiveState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    const listener = () => setCurrent(state);
    stateListeners.add(listener);
    setCurrent(state);
    return () => {
      stateListeners.delete(listener);
    };
  }, []);
  return current;
}

/** Calls `listener` with each tick as it arrives (not the history). */
export function useTicks(listener: TickListener): void {
  useEffect(() => {
    tickListeners.add(listener);
    return () => {
      tickListeners.delete(listener);
    };
  }, [listener]);
}
