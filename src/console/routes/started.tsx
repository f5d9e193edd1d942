import { getOperation } from "../../control-plane/operations/service.js";
import { accountOf, type ConsoleContext } from "./support.js";

/** The operations an action just started (`?ops=`), each with its current status. */
export function StartedOperations(props: { c: ConsoleContext; projectId: string }) {
  const ids = (props.c.req.query("ops") ?? "").split(",").filter(Boolean).slice(0, 10);
  if (ids.length === 0) return null;
  const ops = ids.map(
    (id) => getOperation(props.c.var.ctx, accountOf(props.c), props.projectId, id).operation,
  );
  return (
    <p class="notice" role="status">
      Started:{" "}
      {ops.map((o) => (
        <span data-started-operation={o.id}>
          {o.action} <span class={`tag state-${o.status}`}>{o.status}</span>{" "}
        </span>
      ))}
    </p>
  );
}
