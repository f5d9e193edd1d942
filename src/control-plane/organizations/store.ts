import { and, asc, eq, isNull, ne, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { accounts } from "../accounts/table.js";
import { projects } from "../projects/table.js";
import { orgInvitations, orgMembers, projectTransferRequests } from "./table.js";

export type MemberRow = typeof orgMembers.$inferSelect;
export type InvitationRow = typeof orgInvitations.$inferSelect;
export type MemberWithEmail = MemberRow & { email: string };

export function insertMember(tx: Tx, row: MemberRow): void {
  tx.insert(orgMembers).values(row).onConflictDoNothing().run();
}

export function listMembers(tx: Tx, orgAccountId: string): MemberWithEmail[] {
  return tx
    .select({
      id: orgMembers.id,
      orgAccountId: orgMembers.orgAccountId,
      userId: orgMembers.userId,
      role: orgMembers.role,
      joinedAt: orgMembers.joinedAt,
      email: accounts.email,
    })
    .from(orgMembers)
    .innerJoin(accounts, eq(accounts.id, orgMembers.userId))
    .where(eq(orgMembers.orgAccountId, orgAccountId))
    .all();
}

export function findMember(tx: Tx, orgAccountId: string, memberId: string): MemberRow | undefined {
  return tx
    .select()
    .from(orgMembers)
    .where(and(eq(orgMembers.orgAccountId, orgAccountId), eq(orgMembers.id, memberId)))
    .get();
}

export function countAdmins(tx: Tx, orgAccountId: string): number {
  return tx
    .select()
    .from(orgMembers)
    .where(and(eq(orgMembers.orgAccountId, orgAccountId), eq(orgMembers.role, "admin")))
    .all().length;
}

export function setMemberRole(tx: Tx, memberId: string, role: MemberRow["role"]): void {
  tx.update(orgMembers).set({ role }).where(eq(orgMembers.id, memberId)).run();
}

export function deleteMember(tx: Tx, memberId: string): void {
  tx.delete(orgMembers).where(eq(orgMembers.id, memberId)).run();
}

/** Whether the user belongs to the organization. */
export function isMember(tx: Tx, orgAccountId: string, userId: string): boolean {
  return (
    tx
      .select({ id: orgMembers.id })
      .from(orgMembers)
      .where(and(eq(orgMembers.orgAccountId, orgAccountId), eq(orgMembers.userId, userId)))
      .get() !== undefined
  );
}

export function insertInvitation(tx: Tx, row: InvitationRow): void {
  tx.insert(orgInvitations).values(row).run();
}

export function listInvitations(tx: Tx, orgAccountId: string): InvitationRow[] {
  return tx
    .select()
    .from(orgInvitations)
    .where(eq(orgInvitations.orgAccountId, orgAccountId))
    .orderBy(asc(orgInvitations.invitedAt), sql`rowid`)
    .all();
}

/** The first account (oldest) whose user has this email: an invitation to it joins at once. */
export function findAccountByEmail(tx: Tx, email: string): { id: string } | undefined {
  return tx
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.email, email))
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .get();
}

/** An account's organization by its id (the org id is the account's `org_id`). */
export function findOrgAccount(tx: Tx, orgId: string): { id: string } | undefined {
  return tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.orgId, orgId)).get();
}

/** Reset of an account: its invitations and every member but its own user go. */
export function clearOrganization(tx: Tx, orgAccountId: string): void {
  tx.delete(orgInvitations).where(eq(orgInvitations.orgAccountId, orgAccountId)).run();
  tx.delete(orgMembers)
    .where(and(eq(orgMembers.orgAccountId, orgAccountId), ne(orgMembers.userId, orgAccountId)))
    .run();
}

export type TransferRequestRow = typeof projectTransferRequests.$inferSelect;

export function insertTransferRequest(tx: Tx, row: TransferRequestRow): void {
  tx.insert(projectTransferRequests).values(row).run();
}

export function findTransferRequest(tx: Tx, projectId: string, id: string): TransferRequestRow | undefined {
  return tx
    .select()
    .from(projectTransferRequests)
    .where(and(eq(projectTransferRequests.projectId, projectId), eq(projectTransferRequests.id, id)))
    .get();
}

export function markTransferAccepted(tx: Tx, id: string, at: number): void {
  tx.update(projectTransferRequests).set({ acceptedAt: at }).where(eq(projectTransferRequests.id, id)).run();
}

/** The account a project belongs to, whoever asks (a transfer request is accepted by another account). */
export function projectOwner(tx: Tx, projectId: string): string | undefined {
  return tx.select({ owner: projects.accountId }).from(projects).where(eq(projects.id, projectId)).get()
    ?.owner;
}

/** Offers of a project not yet accepted are void once it changes hands. */
export function cancelTransferRequests(tx: Tx, projectId: string): void {
  tx.delete(projectTransferRequests)
    .where(and(eq(projectTransferRequests.projectId, projectId), isNull(projectTransferRequests.acceptedAt)))
    .run();
}
