import { useCallback, useEffect, useState } from "preact/hooks";
import type { User } from "../../console/console-contract";
import { callApi, messageOf } from "../api-client";
import { SignedIn } from "../sign-in";

const PAGE_SIZE = 50;

/** The users API (README "Users API"): a page of users, a create form, delete with a confirm. */
export function UsersPage() {
  return (
    <section data-testid="page-users" class="page">
      <h1>Users</h1>
      <SignedIn>
        <UsersPanel />
      </SignedIn>
    </section>
  );
}

function UsersPanel() {
  const [offset, setOffset] = useState(0);
  const [users, setUsers] = useState<User[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);

  const load = useCallback(async () => {
    try {
      setUsers(
        await callApi<User[]>(`/console/api/users?limit=${PAGE_SIZE}&offset=${offset}`, { signedIn: true }),
      );
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, [offset]);
  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (id: number) => {
    setConfirming(null);
    try {
      await callApi(`/console/api/users/${id}`, { method: "DELETE", signedIn: true });
      setError(null);
      await load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <>
      <CreateUserForm
        onCreated={() => {
          setError(null);
          void load();
        }}
        onError={setError}
      />
      {error !== null && (
        <p class="error" data-testid="users-error">
          {error}
        </p>
      )}
      <div class="card">
        <table data-testid="users-table" class="table">
          <thead>
            <tr>
              <th class="num">id</th>
              <th>name</th>
              <th>e-mail</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {users?.map((user) => (
              <tr key={user.id} data-testid="user-row" data-user-id={user.id}>
                <td class="num mono">{user.id}</td>
                <td data-testid="user-name">{user.name}</td>
                <td data-testid="user-email" class="mono">
                  {user.email}
                </td>
                <td class="actions">
                  {confirming === user.id ? (
                    <span class="confirm">
                      Delete {user.email}?{" "}
                      <button
                        type="button"
                        data-testid="confirm-yes"
                        class="danger"
                        onClick={() => remove(user.id)}
                      >
                        Delete
                      </button>{" "}
                      <button type="button" data-testid="confirm-no" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <button type="button" data-testid="user-delete" onClick={() => setConfirming(user.id)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {users?.length === 0 && (
              <tr>
                <td colSpan={4} class="muted">
                  No users on this page.
                </td>
              </tr>
            )}
          </tbody>
        </table>
        <div class="pager">
          <button
            type="button"
            data-testid="users-prev"
            disabled={offset === 0}
            onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
          >
            ← Previous
          </button>
          <span class="muted">
            {users !== null && users.length > 0
              ? `${offset + 1}–${offset + users.length}`
              : `from ${offset + 1}`}
          </span>
          <button
            type="button"
            data-testid="users-next"
            disabled={users === null || users.length < PAGE_SIZE}
            onClick={() => setOffset(offset + PAGE_SIZE)}
          >
            Next →
          </button>
        </div>
      </div>
    </>
  );
}

function CreateUserForm(props: { onCreated: () => void; onError: (message: string) => void }) {
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await callApi<User>("/console/api/users", {
        method: "PUT",
        signedIn: true,
        body: { name, email, password },
      });
      setName("");
      setEmail("");
      setPassword("");
      props.onCreated();
    } catch (caught) {
      props.onError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card form inline-form" noValidate onSubmit={submit}>
      <h2>New user</h2>
      <label>
        name
        <input
          data-testid="user-create-name"
          autocomplete="off"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <label>
        e-mail
        <input
          data-testid="user-create-email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </label>
      <label>
        password
        <input
          data-testid="user-create-password"
          type="password"
          autocomplete="new-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      <button data-testid="user-create-submit" type="submit" class="primary" disabled={busy}>
        Create
      </button>
    </form>
  );
}
