import { listBranches } from "../../control-plane/branches/service.js";
import { listEndpointsJson } from "../../control-plane/endpoints/service.js";
import { endpointMonitoring, WINDOWS } from "../../control-plane/monitoring/service.js";
import { getProject } from "../../control-plane/projects/service.js";
import { parseJsonText } from "../../platform/json-text.js";
import { StateChart, StepChart } from "../views/charts.js";
import { bytes, kindLabel } from "../views/labels.js";
import { Breadcrumb, Layout, SelectField } from "../views/layout.js";
import { accountOf, createConsoleRouter, pageOf } from "./support.js";

/** Monitoring: a compute's state, open connections and its branch's data size over time. */
const router = createConsoleRouter();

router.get("/projects/:projectId/monitoring", (c) => {
  const { ctx } = c.var;
  const accountId = accountOf(c);
  const projectId = c.req.param("projectId");
  const { project } = getProject(ctx, accountId, projectId);
  const { branches } = listBranches(ctx, accountId, projectId, {});
  const { endpoints } = parseJsonText(listEndpointsJson(ctx, accountId, projectId, {}));
  const names = new Map(branches.map((b) => [b.id, b.name]));
  const defaultBranch = branches.find((b) => b.default)?.id;
  const endpoint =
    endpoints.find((e) => e.id === c.req.query("endpoint_id")) ??
    endpoints.find((e) => e.branch_id === defaultBranch && e.type === "read_write") ??
    endpoints[0];
  const window = c.req.query("window") ?? "24h";
  const data = endpoint && endpointMonitoring(ctx, accountId, projectId, endpoint.id, window);
  return c.html(
    <Layout title={`Monitoring · ${project.name}`} page={pageOf(c)}>
      <Breadcrumb project={project} here="Monitoring" />
      <h1>Monitoring</h1>
      <form method="get" action={`/app/projects/${projectId}/monitoring`}>
        <SelectField
          label="Compute"
          name="endpoint_id"
          options={endpoints.map((e) => ({
            value: e.id,
            label: `${names.get(e.branch_id) ?? e.branch_id} · ${kindLabel(e.type)} ${e.id}`,
          }))}
          selected={endpoint?.id}
        />
        <SelectField
          label="Window"
          name="window"
          options={Object.keys(WINDOWS).map((w) => ({ value: w, label: `last ${w}` }))}
          selected={window}
        />
        <button type="submit">Show</button>
      </form>
      {!data && <p class="muted">This project has no computes.</p>}
      {data && (
        <>
          <StateChart title="Compute state" from={data.from} to={data.to} active={data.active} />
          <StepChart
            title="Open connections (peak per interval)"
            from={data.from}
            to={data.to}
            samples={data.connections}
            format={String}
          />
          <StepChart
            title="Database size (as measured at each start, suspend and branch copy)"
            from={data.from}
            to={data.to}
            samples={data.logicalSize}
            format={bytes}
          />
        </>
      )}
    </Layout>,
  );
});

export default router;
