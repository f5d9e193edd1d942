import { OPERATION_ACTIONS } from "../../control-plane/operations/rules.js";
import { ClockAdvanceRequest, FaultCreateRequest } from "../../emulator/schema.js";
import { armFault, clearFaults, listFaults, resetAccount } from "../../emulator/service.js";
import { iso } from "../../platform/clock.js";
import { ActionButton, Csrf, Layout, SelectField, TableHead, When } from "../views/layout.js";
import {
  accountOf,
  createConsoleRouter,
  formOf,
  numberField,
  pageOf,
  parse,
  redirectTo,
  run,
  unconfirmed,
} from "./support.js";

/** For testers: the account's clock (and its advance in manual mode), armed faults, and reset. */
const router = createConsoleRouter();
const PATH = "/emulator";

router.get(PATH, (c) => {
  const page = pageOf(c);
  const { clock } = c.var.ctx;
  const accountId = accountOf(c);
  const { faults } = listFaults(c.var.ctx, accountId);
  return c.html(
    <Layout title="Emulator" page={page}>
      <h1>Emulator</h1>
      <h2>Clock</h2>
      <p>
        Mode <strong>{clock.mode}</strong>; this account's time is{" "}
        <span data-clock>
          <When at={iso(clock.now(accountId))} />
        </span>
        .
      </p>
      {clock.mode === "manual" ? (
        <form method="post" action={`/app${PATH}/clock/advance`}>
          <Csrf token={page.csrf} />
          <label>
            Advance this account's clock by (seconds)
            <input name="seconds" type="number" min={1} max={31622400} value="60" required />
          </label>
          <button type="submit">Advance</button>
        </form>
      ) : (
        <p class="muted">
          The clock is real (NEON_EMULATOR_CLOCK=manual gives each account a clock it moves).
        </p>
      )}
      <h2>Armed faults</h2>
      <table>
        <TableHead columns={["Action", "Scope", "Remaining", "Message"]} />
        <tbody>
          {faults.map((f) => (
            <tr>
              <td>{f.action}</td>
              <td>{f.endpoint_id ?? f.project_id ?? "account"}</td>
              <td>{f.remaining}</td>
              <td>{f.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {faults.length === 0 && <p class="muted">No faults armed.</p>}
      <form method="post" action={`/app${PATH}/faults`}>
        <Csrf token={page.csrf} />
        <label>
          Fail the next
          <input name="count" type="number" min={1} max={10000} value="1" />
        </label>
        <SelectField label="operations of" name="action" options={OPERATION_ACTIONS} />
        <button type="submit">Arm fault</button>
      </form>{" "}
      {faults.length > 0 && (
        <ActionButton action={`/app${PATH}/faults/clear`} label="Clear all faults" csrf={page.csrf} />
      )}
      <h2>Reset</h2>
      <p>
        Deletes every project of this account with all it holds, its operations and faults. API keys stay.
      </p>
      <ActionButton
        action={`/app${PATH}/reset`}
        label="Reset this account"
        danger
        csrf={page.csrf}
        confirm="Delete every project of this account, with its branches, computes and data?"
      />
    </Layout>,
  );
});

router.post(`${PATH}/clock/advance`, async (c) => {
  const input = parse(ClockAdvanceRequest, { seconds: numberField((await formOf(c)).seconds) });
  const now = await c.var.advanceClock(accountOf(c), input.seconds);
  return redirectTo(c, `/app${PATH}`, `The clock now reads ${iso(now)}.`);
});

router.post(`${PATH}/faults`, async (c) => {
  const form = await formOf(c);
  const input = parse(FaultCreateRequest, { action: form.action, count: numberField(form.count) });
  const { fault } = armFault(c.var.ctx, accountOf(c), input);
  return redirectTo(c, `/app${PATH}`, `The next ${fault.remaining} ${fault.action} operations will fail.`);
});

router.post(`${PATH}/faults/clear`, (c) => {
  const { cleared } = clearFaults(c.var.ctx, accountOf(c));
  return redirectTo(c, `/app${PATH}`, `${cleared} faults cleared.`);
});

router.post(`${PATH}/reset`, async (c) => {
  const ask = unconfirmed(c, await formOf(c), "Reset this account: delete every project?", `/app${PATH}`);
  if (ask) return ask;
  const body = run(c, resetAccount(c.var.ctx, accountOf(c), 0, {}));
  return redirectTo(c, `/app${PATH}`, `${body.deleted_projects} projects deleted.`);
});

export default router;
