import { useState } from "preact/hooks";
import type { ExplanationJson } from "../../console/console-contract";
import { callApi, messageOf } from "../api-client";
import { parseDescriptors } from "../descriptor-text";
import { ExplainResult } from "../explain-tree";

/** Which rule would decide a request, and why: POST /explain, counting nothing. */
export function ExplainPage() {
  const [domain, setDomain] = useState("rl");
  const [text, setText] = useState("");
  const [hits, setHits] = useState("1");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<ExplanationJson | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const parsed = parseDescriptors(text);
    if (!parsed.ok) {
      setError(parsed.error);
      setAnswer(null);
      return;
    }
    const hitsAddend = Number(hits);
    if (!Number.isInteger(hitsAddend) || hitsAddend < 0) {
      setError("Hits must be a whole number, 0 or more.");
      setAnswer(null);
      return;
    }
    setBusy(true);
    try {
      const body = { domain, descriptors: parsed.descriptors.map((entries) => ({ entries })), hitsAddend };
      setAnswer(await callApi<ExplanationJson>("/explain", { method: "POST", body }));
      setError(null);
    } catch (caught) {
      setError(messageOf(caught));
      setAnswer(null);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section data-testid="page-explain" class="page">
      <h1>Explain a decision</h1>
      <p class="muted">
        What a request would get now, and which rule decides it. Nothing is counted: counters are only read.
      </p>
      <form class="card form explain-form" noValidate onSubmit={submit}>
        <label>
          domain
          <input
            data-testid="explain-domain"
            class="mono"
            value={domain}
            required
            onInput={(event) => setDomain(event.currentTarget.value)}
          />
        </label>
        <label class="wide">
          descriptors, one per line
          <textarea
            data-testid="explain-descriptors"
            class="mono"
            rows={4}
            placeholder={"header_match=api, user_id=u42\nremote_address=10.0.0.1"}
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </label>
        <label>
          hits
          <input
            data-testid="explain-hits"
            class="hits-input"
            type="number"
            min={0}
            value={hits}
            onInput={(event) => setHits(event.currentTarget.value)}
          />
        </label>
        <button data-testid="explain-submit" type="submit" class="primary" disabled={busy}>
          {busy ? "Explaining…" : "Explain"}
        </button>
      </form>
      {error !== null && (
        <p class="error" data-testid="explain-error">
          {error}
        </p>
      )}
      {answer !== null && <ExplainResult answer={answer} />}
    </section>
  );
}
