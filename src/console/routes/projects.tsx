import { listBranches } from "../../control-plane/branches/service.js";
import { ConnectionUriQuery } from "../../control-plane/connection/schema.js";
import { getConnectionUri } from "../../control-plane/connection/service.js";
import { listEndpointsJson } from "../../control-plane/endpoints/service.js";
import { listOperations } from "../../control-plane/operations/service.js";
import {
  ProjectCreateRequest,
  ProjectListQuery,
  ProjectUpdateRequest,
} from "../../control-plane/projects/schema.js";
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  recoverProject,
  updateProject,
} from "../../control-plane/projects/service.js";
import { REGIONS } from "../../control-plane/regions/rules.js";
import { parseJsonText } from "../../platform/json-text.js";
import { bytes, cuRange, duration, kindLabel, shownName, stateLabel } from "../views/labels.js";
import {
  ActionButton,
  Breadcrumb,
  ConnectionString,
  Csrf,
  CuField,
  Layout,
  RenameForm,
  SelectField,
  StateTag,
  TableHead,
  When,
} from "../views/layout.js";
import { BranchCreateForm } from "./branches.js";
import { StartedOperations } from "./started.js";
import {
  accountOf,
  type ConsoleContext,
  createConsoleRouter,
  formOf,
  numberField,
  pageOf,
  parse,
  principalOf,
  redirectTo,
  run,
  startedOps,
  unconfirmed,
} from "./support.js";
import { BranchField, DatabaseRoleFields, targetOf } from "./target.js";

/** Projects: the list and create dialog, and each project's dashboard (connect, branches, operations). */
const router = createConsoleRouter();

router.get("/projects", (c) => {
  const page = pageOf(c);
  // A page of 100, as the API pages them (its cursor), with a search by name or id.
  const query = parse(ProjectListQuery, {
    limit: "100",
    cursor: c.req.query("cursor") || undefined,
    search: c.req.query("search") || undefined,
  });
  const listed = listProjects(c.var.ctx, principalOf(c), query);
  const { projects } = listed;
  const next = "pagination" in listed ? listed.pagination?.cursor : undefined;
  const versions = c.var.ctx.config.postgres?.installed() ?? [14, 15, 16, 17, 18];
  return c.html(
    <Layout title="Projects" page={page}>
      <h1>Projects</h1>
      <details open={projects.length === 0}>
        <summary>New project</summary>
        <form method="post" action="/app/projects">
          <Csrf token={page.csrf} />
          <fieldset>
            <legend>Create a project</legend>
            <label>
              Project name
              <input name="name" maxlength={256} autocomplete="off" />
            </label>
            <SelectField
              label="Region"
              name="region_id"
              options={REGIONS.map((r) => ({ value: r.region_id, label: `${r.name} (${r.region_id})` }))}
              selected="aws-us-east-2"
            />
            <SelectField
              label="Postgres version"
              name="pg_version"
              options={versions.map(String)}
              selected="17"
            />
            <CuField label="Compute size, minimum" name="min_cu" selected={0.25} />
            <CuField label="maximum" name="max_cu" selected={0.25} />
            <label>
              Suspend after (seconds; 0 = default, -1 = never)
              <input name="suspend_timeout_seconds" type="number" min={-1} max={604800} value="0" />
            </label>
            <button type="submit" class="primary">
              Create project
            </button>
          </fieldset>
        </form>
      </details>
      <search>
        <form method="get" action="/app/projects">
          <label>
            Search projects
            <input name="search" value={query.search ?? ""} maxlength={256} />
          </label>
          <button type="submit">Search</button>
        </form>
      </search>
      <table>
        <TableHead columns={["Name", "Region", "Postgres", "Created", "Compute time (this month)"]} />
        <tbody>
          {projects.map((p) => (
            <tr>
              <td>
                <a href={`/app/projects/${p.id}`}>{shownName(p.name, p.id)}</a>{" "}
                <span class="muted">{p.id}</span>
              </td>
              <td>{p.region_id}</td>
              <td>{p.pg_version}</td>
              <td>
                <When at={p.created_at} />
              </td>
              <td>{duration(p.cpu_used_sec)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {projects.length === 0 && (
        <p class="muted">{query.search ? "No project matches." : "No projects yet: create one above."}</p>
      )}
      {next && (
        <p>
          <a
            href={`/app/projects?${new URLSearchParams({ cursor: next, ...(query.search ? { search: query.search } : {}) })}`}
          >
            Next page
          </a>
        </p>
      )}
      <RecentlyDeleted c={c} csrf={page.csrf} />
    </Layout>,
  );
});

/** Deleted projects still within their recovery window (the API's `?recoverable=true`), each with Recover. */
function RecentlyDeleted(props: { c: ConsoleContext; csrf: string }) {
  const listed = listProjects(props.c.var.ctx, principalOf(props.c), { limit: 100, recoverable: true });
  // The recoverable list's items carry when each was deleted and until when it can come back.
  const deleted = listed.projects as ((typeof listed.projects)[number] & {
    deleted_at: string;
    recoverable_until: string;
  })[];
  if (deleted.length === 0) return null;
  return (
    <details>
      <summary>Recently deleted ({deleted.length})</summary>
      <table>
        <TableHead columns={["Name", "Deleted", "Recoverable until"]} actions />
        <tbody>
          {deleted.map((p) => (
            <tr data-deleted-project={p.id}>
              <td>
                {shownName(p.name, p.id)} <span class="muted">{p.id}</span>
              </td>
              <td>
                <When at={p.deleted_at} />
              </td>
              <td>
                <When at={p.recoverable_until} />
              </td>
              <td>
                <ActionButton action={`/app/projects/${p.id}/recover`} label="Recover" csrf={props.csrf} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

router.post("/projects/:projectId/recover", (c) => {
  const body = recoverProject(c.var.ctx, accountOf(c), c.req.param("projectId"));
  return redirectTo(
    c,
    `/app/projects/${body.project.id}`,
    `Project “${body.project.name}” recovered: its computes start when a client connects.`,
  );
});

router.post("/projects", async (c) => {
  const form = await formOf(c);
  const input = parse(ProjectCreateRequest, {
    project: {
      ...(form.name ? { name: form.name } : {}),
      ...(form.region_id ? { region_id: form.region_id } : {}),
      ...(form.pg_version ? { pg_version: Number(form.pg_version) } : {}),
      default_endpoint_settings: {
        autoscaling_limit_min_cu: numberField(form.min_cu),
        autoscaling_limit_max_cu: numberField(form.max_cu),
        suspend_timeout_seconds: numberField(form.suspend_timeout_seconds),
      },
    },
  });
  const body = run(c, createProject(c.var.ctx, accountOf(c), input.project));
  return redirectTo(
    c,
    `/app/projects/${body.project.id}`,
    `Project “${body.project.name}” created.`,
    startedOps(body),
  );
});

router.get("/projects/:projectId", (c) => {
  const { ctx } = c.var;
  const accountId = accountOf(c);
  const projectId = c.req.param("projectId");
  const page = pageOf(c);
  const { project } = getProject(ctx, accountId, projectId);
  const { branches: list } = listBranches(ctx, accountId, projectId, {
    sort_by: "created_at",
    sort_order: "asc",
  });
  const { endpoints } = parseJsonText(listEndpointsJson(ctx, accountId, projectId, {}));
  const primary = new Map(endpoints.filter((e) => e.type === "read_write").map((e) => [e.branch_id, e]));
  const names = new Map(list.map((b) => [b.id, b.name]));
  return c.html(
    <Layout title={project.name} page={page}>
      <Breadcrumb project={project} />
      <h1>{shownName(project.name, project.id)}</h1>
      <p class="muted">
        {project.region_id} · Postgres {project.pg_version} · created <When at={project.created_at} />
        {" · "}
        <a href={`/app/projects/${projectId}/sql`}>SQL editor</a>
        {" · "}
        <a href={`/app/projects/${projectId}/monitoring`}>Monitoring</a>
      </p>
      <StartedOperations c={c} projectId={projectId} />
      <ConnectSection c={c} projectId={projectId} />
      <h2>Branches</h2>
      <details>
        <summary>New branch</summary>
        <BranchCreateForm
          csrf={page.csrf}
          projectId={projectId}
          legend="Create a branch"
          parents={list}
          parentId={list.find((b) => b.default)?.id}
        />
      </details>
      <table>
        <TableHead columns={["Branch", "Parent", "Primary compute", "Data size", "Created", "Last active"]} />
        <tbody>
          {list.map((b) => {
            const e = primary.get(b.id);
            return (
              <tr>
                <td>
                  <a href={`/app/projects/${projectId}/branches/${b.id}`}>{shownName(b.name, b.id)}</a>
                  {b.default && <span class="tag">DEFAULT</span>}
                  {b.protected && <span class="tag">PROTECTED</span>}
                </td>
                <td>
                  {b.parent_id ? (names.get(b.parent_id) ?? b.parent_id) : <span class="muted">—</span>}
                </td>
                <td>
                  {e ? (
                    <>
                      {cuRange(e)} <StateTag label={stateLabel(e)} />
                    </>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td>{bytes(b.logical_size)}</td>
                <td>
                  <When at={b.created_at} />
                </td>
                <td>
                  <When at={e?.last_active} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <h2>Operations</h2>
      <OperationsSection c={c} projectId={projectId} branchNames={names} />
      <h2>Settings</h2>
      <section aria-label="Project actions">
        <RenameForm
          action={`/app/projects/${projectId}/rename`}
          csrf={page.csrf}
          label="Project name"
          value={project.name}
        />{" "}
        <ActionButton
          action={`/app/projects/${projectId}/delete`}
          label="Delete project"
          csrf={page.csrf}
          danger
          confirm={`Delete the project “${project.name}” with its branches, computes and data? Until its recovery window closes, it can be recovered (Projects, Recently deleted).`}
        />
      </section>
    </Layout>,
  );
});

router.post("/projects/:projectId/rename", async (c) => {
  const projectId = c.req.param("projectId");
  const form = await formOf(c);
  const input = parse(ProjectUpdateRequest, { project: { name: form.name ?? "" } });
  const body = run(c, updateProject(c.var.ctx, accountOf(c), projectId, input.project));
  return redirectTo(
    c,
    `/app/projects/${projectId}`,
    `Project renamed to “${body.project.name}”.`,
    startedOps(body),
  );
});

router.post("/projects/:projectId/delete", async (c) => {
  const projectId = c.req.param("projectId");
  const ask = unconfirmed(
    c,
    await formOf(c),
    "Delete this project with its branches, computes and data?",
    `/app/projects/${projectId}`,
  );
  if (ask) return ask;
  const body = run(c, deleteProject(c.var.ctx, accountOf(c), projectId));
  return redirectTo(c, "/app/projects", `Project “${body.project.name}” deleted.`);
});

/** The operations an action started alone: a page's script fetches it every second while one runs. */
router.get("/projects/:projectId/started", (c) => {
  return c.html(<StartedOperations c={c} projectId={c.req.param("projectId")} />);
});

/** The operations list alone: the dashboard's script fetches it every second while one runs. */
router.get("/projects/:projectId/operations", (c) => {
  const projectId = c.req.param("projectId");
  const { branches: list } = listBranches(c.var.ctx, accountOf(c), projectId, {});
  return c.html(
    <OperationsSection c={c} projectId={projectId} branchNames={new Map(list.map((b) => [b.id, b.name]))} />,
  );
});

function OperationsSection(props: {
  c: ConsoleContext;
  projectId: string;
  branchNames: Map<string, string>;
}) {
  const { c, projectId } = props;
  const { operations } = parseJsonText(listOperations(c.var.ctx, accountOf(c), projectId, { limit: 25 }));
  const live = operations.some((o) => o.status === "running" || o.status === "scheduling");
  return (
    <section id="operations" data-refresh={`/app/projects/${projectId}/operations`} data-live={String(live)}>
      <table>
        <TableHead columns={["Action", "Branch", "Status", "Duration", "Date"]} />
        <tbody>
          {operations.map((o) => (
            <tr data-operation-id={o.id}>
              <td>{o.action}</td>
              <td>{o.branch_id ? (props.branchNames.get(o.branch_id) ?? o.branch_id) : "—"}</td>
              <td>
                <span class={`tag state-${o.status}`}>{o.status}</span>
                {o.error && <span class="muted"> {o.error}</span>}
              </td>
              <td>{o.total_duration_ms} ms</td>
              <td>
                <When at={o.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {operations.length === 0 && <p class="muted">No operations yet.</p>}
    </section>
  );
}

/** The Connect dialog: branch, compute, database, role and pooling → a connection string that works. */
function ConnectSection(props: { c: ConsoleContext; projectId: string }) {
  const { c, projectId } = props;
  const { ctx } = c.var;
  const accountId = accountOf(c);
  const target = targetOf(c, projectId);
  const { branch, database, role } = target;
  if (!branch) return null;
  const { endpoints } = parseJsonText(listEndpointsJson(ctx, accountId, projectId, {}));
  const computes = endpoints.filter((e) => e.branch_id === branch.id);
  const compute =
    computes.find((e) => e.id === c.req.query("endpoint_id")) ??
    computes.find((e) => e.type === "read_write");
  const pooled = c.req.query("pooled") === "true";
  let uri: string | undefined;
  let problem: string | undefined;
  if (!compute) problem = "This branch has no compute: add one on the branch's page.";
  else if (!database || !role) problem = "This branch has no database or role yet.";
  else
    uri = getConnectionUri(
      ctx,
      accountId,
      projectId,
      parse(ConnectionUriQuery, {
        branch_id: branch.id,
        endpoint_id: compute.id,
        database_name: database.name,
        role_name: role.name,
        pooled: pooled ? "true" : "false",
      }),
    ).uri;
  return (
    <section aria-labelledby="connect">
      <h2 id="connect">Connect</h2>
      {/* The script shows the string for each choice as it is made; without it, the button does. */}
      <form method="get" action={`/app/projects/${projectId}`} data-autosubmit>
        <BranchField target={target} />
        <SelectField
          label="Compute"
          name="endpoint_id"
          options={computes.map((e) => ({ value: e.id, label: `${kindLabel(e.type)} ${e.id}` }))}
          selected={compute?.id}
        />
        <DatabaseRoleFields target={target} />
        <label class="check">
          <input type="checkbox" name="pooled" value="true" checked={pooled} /> Connection pooling
        </label>
        <button type="submit">Show connection string</button>
      </form>
      {uri && <ConnectionString id="connection-string" uri={uri} />}
      {problem && <p class="muted">{problem}</p>}
    </section>
  );
}

export default router;
