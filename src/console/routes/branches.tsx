import { restoreBranch } from "../../control-plane/branch-restore/service.js";
import { BranchCreateRequest, BranchUpdateRequest } from "../../control-plane/branches/schema.js";
import {
  checkBranchCreate,
  copyParentNow,
  createBranch,
  deleteBranch,
  getBranch,
  listBranches,
  setDefaultBranch,
  updateBranch,
} from "../../control-plane/branches/service.js";
import { getProject } from "../../control-plane/projects/service.js";
import { badRequest } from "../../errors.js";
import { iso } from "../../platform/clock.js";
import { bytes, shownName } from "../views/labels.js";
import {
  ActionButton,
  Breadcrumb,
  Csrf,
  Layout,
  type PageContext,
  RenameForm,
  SelectField,
  TableHead,
  When,
} from "../views/layout.js";
import { ComputesTab } from "./computes.js";
import { RolesDatabasesTab } from "./roles-databases.js";
import { SchemaTab, schemaView } from "./schema.js";
import { StartedOperations } from "./started.js";
import {
  accountOf,
  type BranchTab,
  type BranchTabProps,
  branchPath,
  type ConsoleContext,
  createConsoleRouter,
  formOf,
  numberField,
  pageOf,
  parse,
  redirectTo,
  run,
  startedOps,
  unconfirmed,
} from "./support.js";

/** A branch's page (tabs Computes / Roles & Databases / Child branches) and its actions. */
const router = createConsoleRouter();
const BRANCH = "/projects/:projectId/branches/:branchId";
const TABS: Record<BranchTab, string> = {
  computes: "Computes",
  roles: "Roles & Databases",
  children: "Child branches",
  schema: "Schema",
};

router.get(BRANCH, async (c) => {
  const { projectId, branchId } = c.req.param();
  const page = pageOf(c);
  const { branch } = getBranch(c.var.ctx, accountOf(c), projectId, branchId);
  const { project } = getProject(c.var.ctx, accountOf(c), projectId);
  const parent = branch.parent_id
    ? getBranch(c.var.ctx, accountOf(c), projectId, branch.parent_id).branch
    : undefined;
  const asked = c.req.query("tab");
  const tab: BranchTab = asked === "roles" || asked === "children" || asked === "schema" ? asked : "computes";
  const schema = tab === "schema" ? await schemaView(c, projectId, branch) : undefined;
  return c.html(
    <Layout title={branch.name} page={page}>
      <Breadcrumb project={project} here="Branches" />
      <h1>
        {shownName(branch.name, branch.id)}
        {branch.default && <span class="tag">DEFAULT</span>}
        {branch.protected && <span class="tag">PROTECTED</span>}
      </h1>
      <p class="muted">
        {branch.id} · data size {bytes(branch.logical_size)} · created <When at={branch.created_at} /> · state{" "}
        {branch.current_state}
        {branch.pending_state ? ` → ${branch.pending_state}` : ""}
      </p>
      <p class="muted" data-branch-origin>
        {parent ? (
          <>
            Branched from <a href={branchPath(projectId, parent.id)}>{shownName(parent.name, parent.id)}</a>
            {branch.parent_timestamp ? (
              <>
                {" "}
                as of <When at={branch.parent_timestamp} />
              </>
            ) : null}
            {branch.parent_lsn ? ` at LSN ${branch.parent_lsn}` : ""}
          </>
        ) : branch.init_source === "schema-only" ? (
          "A root branch, made from another branch's schema without its rows"
        ) : (
          "A root branch"
        )}
        {branch.expires_at && (
          <>
            {" · "}deleted automatically at <When at={branch.expires_at} />
          </>
        )}
      </p>
      <StartedOperations c={c} projectId={projectId} />
      <BranchActions c={c} page={page} projectId={projectId} branch={branch} />
      <nav class="tabs" aria-label="Branch sections">
        {(Object.keys(TABS) as BranchTab[]).map((t) => (
          <a href={branchPath(projectId, branchId, t)} aria-current={t === tab ? "page" : undefined}>
            {TABS[t]}
          </a>
        ))}
      </nav>
      {tab === "computes" && <ComputesTab c={c} page={page} projectId={projectId} branchId={branchId} />}
      {tab === "roles" && <RolesDatabasesTab c={c} page={page} projectId={projectId} branchId={branchId} />}
      {tab === "children" && <ChildrenTab c={c} page={page} projectId={projectId} branchId={branchId} />}
      {schema && <SchemaTab projectId={projectId} branchId={branchId} view={schema} />}
    </Layout>,
  );
});

function BranchActions(props: {
  c: ConsoleContext;
  page: PageContext;
  projectId: string;
  branch: { id: string; name: string; default: boolean; protected: boolean; parent_id?: string };
}) {
  const { page, branch } = props;
  const base = `/app/projects/${props.projectId}/branches/${branch.id}`;
  return (
    <section aria-label="Branch actions">
      <RenameForm
        action={`${base}/rename`}
        csrf={page.csrf}
        label="New name"
        value={branch.name}
        confirm={`Rename “${branch.name}”? Connection strings keep working: they name computes, not branches.`}
      />{" "}
      {!branch.default && (
        <ActionButton
          action={`${base}/set-default`}
          label="Set as default"
          csrf={page.csrf}
          confirm={`Make “${branch.name}” the project's default branch?`}
        />
      )}{" "}
      <ActionButton
        action={`${base}/protect`}
        label={branch.protected ? "Unprotect" : "Protect"}
        csrf={page.csrf}
        fields={{ protected: String(!branch.protected) }}
        confirm={
          branch.protected
            ? `Remove the protection of “${branch.name}”? It can then be deleted or reset.`
            : `Protect “${branch.name}”? A protected branch cannot be deleted or reset.`
        }
      />{" "}
      {branch.parent_id && !branch.protected && (
        <ActionButton
          action={`${base}/reset`}
          label="Reset from parent"
          csrf={page.csrf}
          danger
          confirm={`Reset “${branch.name}” from its parent? Its data, roles and databases are replaced with the parent's latest.`}
        />
      )}{" "}
      {/* The default branch cannot be deleted: another is made the default first. */}
      {!branch.default && (
        <ActionButton
          action={`${base}/delete`}
          label="Delete"
          csrf={page.csrf}
          danger
          confirm={`Delete the branch “${branch.name}” and its computes? This cannot be undone.`}
        />
      )}
    </section>
  );
}

function ChildrenTab(props: BranchTabProps) {
  const { c, page, projectId, branchId } = props;
  const { branches } = listBranches(c.var.ctx, accountOf(c), projectId, {
    sort_by: "created_at",
    sort_order: "asc",
  });
  const children = branches.filter((b) => b.parent_id === branchId);
  return (
    <section>
      <BranchCreateForm
        csrf={page.csrf}
        projectId={projectId}
        legend="Create a child branch"
        parentId={branchId}
      />
      <table>
        <TableHead columns={["Branch", "Data size", "Created"]} />
        <tbody>
          {children.map((b) => (
            <tr>
              <td>
                <a href={branchPath(projectId, b.id)}>{shownName(b.name, b.id)}</a>
              </td>
              <td>{bytes(b.logical_size)}</td>
              <td>
                <When at={b.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {children.length === 0 && <p class="muted">No child branches.</p>}
    </section>
  );
}

/**
 * The create-branch form: its parent (a choice among `parents`, as on the project's page), name, data (current, past at a time or LSN, schema only), expiry and compute.
 */
export function BranchCreateForm(props: {
  csrf: string;
  projectId: string;
  legend: string;
  /** The branches to choose the parent from; without them, `parentId` is the parent. */
  parents?: { id: string; name: string }[];
  parentId: string | undefined;
}) {
  return (
    <form method="post" action={`/app/projects/${props.projectId}/branches`}>
      <Csrf token={props.csrf} />
      <fieldset>
        <legend>{props.legend}</legend>
        {props.parents ? (
          <SelectField
            label="Parent branch"
            name="parent_id"
            options={props.parents.map((b) => ({ value: b.id, label: shownName(b.name, b.id) }))}
            selected={props.parentId}
          />
        ) : (
          <input type="hidden" name="parent_id" value={props.parentId ?? ""} />
        )}
        <label>
          Name
          <input name="name" maxlength={256} autocomplete="off" />
        </label>
        <fieldset>
          <legend>Data</legend>
          <label class="check">
            <input type="radio" name="data" value="current" checked /> Current data
          </label>
          <label class="check">
            <input type="radio" name="data" value="past" /> Past data, as it was at
          </label>
          <label>
            Point in time (UTC)
            <input name="parent_timestamp" type="datetime-local" step={1} />
          </label>
          <label>
            or LSN
            <input name="parent_lsn" placeholder="0/1A2B3C4" maxlength={32} autocomplete="off" />
          </label>
          <label class="check">
            <input type="radio" name="data" value="schema" /> Schema only (no rows; a root branch, with no
            parent)
          </label>
        </fieldset>
        <SelectField label="Delete automatically after" name="expires_in" options={EXPIRIES} />
        <label class="check">
          <input type="checkbox" name="with_compute" value="true" checked /> with a read-write compute
        </label>
        <button type="submit" class="primary">
          Create branch
        </button>
      </fieldset>
    </form>
  );
}

/** The create form's choices of how long a branch lives (Neon's console offers the same). */
const EXPIRIES = [
  { value: "", label: "Never" },
  { value: "3600", label: "1 hour" },
  { value: "86400", label: "1 day" },
  { value: "604800", label: "7 days" },
];

/**
 * The create form's data choice as the API's fields: the schema alone, or past data at an LSN or
 * at a point in time (the form's `datetime-local` value, read as UTC); current data is the default.
 */
function dataOf(form: Record<string, string>) {
  if (form.data === "schema") return { init_source: "schema-only" };
  if (form.data !== "past") return {};
  const lsn = form.parent_lsn?.trim();
  const at = form.parent_timestamp?.trim();
  if (!lsn && !at) throw badRequest("Check the form. Past data needs a point in time or an LSN.");
  if (lsn && at) throw badRequest("Check the form. Past data is at a point in time or at an LSN, not both.");
  return lsn ? { parent_lsn: lsn } : { parent_timestamp: `${at?.length === 16 ? `${at}:00` : at}Z` };
}

// The branches are listed on the project's page (the breadcrumb's "branches").
router.get("/projects/:projectId/branches", (c) =>
  c.redirect(`/app/projects/${encodeURIComponent(c.req.param("projectId"))}`, 303),
);

router.post("/projects/:projectId/branches", async (c) => {
  const projectId = c.req.param("projectId");
  const form = await formOf(c);
  const accountId = accountOf(c);
  const expiresIn = numberField(form.expires_in);
  const input = parse(BranchCreateRequest, {
    branch: {
      ...(form.name ? { name: form.name } : {}),
      ...(form.parent_id ? { parent_id: form.parent_id } : {}),
      ...dataOf(form),
      ...(expiresIn
        ? { expires_at: iso(c.var.ctx.clock.now(accountId) + expiresIn * 1000).replace(/\.\d+Z$/, "Z") }
        : {}),
    },
    ...(form.with_compute === "true" ? { endpoints: [{ type: "read_write" }] } : {}),
  });
  await checkBranchCreate(c.var.ctx, accountId, projectId, input);
  const body = await copyParentNow(c.var.ctx, run(c, createBranch(c.var.ctx, accountId, projectId, input)));
  return redirectTo(
    c,
    branchPath(projectId, body.branch.id),
    `Branch “${body.branch.name}” created.`,
    startedOps(body),
  );
});

router.post(`${BRANCH}/rename`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const ask = unconfirmed(
    c,
    form,
    `Rename this branch to “${form.name ?? ""}”?`,
    branchPath(projectId, branchId),
  );
  if (ask) return ask;
  const input = parse(BranchUpdateRequest, { branch: { name: form.name ?? "" } });
  const body = run(c, updateBranch(c.var.ctx, accountOf(c), projectId, branchId, input.branch));
  return redirectTo(
    c,
    branchPath(projectId, branchId),
    `Branch renamed to “${body.branch.name}”.`,
    startedOps(body),
  );
});

router.post(`${BRANCH}/protect`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const form = await formOf(c);
  const protect = form.protected === "true";
  const ask = unconfirmed(
    c,
    form,
    protect ? "Protect this branch?" : "Remove this branch's protection?",
    branchPath(projectId, branchId),
  );
  if (ask) return ask;
  const input = parse(BranchUpdateRequest, { branch: { protected: protect } });
  const body = run(c, updateBranch(c.var.ctx, accountOf(c), projectId, branchId, input.branch));
  return redirectTo(
    c,
    branchPath(projectId, branchId),
    body.branch.protected ? "Branch protected." : "Branch no longer protected.",
    startedOps(body),
  );
});

router.post(`${BRANCH}/set-default`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const ask = unconfirmed(
    c,
    await formOf(c),
    "Make this the default branch?",
    branchPath(projectId, branchId),
  );
  if (ask) return ask;
  const body = run(c, setDefaultBranch(c.var.ctx, accountOf(c), projectId, branchId));
  return redirectTo(c, branchPath(projectId, branchId), "This is now the default branch.", startedOps(body));
});

router.post(`${BRANCH}/reset`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const back = branchPath(projectId, branchId);
  const ask = unconfirmed(c, await formOf(c), "Reset this branch from its parent?", back);
  if (ask) return ask;
  const accountId = accountOf(c);
  const { branch } = getBranch(c.var.ctx, accountId, projectId, branchId);
  const body = run(
    c,
    restoreBranch(c.var.ctx, accountId, projectId, branchId, {
      source_branch_id: branch.parent_id ?? branchId,
    }),
  );
  return redirectTo(c, back, "Branch reset from its parent.", startedOps(body));
});

router.post(`${BRANCH}/delete`, async (c) => {
  const { projectId, branchId } = c.req.param();
  const ask = unconfirmed(
    c,
    await formOf(c),
    "Delete this branch and its computes?",
    branchPath(projectId, branchId),
  );
  if (ask) return ask;
  const body = run(c, deleteBranch(c.var.ctx, accountOf(c), projectId, branchId));
  return redirectTo(
    c,
    `/app/projects/${projectId}`,
    `Branch “${body.branch.name}” deleted.`,
    startedOps(body),
  );
});

export default router;
