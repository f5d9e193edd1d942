import { EndpointCreateRequest, EndpointUpdateRequest } from "../../control-plane/endpoints/schema.js";
import {
  changeEndpointState,
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listBranchEndpoints,
  updateEndpoint,
} from "../../control-plane/endpoints/service.js";
import { cuRange, kindLabel, stateLabel, suspendDelay, transitionOf } from "../views/labels.js";
import { ActionButton, Csrf, CuField, SelectField, StateTag, TableHead, When } from "../views/layout.js";
import {
  accountOf,
  type BranchTabProps,
  branchPath,
  createConsoleRouter,
  formOf,
  numberField,
  parse,
  redirectTo,
  run,
  startedOps,
  unconfirmed,
} from "./support.js";

/** A branch's computes: R/W or R/O, Active / Idle / Stopped, size, suspend delay; edit, start, suspend, restart. */
const router = createConsoleRouter();
const ENDPOINT = "/projects/:projectId/branches/:branchId/computes/:endpointId";

export function ComputesTab(props: BranchTabProps) {
  const { c, page, projectId, branchId } = props;
  const accountId = accountOf(c);
  const listed = listBranchEndpoints(c.var.ctx, accountId, projectId, branchId).endpoints;
  // One by one for pending_state: the list leaves it out, as the public API's list does.
  const endpoints = listed.map((e) => getEndpoint(c.var.ctx, accountId, projectId, e.id).endpoint);
  const hasPrimary = endpoints.some((e) => e.type === "read_write");
  return (
    <section>
      <table>
        <TableHead columns={["Compute", "Type", "Status", "Size", "Suspend after", "Last active"]} actions />
        <tbody>
          {endpoints.map((e) => {
            const base = `/app/projects/${projectId}/branches/${branchId}/computes/${e.id}`;
            const moving = transitionOf(e);
            return (
              <tr data-endpoint-id={e.id}>
                <td>
                  <code>{e.id}</code>
                </td>
                <td>
                  <span class="tag" title={e.type}>
                    {kindLabel(e.type)}
                  </span>
                </td>
                <td data-status>
                  <StateTag label={stateLabel(e)} />
                  {moving && <span class="transition">{moving}…</span>}
                </td>
                <td>{cuRange(e)}</td>
                <td>{suspendDelay(e.suspend_timeout_seconds)}</td>
                <td>
                  <When at={e.last_active} />
                </td>
                <td>
                  {/* Start for a compute that is not running, Suspend for one that is. */}
                  {e.disabled ? (
                    <ActionButton action={`${base}/enable`} label="Enable" csrf={page.csrf} />
                  ) : e.current_state === "active" ? (
                    <ActionButton action={`${base}/suspend`} label="Suspend" csrf={page.csrf} />
                  ) : (
                    <ActionButton action={`${base}/start`} label="Start" csrf={page.csrf} />
                  )}{" "}
                  <ActionButton action={`${base}/restart`} label="Restart" csrf={page.csrf} />{" "}
                  <ActionButton
                    action={`${base}/delete`}
                    label="Delete"
                    danger
                    csrf={page.csrf}
                    confirm={`Delete the compute ${e.id}? Its connection string stops working.`}
                  />
                  <details>
                    <summary>Edit</summary>
                    <form method="post" action={`${base}/edit`}>
                      <Csrf token={page.csrf} />
                      <CuField label="Minimum CU" name="min_cu" selected={e.autoscaling_limit_min_cu} />
                      <CuField label="Maximum CU" name="max_cu" selected={e.autoscaling_limit_max_cu} />
                      <label>
                        Suspend after (seconds; 0 = default, -1 = never)
                        <input
                          name="suspend_timeout_seconds"
                          type="number"
                          min={-1}
                          max={604800}
                          value={String(e.suspend_timeout_seconds)}
                        />
                      </label>
                      <p class="warning">
                        A size change restarts a running compute and drops its connections.
                      </p>
                      <button type="submit" class="primary">
                        Save
                      </button>
                    </form>
                  </details>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {endpoints.length === 0 && <p class="muted">No computes on this branch.</p>}
      <form method="post" action={`/app/projects/${projectId}/branches/${branchId}/computes`}>
        <Csrf token={page.csrf} />
        <fieldset>
          <legend>Add a compute</legend>
          <SelectField
            label="Type"
            name="type"
            options={[
              ...(hasPrimary ? [] : [{ value: "read_write", label: "R/W (primary)" }]),
              { value: "read_only", label: "R/O (read replica)" },
            ]}
          />
          <button type="submit">Add compute</button>
        </fieldset>
      </form>
    </section>
  );
}

router.post("/projects/:projectId/branches/:branchId/computes", async (c) => {
  const { projectId, branchId } = c.req.param();
  const input = parse(EndpointCreateRequest, {
    endpoint: { branch_id: branchId, type: (await formOf(c)).type },
  });
  const body = run(c, createEndpoint(c.var.ctx, accountOf(c), projectId, input.endpoint));
  return redirectTo(
    c,
    branchPath(projectId, branchId),
    `Compute ${body.endpoint.id} added.`,
    startedOps(body),
  );
});

router.post(`${ENDPOINT}/edit`, async (c) => {
  const { projectId, branchId, endpointId } = c.req.param();
  const form = await formOf(c);
  const input = parse(EndpointUpdateRequest, {
    endpoint: {
      autoscaling_limit_min_cu: numberField(form.min_cu),
      autoscaling_limit_max_cu: numberField(form.max_cu),
      suspend_timeout_seconds: numberField(form.suspend_timeout_seconds),
    },
  });
  const body = run(c, updateEndpoint(c.var.ctx, accountOf(c), projectId, endpointId, input.endpoint));
  return redirectTo(c, branchPath(projectId, branchId), `Compute ${endpointId} updated.`, startedOps(body));
});

// A disabled compute (PATCH disabled: true through the API) refuses connections and starts until enabled again.
router.post(`${ENDPOINT}/enable`, (c) => {
  const { projectId, branchId, endpointId } = c.req.param();
  const body = run(c, updateEndpoint(c.var.ctx, accountOf(c), projectId, endpointId, { disabled: false }));
  return redirectTo(c, branchPath(projectId, branchId), `Compute ${endpointId} enabled.`, startedOps(body));
});

for (const verb of ["start", "suspend", "restart"] as const)
  router.post(`${ENDPOINT}/${verb}`, (c) => {
    const { projectId, branchId, endpointId } = c.req.param();
    const body = run(c, changeEndpointState(c.var.ctx, accountOf(c), projectId, endpointId, verb));
    return redirectTo(c, branchPath(projectId, branchId), undefined, startedOps(body));
  });

router.post(`${ENDPOINT}/delete`, async (c) => {
  const { projectId, branchId, endpointId } = c.req.param();
  const back = branchPath(projectId, branchId);
  const ask = unconfirmed(c, await formOf(c), `Delete the compute ${endpointId}?`, back);
  if (ask) return ask;
  run(c, deleteEndpoint(c.var.ctx, accountOf(c), projectId, endpointId));
  return redirectTo(c, back, `Compute ${endpointId} deleted.`);
});

export default router;
