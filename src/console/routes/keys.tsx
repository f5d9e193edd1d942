import { ApiKeyCreateRequest } from "../../control-plane/api-keys/schema.js";
import { createApiKey, listApiKeys, revokeApiKey } from "../../control-plane/api-keys/service.js";
import { ActionButton, Csrf, Layout, type PageContext, Secret, TableHead, When } from "../views/layout.js";
import {
  accountOf,
  type ConsoleContext,
  createConsoleRouter,
  formOf,
  pageOf,
  parse,
  redirectTo,
  unconfirmed,
} from "./support.js";

/** Account settings → API keys: create (shown once), list, revoke. */
const router = createConsoleRouter();
const PATH = "/settings/api-keys";

function KeysPage(props: { c: ConsoleContext; page: PageContext; created?: { key: string; name: string } }) {
  const { c, page, created } = props;
  const keys = listApiKeys(c.var.ctx, accountOf(c));
  return (
    <Layout title="API keys" page={page}>
      <h1>API keys</h1>
      {created && (
        <section class="notice" aria-labelledby="new-key">
          <h2 id="new-key">Key “{created.name}” created</h2>
          <Secret id="created-key" value={created.key} label="The new API key" />
          <p class="warning">Copy it now: it will not be shown again.</p>
        </section>
      )}
      <form method="post" action={`/app${PATH}`}>
        <Csrf token={page.csrf} />
        <fieldset>
          <legend>Generate a new key</legend>
          <label>
            Key name
            <input name="key_name" required maxlength={64} autocomplete="off" />
          </label>
          <button type="submit" class="primary">
            Create
          </button>
        </fieldset>
      </form>
      <table>
        <TableHead columns={["Name", "Created", "Last used", "Last used from"]} actions />
        <tbody>
          {keys.map((k) => (
            <tr data-key-id={String(k.id)}>
              <td>{k.name}</td>
              <td>
                <When at={k.created_at} />
              </td>
              <td>
                <When at={k.last_used_at} />
              </td>
              <td>{k.last_used_from_addr || <span class="muted">—</span>}</td>
              <td>
                <ActionButton
                  action={`/app${PATH}/${k.id}/revoke`}
                  label="Revoke"
                  danger
                  csrf={page.csrf}
                  confirm={`Revoke the key “${k.name}”? Every request made with it fails from now on.`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {keys.length === 0 && <p class="muted">No keys yet.</p>}
    </Layout>
  );
}

router.get(PATH, (c) => c.html(<KeysPage c={c} page={pageOf(c)} />));

router.post(PATH, async (c) => {
  const input = parse(ApiKeyCreateRequest, { key_name: (await formOf(c)).key_name ?? "" });
  const created = createApiKey(c.var.ctx, accountOf(c), input.key_name);
  // Rendered here rather than after a redirect: the secret must not travel in a URL.
  return c.html(<KeysPage c={c} page={pageOf(c)} created={{ key: created.key, name: created.name }} />);
});

router.post(`${PATH}/:id/revoke`, async (c) => {
  const form = await formOf(c);
  const raw = c.req.param("id");
  const ask = unconfirmed(c, form, `Revoke API key ${raw}?`, `/app${PATH}`);
  if (ask) return ask;
  // As the API reads key_id: a canonical positive integer, or no key at all.
  const revoked = revokeApiKey(c.var.ctx, accountOf(c), /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : 0);
  return redirectTo(c, `/app${PATH}`, `Key “${revoked.name}” revoked.`);
});

export default router;
