import { useEffect, useState } from "preact/hooks";

/** sessionStorage key holding the base64 `email:application-password` token: a reload keeps the session. */
const STORAGE_KEY = "ratelimitd-console-auth";

type Listener = () => void;
const listeners = new Set<Listener>();

/** The signed-in token, or null. */
export function sessionToken(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage can be refused (privacy settings): the console then works without keeping the session.
    return null;
  }
}

/** Why the last session ended, once: the sign-in form shows it. */
export function takeEndReason(): string | null {
  const reason = endedBecause;
  endedBecause = null;
  return reason;
}

export function signIn(token: string): void {
  sessionStorage.setItem(STORAGE_KEY, token);
  for (const listener of listeners) listener();
}

let endedBecause: string | null = null;

/** Ends the session; `reason` (the server's text when it refused the credentials) is shown by the form. */
export function signOut(reason: string | null = null): void {
  endedBecause = reason;
  sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

/** HTTP Basic token of `email:password`, UTF-8 encoded as the server decodes it. */
export function basicToken(email: string, password: string): string {
  const bytes = new TextEncoder().encode(`${email}:${password}`);
  let binary = "";
  bytes.forEach((byte) => {
    binary += String.fromCharCode(byte);
  });
  return btoa(binary);
}

/** The e-mail address inside a token. */
export function emailOf(token: string): string {
  const binary = atob(token);
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  const text = new TextDecoder().decode(bytes);
  return text.slice(0, text.indexOf(":"));
}

/** The current token, re-rendering the caller when someone signs in or out. */
export function useSession(): string | null {
  const [token, setToken] = useState(sessionToken);
  useEffect(() => {
    const listener = () => setToken(sessionToken());
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return token;
}
