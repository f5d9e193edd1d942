/**
 * Organizations: each account owns one, whose first member is the account's user (admin). Other
 * accounts' users join by invitation (an invitation to an email that has an account joins at
 * once, as on Neon); a member may transfer its own organization's projects into the organization.
 */
import type { Ctx } from "../../context.js";
import { badRequest, conflict, notAcceptable, notFound, unprocessable } from "../../errors.js";
import { PLANS } from "../../plans.js";
import { iso } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { requireOrganization, requireWritableProject } from "../access.js";
import { type AccountRow, getAccount, setSpendingLimit } from "../accounts/store.js";
import { revokeProjectKeys } from "../api-keys/store.js";
import { planOf } from "../limits.js";
import { revokeProjectPermissions } from "../permissions/store.js";
import { countAccountProjects, moveProject } from "../projects/store.js";
import { deleteAllProjectRestrictions } from "../vpc/store.js";
import { toInvitationJson, toMemberJson } from "./render.js";
import type { MembersInput } from "./schema.js";
import {
  cancelTransferRequests,
  countAdmins,
  deleteMember,
  findAccountByEmail,
  findMember,
  findOrgAccount,
  findTransferRequest,
  insertInvitation,
  insertMember,
  insertTransferRequest,
  isMember,
  listInvitations,
  listMembers,
  type MemberRow,
  type MemberWithEmail,
  markTransferAccepted,
  projectOwner,
  setMemberRole,
} from "./store.js";

/** Inside addAccount's transaction: the account's user is its organization's admin. */
export function addOwnerMember(ctx: Ctx, tx: Tx, account: AccountRow): void {
  insertMember(tx, {
    id: ctx.ids.uuid(),
    orgAccountId: account.id,
    userId: account.id,
    role: "admin",
    joinedAt: account.createdAt,
  });
}

const encodeCursor = (memberId: string) =>
  Buffer.from(JSON.stringify({ member_id: memberId })).toString("base64url");
function decodeCursor(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { member_id?: unknown };
    if (typeof value.member_id === "string") return value.member_id;
  } catch {
    // answered below
  }
  throw badRequest(`cursor "${cursor}" is not valid (use pagination.next)`);
}

const SORT_KEYS = {
  email: (m: MemberWithEmail) => m.email,
  role: (m: MemberWithEmail) => m.role,
  joined_at: (m: MemberWithEmail) => m.joinedAt,
} as const;

/** GET /organizations/{org_id}/members: sorted as asked (ties by id), paged with an opaque cursor. */
export function listOrgMembers(ctx: Ctx, accountId: string, orgId: string, query: MembersInput) {
  requireOrganization(ctx.db, accountId, orgId);
  const key = SORT_KEYS[query.sort_by];
  const sign = query.sort_order === "asc" ? 1 : -1;
  const rows = listMembers(ctx.db, accountId).sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return (x < y ? -sign : x > y ? sign : 0) || (a.id < b.id ? -1 : 1);
  });
  let start = 0;
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor);
    const at = rows.findIndex((m) => m.id === after);
    if (at < 0) throw badRequest(`cursor "${query.cursor}" is not valid (use pagination.next)`);
    start = at + 1;
  }
  const page = rows.slice(start, query.limit === undefined ? undefined : start + query.limit);
  const last = page[page.length - 1];
  const more = last !== undefined && start + page.length < rows.length;
  return {
    members: page.map((m) => ({ member: toMemberJson(m, orgId), user: { email: m.email } })),
    pagination: {
      ...(more ? { next: encodeCursor(last.id) } : {}),
      sort_by: query.sort_by,
      sort_order: query.sort_order,
    },
  };
}

function requireMember(tx: Tx, accountId: string, orgId: string, memberId: string): MemberRow {
  requireOrganization(tx, accountId, orgId);
  const member = findMember(tx, accountId, memberId);
  if (!member) throw notFound(`member ${memberId} not found in organization ${orgId}`);
  return member;
}

export function getOrgMember(ctx: Ctx, accountId: string, orgId: string, memberId: string) {
  return toMemberJson(requireMember(ctx.db, accountId, orgId, memberId), orgId);
}

/** PATCH: a new role; the organization always keeps an admin. */
export function updateOrgMember(
  ctx: Ctx,
  accountId: string,
  orgId: string,
  memberId: string,
  role: MemberRow["role"],
) {
  return ctx.db.transaction((tx) => {
    const member = requireMember(tx, accountId, orgId, memberId);
    if (member.role === "admin" && role !== "admin" && countAdmins(tx, accountId) === 1)
      throw conflict(`member ${memberId} is the last admin of organization ${orgId}; its role cannot change`);
    setMemberRole(tx, memberId, role);
    return toMemberJson({ ...member, role }, orgId);
  });
}

/** DELETE: the last admin cannot be removed. */
export function removeOrgMember(ctx: Ctx, accountId: string, orgId: string, memberId: string) {
  return ctx.db.transaction((tx) => {
    const member = requireMember(tx, accountId, orgId, memberId);
    if (member.role === "admin" && countAdmins(tx, accountId) === 1)
      throw conflict(`member ${memberId} is the last admin of organization ${orgId} and cannot be removed`);
    deleteMember(tx, memberId);
    return {};
  });
}

export function listOrgInvitations(ctx: Ctx, accountId: string, orgId: string) {
  requireOrganization(ctx.db, accountId, orgId);
  return { invitations: listInvitations(ctx.db, accountId).map((row) => toInvitationJson(row, orgId)) };
}

/** POST: one invitation per entry; an email that has an account joins as a member at once. */
export function createOrgInvitations(
  ctx: Ctx,
  accountId: string,
  orgId: string,
  invitations: { email: string; role: MemberRow["role"] }[],
) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, orgId);
    const now = ctx.clock.now(accountId);
    const created = invitations.map(({ email, role }) => {
      const row = {
        id: ctx.ids.uuid(),
        orgAccountId: accountId,
        email,
        role,
        invitedBy: accountId,
        invitedAt: now,
      };
      insertInvitation(tx, row);
      const user = findAccountByEmail(tx, email);
      if (user)
        insertMember(tx, {
          id: ctx.ids.uuid(),
          orgAccountId: accountId,
          userId: user.id,
          role,
          joinedAt: now,
        });
      return toInvitationJson(row, orgId);
    });
    return { invitations: created };
  });
}

/**
 * POST /organizations/{source_org_id}/projects/transfer: the caller's projects move, with all they
 * hold, to an organization the caller is a member of. Project-scoped keys of the source
 * organization stop working for them (they are revoked); every project is checked before any moves.
 */
export function transferProjects(
  ctx: Ctx,
  accountId: string,
  sourceOrgId: string,
  input: { destination_org_id: string; project_ids: string[] },
) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, sourceOrgId);
    const destination = findOrgAccount(tx, input.destination_org_id);
    if (!destination || !isMember(tx, destination.id, accountId))
      throw notFound(`organization ${input.destination_org_id} not found`);
    if (destination.id === accountId)
      throw badRequest(`the projects already belong to organization ${input.destination_org_id}`);
    const ids = [...new Set(input.project_ids)];
    for (const id of ids) requireWritableProject(tx, accountId, id);
    const target = getAccount(tx, destination.id);
    const limit = planOf(ctx, target.plan).projectsLimit;
    if (countAccountProjects(tx, target.id) + ids.length > limit)
      throw notAcceptable(
        `organization ${input.destination_org_id} can hold ${limit} projects on its plan; transfer fewer or upgrade it`,
      );
    const now = ctx.clock.now(accountId);
    for (const id of ids) handOver(tx, id, target.id, now);
    return {};
  });
}

/** POST /users/me/projects/transfer: from the caller's own organization (its "personal account" in Neon's older terms). */
export function transferProjectsFromUser(
  ctx: Ctx,
  accountId: string,
  input: { destination_org_id: string; project_ids: string[] },
) {
  return transferProjects(ctx, accountId, getAccount(ctx.db, accountId).orgId, input);
}

/** Spending limits exist on Neon's paid plans only; the emulator's free plan refuses them. */
function requireBillingOrg(tx: Tx, accountId: string, orgId: string): AccountRow {
  const account = requireOrganization(tx, accountId, orgId);
  if (!PLANS[account.plan].spendingLimit)
    throw unprocessable(
      `spending limits are available on paid plans only; organization ${orgId} is on the free plan`,
    );
  return account;
}

export function getSpendingLimit(ctx: Ctx, accountId: string, orgId: string) {
  return { spending_limit_cents: requireBillingOrg(ctx.db, accountId, orgId).spendingLimitCents };
}

/** Alert-only, as on Neon: nothing is suspended when spending passes it. */
export function setOrgSpendingLimit(ctx: Ctx, accountId: string, orgId: string, cents: number) {
  return ctx.db.transaction((tx) => {
    requireBillingOrg(tx, accountId, orgId);
    setSpendingLimit(tx, accountId, cents);
    return { spending_limit_cents: cents };
  });
}

/** Idempotent: clearing an unset limit succeeds too. */
export function clearOrgSpendingLimit(ctx: Ctx, accountId: string, orgId: string) {
  return ctx.db.transaction((tx) => {
    requireBillingOrg(tx, accountId, orgId);
    setSpendingLimit(tx, accountId, null);
    return {};
  });
}

/** Neon's default lifetime of a transfer request: 24 hours. */
export const TRANSFER_REQUEST_TTL_SECONDS = 86_400;

/** POST /projects/{p}/transfer_requests: an offer of the project, valid for `ttl_seconds`. */
export function createTransferRequest(ctx: Ctx, accountId: string, projectId: string, ttlSeconds?: number) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const now = ctx.clock.now(accountId);
    const row = {
      id: ctx.ids.uuid(),
      projectId,
      createdAt: now,
      expiresAt: now + (ttlSeconds ?? TRANSFER_REQUEST_TTL_SECONDS) * 1000,
      acceptedAt: null,
    };
    insertTransferRequest(tx, row);
    return {
      id: row.id,
      project_id: projectId,
      created_at: iso(row.createdAt),
      expires_at: iso(row.expiresAt),
    };
  });
}

/**
 * PUT /projects/{p}/transfer_requests/{id}: the caller takes the project into its organization
 * (`org_id`, if given, must be it). Once only, before it expires; other offers of the project
 * lapse (handOver).
 */
export function acceptTransferRequest(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  requestId: string,
  orgId?: string,
): void {
  ctx.db.transaction((tx) => {
    const owner = projectOwner(tx, projectId);
    const request = owner === undefined ? undefined : findTransferRequest(tx, projectId, requestId);
    if (owner === undefined || !request)
      throw notFound(`transfer request ${requestId} not found for project ${projectId}`);
    // The offer is the owner's: it expires on the owner's clock (each account has its own).
    const now = ctx.clock.now(owner);
    if (request.acceptedAt !== null) throw conflict(`transfer request ${requestId} was accepted already`);
    if (request.expiresAt <= now)
      throw badRequest(`transfer request ${requestId} expired at ${iso(request.expiresAt)}`);
    const target =
      orgId === undefined ? getAccount(tx, accountId) : requireOrganization(tx, accountId, orgId);
    if (owner === target.id)
      throw badRequest(`project ${projectId} belongs to organization ${target.orgId} already`);
    requireWritableProject(tx, owner, projectId);
    if (countAccountProjects(tx, target.id) + 1 > planOf(ctx, target.plan).projectsLimit)
      throw notAcceptable(`organization ${target.orgId} cannot own more projects on its plan`);
    markTransferAccepted(tx, requestId, now);
    handOver(tx, projectId, target.id, now);
  });
}

/**
 * A project changes hands with everything it holds; what bound it to its former organization does
 * not follow: its project-scoped keys, its sharing grants, other pending offers of it and its VPC
 * restrictions (they name the former organization's endpoints).
 */
function handOver(tx: Tx, projectId: string, toAccountId: string, now: number): void {
  moveProject(tx, projectId, toAccountId);
  revokeProjectKeys(tx, projectId, now);
  revokeProjectPermissions(tx, projectId, now);
  cancelTransferRequests(tx, projectId);
  deleteAllProjectRestrictions(tx, projectId);
}
