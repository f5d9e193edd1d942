import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConnectionUriQuery } from "../../control-plane/connection/schema.js";
import { getConnectionUri } from "../../control-plane/connection/service.js";
import { getProject } from "../../control-plane/projects/service.js";
import { badRequest, EmulatorError } from "../../errors.js";
import { STATUS_OF } from "../../http/errors.js";
import { clientAddress } from "../../http/middleware.js";
import { Breadcrumb, Csrf, Layout } from "../views/layout.js";
import {
  accountOf,
  type ConsoleContext,
  consoleWords,
  createConsoleRouter,
  formOf,
  pageOf,
  parse,
} from "./support.js";
import { BranchField, DatabaseRoleFields, targetOf } from "./target.js";

/** What the SQL editor needs of SQL over HTTP (front-door/sql-over-http.ts). */
export interface ConsoleSql {
  statement(
    connectionString: string,
    query: string,
    peer?: string,
  ): Promise<{ status: number; body: unknown }>;
}

/** The most rows the editor shows of one result. */
const SHOWN_ROWS = 1000;
/** The longest statement the editor sends (the API's body limit bounds it anyway). */
const MAX_QUERY = 60_000;

type Result =
  | { fields: { name: string }[]; rows: unknown[][]; command: string; rowCount: number | null }
  | { message: string; code?: string; detail?: string; hint?: string; position?: string };

/**
 * The SQL editor: a statement run on a branch's compute (woken if idle) as one of its roles,
 * through the same path as Neon's SQL over HTTP; the result as a table or the Postgres error.
 */
export default function sqlEditor(sql: ConsoleSql | undefined) {
  const router = createConsoleRouter();
  const PATH = "/projects/:projectId/sql";

  const render = (
    c: ConsoleContext,
    query: string,
    result?: Result,
    chosen?: Record<string, string>,
    status: ContentfulStatusCode = 200,
  ) => {
    const projectId = c.req.param("projectId") ?? "";
    const page = pageOf(c);
    const { project } = getProject(c.var.ctx, accountOf(c), projectId);
    const target = targetOf(c, projectId, chosen);
    return c.html(
      <Layout title={`SQL editor · ${project.name}`} page={page}>
        <Breadcrumb project={project} here="SQL editor" />
        <h1>SQL editor</h1>
        {!sql && (
          <p class="error" role="alert">
            Computes are not real processes here (NEON_EMULATOR_COMPUTE=none): there is no database to run SQL
            on.
          </p>
        )}
        {/* The script reloads the page for a branch chosen; its databases and roles are the form's. */}
        <form method="get" action={`/app/projects/${projectId}/sql`} data-autosubmit>
          <BranchField target={target} />
          <button type="submit">Choose branch</button>
        </form>
        <form method="post" action={`/app/projects/${projectId}/sql?branch_id=${target.branch?.id ?? ""}`}>
          <Csrf token={page.csrf} />
          <p class="muted" data-runs-on>
            Runs on branch <strong>{target.branch?.name ?? "—"}</strong>
          </p>
          <DatabaseRoleFields target={target} />
          <label class="wide">
            Statement
            <textarea
              class="sql"
              name="query"
              required
              maxlength={MAX_QUERY}
              spellcheck={false}
              autofocus={result !== undefined}
              aria-describedby="sql-how"
            >
              {query}
            </textarea>
          </label>
          <p class="muted" id="sql-how">
            The statements run in order, in one transaction (as <code>psql -c</code> runs a script: an error
            undoes the ones before it); the last one's result is shown. Ctrl+Enter runs.
          </p>
          <button type="submit" class="primary">
            Run
          </button>
        </form>
        {result && <ResultView result={result} />}
      </Layout>,
      status,
    );
  };

  router.get(PATH, (c) => render(c, "SELECT version();"));

  router.post(PATH, async (c) => {
    const form = await formOf(c);
    const query = form.query ?? "";
    if (!sql) return render(c, query);
    if (query.trim() === "") throw badRequest("the statement is empty");
    if (query.length > MAX_QUERY) throw badRequest(`the statement is longer than ${MAX_QUERY} characters`);
    const projectId = c.req.param("projectId");
    let uri: string;
    try {
      uri = getConnectionUri(
        c.var.ctx,
        accountOf(c),
        projectId,
        parse(ConnectionUriQuery, {
          branch_id: c.req.query("branch_id") || undefined,
          database_name: form.database_name ?? "",
          role_name: form.role_name ?? "",
        }),
      ).uri;
    } catch (err) {
      // Refused before reaching Postgres: shown with the statement kept, as a Postgres error is.
      if (!(err instanceof EmulatorError)) throw err;
      return render(c, query, { message: consoleWords(err.message) }, form, STATUS_OF[err.code]);
    }
    const answer = await sql.statement(uri, query, clientAddress(c) || undefined);
    return render(c, query, answer.body as Result, form);
  });

  return router;
}

function ResultView(props: { result: Result }) {
  const { result } = props;
  if ("message" in result)
    return (
      <section class="error" role="alert" aria-label="Postgres error">
        <strong>ERROR{result.code ? ` ${result.code}` : ""}:</strong> {result.message}
        {result.detail && <div>DETAIL: {result.detail}</div>}
        {result.hint && <div>HINT: {result.hint}</div>}
        {result.position && <div>at character {result.position}</div>}
      </section>
    );
  if (!result.command && result.fields.length === 0)
    return (
      <p class="notice" role="status" data-command>
        Nothing ran: the script holds no statement (only comments or blanks).
      </p>
    );
  const shown = result.rows.slice(0, SHOWN_ROWS);
  return (
    <section aria-label="Result">
      <p class="muted" data-command>
        {result.command} {result.rowCount ?? ""}
        {result.rows.length > SHOWN_ROWS ? ` (first ${SHOWN_ROWS} rows shown)` : ""}
      </p>
      {result.fields.length > 0 && (
        <table data-result>
          <thead>
            <tr>
              {result.fields.map((f) => (
                <th scope="col">{f.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr>
                {row.map((v) => (
                  <td>
                    {v === null ? (
                      <span class="muted">NULL</span>
                    ) : typeof v === "string" ? (
                      v
                    ) : (
                      JSON.stringify(v)
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
