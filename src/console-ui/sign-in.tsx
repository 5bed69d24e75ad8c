import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { callApi, messageOf } from "./api-client";
import { basicToken, emailOf, signIn, signOut, takeEndReason, useSession } from "./session";

/**
 * Shows `children` when signed in (with who and a sign-out button), the sign-in form otherwise. Signing in
 * checks the e-mail address and application password with POST /console/api/session.
 */
export function SignedIn({ children }: { children: ComponentChildren }) {
  const token = useSession();
  if (token === null) return <SignInForm />;
  return (
    <>
      <div class="signed-in">
        signed in as <strong data-testid="signed-in-as">{emailOf(token)}</strong>
        <button type="button" data-testid="signout" class="link" onClick={() => signOut()}>
          Sign out
        </button>
      </div>
      {children}
    </>
  );
}

function SignInForm() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(takeEndReason);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const token = basicToken(email.trim(), password);
    try {
      await callApi("/console/api/session", { method: "POST", token });
      signIn(token);
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  };
  return (
    <form data-testid="signin-form" class="card form signin" noValidate onSubmit={submit}>
      <h2>Sign in</h2>
      <p class="muted" data-testid="signin-help">
        Sign in with an e-mail address and an <em>application password</em> of a user holding manage_options —
        not the password the account was created with. Application passwords come from{" "}
        <code>ADMIN_EMAIL</code> and <code>ADMIN_APP_PASSWORD</code> at start-up, or from{" "}
        <code>ratelimitd-admin app-password create &lt;e-mail&gt; &lt;name&gt;</code>.
      </p>
      <label>
        e-mail address
        <input
          data-testid="signin-email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
      </label>
      <label>
        application password
        <input
          data-testid="signin-password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
      </label>
      <button data-testid="signin-submit" type="submit" class="primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {error !== null && (
        <p class="error" data-testid="signin-error">
          {error}
        </p>
      )}
    </form>
  );
}
