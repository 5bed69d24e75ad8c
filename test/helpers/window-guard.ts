/**
 * Waits, if needed, so that the next `marginSeconds` stay inside one window of `unitSeconds`: end-to-end
 * tests against a real clock must not straddle a window boundary. (Unit tests inject the clock instead.)
 */
export async function stayInsideWindow(unitSeconds: number, marginSeconds = 3): Promise<void> {
  const nowMs = Date.now();
  const msLeft = unitSeconds * 1000 - (nowMs % (unitSeconds * 1000));
  if (msLeft < marginSeconds * 1000) await new Promise((resolve) => setTimeout(resolve, msLeft + 50));
}
