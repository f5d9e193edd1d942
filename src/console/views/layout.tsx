import type { Child } from "hono/jsx";
import { COMPUTE_SIZES } from "../../control-plane/endpoints/rules.js";
import { onceToken } from "../once.js";
import { shownName } from "./labels.js";

/** What every signed-in page knows: the CSRF token its forms carry, and messages to show. */
export interface PageContext {
  csrf: string;
  accountName: string;
  notice?: string | undefined;
  error?: string | undefined;
}

export function Layout(props: { title: string; page?: PageContext; children: Child }) {
  const { page } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Neon emulator`}</title>
        <link rel="icon" href="/app/assets/icon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/app/assets/console.css" />
        <script src="/app/assets/console.js" defer />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/app/projects">
            Neon emulator
          </a>
          {page && (
            <>
              <nav aria-label="Main">
                <a href="/app/projects">Projects</a>
                <a href="/app/settings/api-keys">API keys</a>
                <a href="/app/emulator">Emulator</a>
              </nav>
              <span class="muted">{page.accountName}</span>
              <form method="post" action="/app/sign-out">
                <Csrf token={page.csrf} />
                <button type="submit">Sign out</button>
              </form>
            </>
          )}
        </header>
        <main>
          {page?.notice && (
            <p class="notice" role="status">
              {page.notice}
            </p>
          )}
          {page?.error && (
            <p class="error" role="alert">
              {page.error}
            </p>
          )}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The trail above a page's title: Projects / the project (a link when the page is one of its own) / the page. */
export function Breadcrumb(props: { project?: { id: string; name: string }; here?: string }) {
  const { project, here } = props;
  return (
    <p class="muted">
      <a href="/app/projects">Projects</a>
      {project && (
        <>
          {" / "}
          {here ? (
            <a href={`/app/projects/${project.id}`}>{shownName(project.name, project.id)}</a>
          ) : (
            shownName(project.name, project.id)
          )}
        </>
      )}
      {here && ` / ${here}`}
    </p>
  );
}

/** A form's CSRF token, and its own token that keeps it from being done twice (once.ts). */
export function Csrf(props: { token: string }) {
  return (
    <>
      <input type="hidden" name="_csrf" value={props.token} />
      <input type="hidden" name="_once" value={onceToken()} />
    </>
  );
}

/** A rename form: the name field (filled with the current name) and its button; `confirm` asks first. */
export function RenameForm(props: {
  action: string;
  csrf: string;
  label: string;
  value: string;
  confirm?: string;
}) {
  return (
    <form class="inline" method="post" action={props.action} data-confirm={props.confirm}>
      <Csrf token={props.csrf} />
      <label>
        {props.label}
        <input name="name" value={props.value} required maxlength={256} />
      </label>
      <button type="submit">Rename</button>
    </form>
  );
}

/**
 * What starts a form value formValue encoded (a name that begins so is encoded too): led by a
 * control character, which no one types into a form's text field.
 */
const ENCODED = "\u0001b64:";

/**
 * A name as a form carries it. Browsers change line breaks in what forms carry (an attribute's CR
 * becomes LF as the page is read; every line break is sent as CRLF), so a name holding one (Postgres
 * allows any character but NUL) would come back as another: such a value, and one that begins as an
 * encoded one does, goes as its UTF-8 in base64url after ENCODED. fromFormValue gives it back.
 */
export function formValue(value: string): string {
  return /[\r\n]/.test(value) || value.startsWith(ENCODED)
    ? `${ENCODED}${Buffer.from(value, "utf8").toString("base64url")}`
    : value;
}

/** A value a form sent, as it was before formValue. */
export function fromFormValue(value: string): string {
  return value.startsWith(ENCODED)
    ? Buffer.from(value.slice(ENCODED.length), "base64url").toString("utf8")
    : value;
}

/**
 * A one-button form posting to `action`. With `confirm`, the script asks first; without the
 * script the server answers with a confirmation page (confirmationPage).
 */
export function ActionButton(props: {
  action: string;
  label: string;
  csrf: string;
  confirm?: string;
  danger?: boolean;
  fields?: Record<string, string>;
}) {
  return (
    <form class="inline" method="post" action={props.action} data-confirm={props.confirm}>
      <Csrf token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={formValue(value)} />
      ))}
      <button type="submit" class={props.danger ? "danger" : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** A secret shown once, with a copy button. */
export function Secret(props: { id: string; value: string; label: string }) {
  return (
    <fieldset class="secret">
      <legend class="muted">{props.label}</legend>
      <code id={props.id}>{props.value}</code>
      <button type="button" data-copy={props.id}>
        Copy
      </button>
    </fieldset>
  );
}

/**
 * A connection string shown with its password masked, as Neon's console shows it; the copy button
 * copies the whole string, and "Show password" opens it (no script needed).
 */
export function ConnectionString(props: { id: string; uri: string }) {
  const masked = new URL(props.uri);
  if (masked.password) masked.password = "********";
  return (
    <fieldset class="secret">
      <legend class="muted">Connection string</legend>
      <code>{masked.toString()}</code>
      <button type="button" data-copy={props.id}>
        Copy
      </button>
      <details>
        <summary>Show password</summary>
        <code id={props.id}>{props.uri}</code>
      </details>
    </fieldset>
  );
}

/** A labelled select; `selected` names the chosen option's value. */
export function SelectField(props: {
  label: string;
  name: string;
  options: readonly (string | { value: string; label: string })[];
  selected?: string | undefined;
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        {props.options.map((o) => {
          const { value, label } = typeof o === "string" ? { value: o, label: o } : o;
          return (
            <option value={formValue(value)} selected={value === props.selected}>
              {label}
            </option>
          );
        })}
      </select>
    </label>
  );
}

const COMPUTE_UNITS = COMPUTE_SIZES.map(String);

/** A compute-size field: the sizes the API accepts (the specification's), in compute units. */
export function CuField(props: { label: string; name: string; selected: number }) {
  return (
    <SelectField
      label={props.label}
      name={props.name}
      options={COMPUTE_UNITS}
      selected={COMPUTE_UNITS.find((cu) => Number(cu) === props.selected)}
    />
  );
}

/** A table's header row; `actions` adds the column of buttons. */
export function TableHead(props: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {props.columns.map((name) => (
          <th scope="col">{name}</th>
        ))}
        {props.actions && (
          <th scope="col">
            <span class="muted">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

export function StateTag(props: { label: string }) {
  return <span class={`tag state-${props.label}`}>{props.label}</span>;
}

/** Local date and time, to the minute, in UTC (what the API's timestamps are in). */
export function When(props: { at: string | null | undefined }) {
  if (!props.at) return <span class="muted">—</span>;
  return <time datetime={props.at}>{props.at.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC")}</time>;
}

/** The page asking again before a destructive action, for browsers without the script. */
export function ConfirmPage(props: {
  page: PageContext;
  message: string;
  action: string;
  fields: Record<string, string>;
  back: string;
}) {
  return (
    <Layout title="Confirm" page={props.page}>
      <h1>Are you sure?</h1>
      <p>{props.message}</p>
      <form method="post" action={props.action}>
        <Csrf token={props.page.csrf} />
        {Object.entries(props.fields).map(([name, value]) => (
          <input type="hidden" name={name} value={formValue(value)} />
        ))}
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">
          Yes, continue
        </button>{" "}
        <a href={props.back}>Cancel</a>
      </form>
    </Layout>
  );
}
