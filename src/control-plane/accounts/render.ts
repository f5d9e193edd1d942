import { PLANS, type Plan } from "../../plans.js";
import { iso } from "../../platform/clock.js";
import type { AccountRow } from "./store.js";

/** GET /users/me: the account seen as the user the key belongs to. */
export function toCurrentUserJson(a: AccountRow, plan: Plan) {
  const [login] = a.email.split("@");
  return {
    active_seconds_limit: plan.activeSecondsLimit,
    auth_accounts: [
      { email: a.email, image: "", login: login ?? a.email, name: a.name, provider: "keycloak" as const },
    ],
    email: a.email,
    id: a.id,
    image: "",
    login: login ?? a.email,
    name: a.name,
    last_name: "",
    projects_limit: plan.projectsLimit,
    branches_limit: plan.branchesLimit,
    max_autoscaling_limit: plan.maxAutoscalingCu,
    plan: plan.subscriptionType,
  };
}

/** The account's organization, as /users/me/organizations lists it. */
export function toOrganizationJson(a: AccountRow) {
  const at = iso(a.createdAt);
  return {
    id: a.orgId,
    name: a.name,
    handle: a.orgId,
    plan: PLANS[a.plan].subscriptionType,
    created_at: at,
    managed_by: "console",
    updated_at: at,
  };
}

/** An account as the emulator's account routes show it. */
export function toAccountJson(a: AccountRow) {
  return { id: a.id, org_id: a.orgId, name: a.name, email: a.email, plan: a.plan };
}
