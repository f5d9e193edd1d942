import { DatabaseCreateRequest, RoleCreateRequest } from "../../control-plane/roles-databases/schema.js";
import {
  createDatabase,
  createRole,
  deleteDatabase,
  deleteRole,
  listDatabases,
  listRoles,
  resetRolePassword,
  revealRolePassword,
} from "../../control-plane/roles-databases/service.js";
import { ActionButton, Csrf, Layout, Secret, SelectField, TableHead, When } from "../views/layout.js";
import {
  accountOf,
  type BranchTabProps,
  branchPath,
  type ConsoleContext,
  createConsoleRouter,
  formOf,
  pageOf,
  parse,
  redirectTo,
  run,
  startedOps,
  unconfirmed,
} from "./support.js";

/** A branch's roles and databases: list, create, delete; a role's password revealed or reset. */
const router = createConsoleRouter();
const BRANCH = "/projects/:projectId/branches/:branchId";

export function RolesDatabasesTab(props: BranchTabProps) {
  const { c, page, projectId, branchId } = props;
  const accountId = accountOf(c);
  const { roles } = listRoles(c.var.ctx, accountId, projectId, branchId);
  const { databases } = listDatabases(c.var.ctx, accountId, projectId, branchId);
  const base = `/app/projects/${projectId}/branches/${branchId}`;
  return (
    <section>
      <h2>Roles</h2>
      <table>
        <TableHead columns={["Role", "Created"]} actions />
        <tbody>
          {roles.map((r) => (
            <tr data-role={r.name}>
              <td>
                {r.name}
                {r.protected && <span class="tag">SYSTEM</span>}
              </td>
              <td>
                <When at={r.created_at} />
              </td>
              <td>
                {!r.protected && (
                  <>
                    <ActionButton
                      action={`${base}/roles/reveal`}
                      label="Reveal password"
                      csrf={page.csrf}
                      fields={{ name: r.name }}
                    />{" "}
                    <ActionButton
                      action={`${base}/roles/reset`}
                      label="Reset password"
                      csrf={page.csrf}
                      fields={{ name: r.name }}
                      confirm={`Reset the password of ${r.name}? Connections made with the old one keep working until they close; new ones need the new password.`}
                    />{" "}
                    <ActionButton
                      action={`${base}/roles/delete`}
                      label="Delete"
                      danger
                      csrf={page.csrf}
                      fields={{ name: r.name }}
                      confirm={`Delete the role ${r.name}?`}
                    />
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action={`${base}/roles`}>
        <Csrf token={page.csrf} />
        <label>
          New role name
          <input name="name" required maxlength={63} autocomplete="off" />
        </label>
        <button type="submit">Create role</button>
      </form>
      <h2>Databases</h2>
      <table>
        <TableHead columns={["Database", "Owner", "Created"]} actions />
        <tbody>
          {databases.map((d) => (
            <tr data-database={d.name}>
              <td>{d.name}</td>
              <td>{d.owner_name}</td>
              <td>
                <When at={d.created_at} />
              </td>
              <td>
                <ActionButton
                  action={`${base}/databases/delete`}
                  label="Delete"
                  danger
                  csrf={page.csrf}
                  fields={{ name: d.name }}
                  confirm={`Delete the database ${d.name} and all its data?`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action={`${base}/databases`}>
        <Csrf token={page.csrf} />
        <label>
          New database name
          <input name="name" required maxlength={63} autocomplete="off" />
        </label>
        <SelectField
          label="Owner"
          name="owner_name"
          options={roles.filter((r) => !r.protected).map((r) => r.name)}
        />
        <button type="submit">Create database</button>
      </form>
    </section>
  );
}

const back = (projectId: string, branchId: string) => branchPath(projectId, branchId, "roles");

router.post(`${BRANCH}/roles`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const input = parse(RoleCreateRequest, { role: { name: (await formOf(c)).name ?? "" } });
  const body = run(c, createRole(c.var.ctx, accountOf(c), projectId, branchId, input.role));
  // Its password shown at once, as Neon's console shows a new role's (Reveal shows it again later).
  return c.html(<NewPassword c={c} projectId={projectId} branchId={branchId} body={body} kind="created" />);
});

router.post(`${BRANCH}/roles/delete`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const ask = unconfirmed(c, form, `Delete the role ${form.name}?`, back(projectId, branchId));
  if (ask) return ask;
  const body = run(c, deleteRole(c.var.ctx, accountOf(c), projectId, branchId, form.name ?? ""));
  return redirectTo(c, back(projectId, branchId), `Role ${form.name} deleted.`, startedOps(body));
});

/** A password is shown on the answer itself, never carried in a redirect's URL. */
function PasswordPage(props: {
  c: ConsoleContext;
  projectId: string;
  branchId: string;
  role: string;
  password: string;
  kind: "created" | "reset" | "shown";
  /** Operations the action started: the page the link leads back to follows them. */
  ops?: string[];
}) {
  const ops = props.ops?.length ? `&ops=${props.ops.join(",")}` : "";
  return (
    <Layout title="Password" page={pageOf(props.c)}>
      <h1>
        {props.kind === "created"
          ? `Role ${props.role} created`
          : `${props.kind === "reset" ? "New password" : "Password"} of ${props.role}`}
      </h1>
      <Secret id="role-password" value={props.password} label={`Password of ${props.role}`} />
      <p>
        <a href={`${back(props.projectId, props.branchId)}${ops}`}>Back to roles and databases</a>
      </p>
    </Layout>
  );
}

/** The password page for a role the API answered with (made, or its password reset), and the operations it started. */
function NewPassword(props: {
  c: ConsoleContext;
  projectId: string;
  branchId: string;
  body: { role: { name: string; password?: string | undefined }; operations?: { id: string }[] };
  kind: "created" | "reset";
}) {
  const { body } = props;
  return (
    <PasswordPage
      c={props.c}
      projectId={props.projectId}
      branchId={props.branchId}
      role={body.role.name}
      password={body.role.password ?? ""}
      kind={props.kind}
      ops={startedOps(body)}
    />
  );
}

router.post(`${BRANCH}/roles/reveal`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const name = (await formOf(c)).name ?? "";
  const { password } = revealRolePassword(c.var.ctx, accountOf(c), projectId, branchId, name);
  return c.html(
    <PasswordPage
      c={c}
      projectId={projectId}
      branchId={branchId}
      role={name}
      password={password}
      kind="shown"
    />,
  );
});

router.post(`${BRANCH}/roles/reset`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const ask = unconfirmed(c, form, `Reset the password of ${form.name}?`, back(projectId, branchId));
  if (ask) return ask;
  const body = run(c, resetRolePassword(c.var.ctx, accountOf(c), projectId, branchId, form.name ?? ""));
  return c.html(<NewPassword c={c} projectId={projectId} branchId={branchId} body={body} kind="reset" />);
});

router.post(`${BRANCH}/databases`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const input = parse(DatabaseCreateRequest, {
    database: { name: form.name ?? "", owner_name: form.owner_name ?? "" },
  });
  const body = run(c, createDatabase(c.var.ctx, accountOf(c), projectId, branchId, input.database));
  return redirectTo(
    c,
    back(projectId, branchId),
    `Database ${body.database.name} created.`,
    startedOps(body),
  );
});

router.post(`${BRANCH}/databases/delete`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const ask = unconfirmed(c, form, `Delete the database ${form.name}?`, back(projectId, branchId));
  if (ask) return ask;
  const body = run(c, deleteDatabase(c.var.ctx, accountOf(c), projectId, branchId, form.name ?? ""));
  return redirectTo(c, back(projectId, branchId), `Database ${form.name} deleted.`, startedOps(body));
});

export default router;
