import { branchSchema, compareBranchSchema } from "../../control-plane/branch-schema/service.js";
import { listBranches } from "../../control-plane/branches/service.js";
import { listDatabases } from "../../control-plane/roles-databases/service.js";
import { EmulatorError } from "../../errors.js";
import { shownName } from "../views/labels.js";
import { SelectField } from "../views/layout.js";
import { accountOf, type ConsoleContext, queryOf } from "./support.js";

/**
 * A branch's Schema tab: one database's schema as `pg_dump --schema-only` prints it (the API's
 * GET …/schema), or its difference from another branch's (…/compare_schema), as Neon's console
 * shows a schema diff.
 */

export interface SchemaView {
  databases: string[];
  database: string | undefined;
  branches: { id: string; label: string }[];
  against: string;
  /** This branch's name, for the diff's legend. */
  self: string;
  /** The schema, or the diff when `against` names a branch. */
  text?: string;
  /** Why there is nothing to show (no database, computes off, a refusal of the API's). */
  problem?: string;
}

/** Reads what the tab shows: `?db=` (else the branch's first database) and `?compare=<branch id>`. */
export async function schemaView(
  c: ConsoleContext,
  projectId: string,
  branch: { id: string; name: string; parent_id?: string | undefined },
): Promise<SchemaView> {
  const { ctx } = c.var;
  const accountId = accountOf(c);
  const databases = listDatabases(ctx, accountId, projectId, branch.id).databases.map((d) => d.name);
  const database = databases.find((d) => d === queryOf(c).db) ?? databases[0];
  const others = listBranches(ctx, accountId, projectId, { sort_by: "created_at", sort_order: "asc" })
    .branches.filter((b) => b.id !== branch.id)
    .map((b) => ({
      id: b.id,
      label: `${shownName(b.name, b.id)}${b.id === branch.parent_id ? " (parent)" : ""}`,
    }));
  const against = others.find((b) => b.id === c.req.query("compare"))?.id ?? "";
  const view: SchemaView = {
    databases,
    database,
    branches: others,
    against,
    self: shownName(branch.name, branch.id),
  };
  if (!database) return { ...view, problem: "This branch has no databases." };
  try {
    const text = against
      ? (
          await compareBranchSchema(ctx, accountId, projectId, branch.id, {
            db_name: database,
            base_branch_id: against,
          })
        ).diff
      : (await branchSchema(ctx, accountId, projectId, branch.id, { db_name: database })).sql;
    return { ...view, text };
  } catch (err) {
    if (err instanceof EmulatorError) return { ...view, problem: err.message };
    throw err;
  }
}

/** A unified diff's lines with their kind: the file header (up to the first hunk), hunk lines, added, removed. */
function diffLines(diff: string): { line: string; kind: string | undefined }[] {
  let inHunks = false;
  return diff
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => {
      if (line.startsWith("@@")) inHunks = true;
      const kind = !inHunks
        ? "file"
        : line.startsWith("@@")
          ? "hunk"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : undefined;
      return { line, kind };
    });
}

export function SchemaTab(props: { projectId: string; branchId: string; view: SchemaView }) {
  const { view } = props;
  return (
    <section>
      <form
        method="get"
        action={`/app/projects/${props.projectId}/branches/${props.branchId}`}
        data-autosubmit
      >
        <input type="hidden" name="tab" value="schema" />
        <SelectField label="Database" name="db" options={view.databases} selected={view.database} />
        <SelectField
          label="Compare with"
          name="compare"
          options={[
            { value: "", label: "— (show this branch's schema)" },
            ...view.branches.map((b) => ({ value: b.id, label: b.label })),
          ]}
          selected={view.against}
        />
        <button type="submit">Show</button>
      </form>
      {view.problem !== undefined && (
        <p class="error" role="alert">
          {view.problem}
        </p>
      )}
      {view.text !== undefined &&
        (view.against && view.text === "" ? (
          <p class="notice" data-schema-same>
            The schemas are the same.
          </p>
        ) : view.against ? (
          <>
            <p class="muted" data-schema-legend>
              <span class="del">−</span> {view.branches.find((b) => b.id === view.against)?.label} ·{" "}
              <span class="add">+</span> {view.self} (this branch)
            </p>
            <pre class="diff" data-schema-diff>
              {diffLines(view.text).map(({ line, kind }) => (
                <span class={kind}>{`${line}\n`}</span>
              ))}
            </pre>
          </>
        ) : (
          <pre data-schema>{view.text}</pre>
        ))}
    </section>
  );
}
