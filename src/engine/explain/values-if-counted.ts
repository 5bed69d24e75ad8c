import { type CounterOperation, unknownOperation } from "../algorithms/counter-operation.js";
import { TOKEN_TOLERANCE } from "../algorithms/gcra-step.js";
import { reservationIfCounted } from "../algorithms/reservation.js";

/**
 * What a store's `increment` of `operations` would answer, from what its `read` of them answered
 * (`current`, the same flat layout): a fixed window's count plus the hits, a sliding window's the same with
 * the previous window's count, a token bucket's GCRA test on the debt read. Operations on one key see each
 * other's hits in order, as the store's increments do. For `POST /explain`, which counts nothing.
 */
export function valuesIfCounted(
  operations: readonly CounterOperation[],
  current: ArrayLike<number>,
): number[] {
  const values: number[] = [];
  const added = new Map<string, number>();
  let offset = 0;
  for (const operation of operations) {
    const before = (added.get(operation.key) ?? 0) + current[offset]!;
    switch (operation.kind) {
      case "bucket": {
        const interval = operation.emissionIntervalUs;
        const debtUs = (added.get(operation.key) ?? 0) + current[offset + 1]!;
        const debtAfterUs = debtUs + operation.hits * interval;
        const allowed = debtAfterUs <= operation.burst * interval + interval * TOKEN_TOLERANCE;
        if (allowed) added.set(operation.key, debtAfterUs - current[offset + 1]!);
        values.push(allowed ? 1 : 0, allowed ? debtAfterUs : debtUs);
        offset += 2;
        break;
      }
      case "sliding":
        added.set(operation.key, before - current[offset]! + operation.hits);
        values.push(before + operation.hits, current[offset + 1]!);
        offset += 2;
        break;
      case "reserve":
        // Its own record, which no other operation of a request shares.
        values.push(...reservationIfCounted(operation, current, offset));
        offset += 6;
        break;
      case undefined:
      case "fixed":
        added.set(operation.key, before - current[offset]! + operation.hits);
        values.push(before + operation.hits);
        offset += 1;
        break;
      default:
        unknownOperation(operation);
    }
  }
  return values;
}
