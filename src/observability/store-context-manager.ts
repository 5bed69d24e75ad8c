import { AsyncLocalStorage } from "node:async_hooks";
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

/**
 * An OpenTelemetry context manager on an AsyncLocalStorage that ratelimitd owns, so that a
 * diagnostics_channel can bind a call's context with `bindStore` (OpenTelemetry's own manager keeps its
 * storage private). Contexts follow promises and callbacks like the SDK's AsyncLocalStorage manager.
 */
export class StoreContextManager implements ContextManager {
  /** The storage holding the active context; give it to `channel.bindStore`. */
  readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const manager = this;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
