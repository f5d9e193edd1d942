import { getOperation } from "../../control-plane/operations/service.js";
import { EmulatorError } from "../../errors.js";
import { accountOf, type ConsoleContext } from "./support.js";

/**
 * The operations an action just started (`?ops=`), each with its current status. One the project
 * does not have (a link kept past a reset, an id mistyped) is left out. While one is under way the
 * page's script refreshes it every second (GET …/started) and reloads the page once all are done,
 * so the compute states and tables it shows are those the operations left.
 */
export function StartedOperations(props: { c: ConsoleContext; projectId: string }) {
  const ids = (props.c.req.query("ops") ?? "").split(",").filter(Boolean).slice(0, 10);
  const ops = ids.flatMap((id) => {
    try {
      return [getOperation(props.c.var.ctx, accountOf(props.c), props.projectId, id).operation];
    } catch (err) {
      if (err instanceof EmulatorError) return [];
      throw err;
    }
  });
  if (ops.length === 0) return null;
  const live = ops.some((o) => o.status === "running" || o.status === "scheduling");
  return (
    <p
      class="notice"
      role="status"
      id="started-operations"
      data-refresh={`/app/projects/${props.projectId}/started?ops=${ids.join(",")}`}
      data-live={String(live)}
      data-reload-when-done="true"
    >
      Started:{" "}
      {ops.map((o) => (
        <span data-started-operation={o.id}>
          {o.action} <span class={`tag state-${o.status}`}>{o.status}</span>{" "}
        </span>
      ))}
    </p>
  );
}
