import { listBranches } from "../../control-plane/branches/service.js";
import { listEndpointsJson } from "../../control-plane/endpoints/service.js";
import { listDatabases, listRoles } from "../../control-plane/roles-databases/service.js";
import { parseJsonText } from "../../platform/json-text.js";
import { shownName } from "../views/labels.js";
import { SelectField } from "../views/layout.js";
import { accountOf, type ConsoleContext, queryOf } from "./support.js";

/**
 * What a Connect or SQL form aims at: the branch, database and role asked for (in the query, or a
 * posted form's `chosen`), else the default branch (the first with a read-write compute when it
 * has none), its first database and that database's owner. System roles are left out:
 * they do not log in.
 */
export function targetOf(
  c: ConsoleContext,
  projectId: string,
  chosen: { database_name?: string | undefined; role_name?: string | undefined } = {},
) {
  const { ctx } = c.var;
  const accountId = accountOf(c);
  const q: Record<string, string | undefined> = { ...queryOf(c), ...chosen };
  const { branches } = listBranches(ctx, accountId, projectId, { sort_by: "created_at", sort_order: "asc" });
  // Unasked, a branch a statement can run on: the default one if it has a read-write compute, else
  // the first that has one.
  const { endpoints } = parseJsonText(listEndpointsJson(ctx, accountId, projectId, {}));
  const computed = new Set(endpoints.filter((e) => e.type === "read_write").map((e) => e.branch_id));
  const branch =
    branches.find((b) => b.id === q.branch_id) ??
    branches.find((b) => b.default && computed.has(b.id)) ??
    branches.find((b) => computed.has(b.id)) ??
    branches.find((b) => b.default) ??
    branches[0];
  const databases = branch ? listDatabases(ctx, accountId, projectId, branch.id).databases : [];
  const roles = branch
    ? listRoles(ctx, accountId, projectId, branch.id).roles.filter((r) => !r.protected)
    : [];
  const database = databases.find((d) => d.name === q.database_name) ?? databases[0];
  const role =
    roles.find((r) => r.name === q.role_name) ??
    roles.find((r) => r.name === database?.owner_name) ??
    roles[0];
  return { branches, branch, databases, roles, database, role };
}
export type Target = ReturnType<typeof targetOf>;

export function BranchField(props: { target: Target }) {
  const { branches, branch } = props.target;
  return (
    <SelectField
      label="Branch"
      name="branch_id"
      options={branches.map((b) => ({ value: b.id, label: shownName(b.name, b.id) }))}
      selected={branch?.id}
    />
  );
}

export function DatabaseRoleFields(props: { target: Target }) {
  const { databases, roles, database, role } = props.target;
  return (
    <>
      <SelectField
        label="Database"
        name="database_name"
        options={databases.map((d) => d.name)}
        selected={database?.name}
      />
      <SelectField label="Role" name="role_name" options={roles.map((r) => r.name)} selected={role?.name} />
    </>
  );
}
