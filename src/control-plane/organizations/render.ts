import { iso } from "../../platform/clock.js";
import type { InvitationRow, MemberRow } from "./store.js";

export function toMemberJson(row: MemberRow, orgId: string) {
  return { id: row.id, user_id: row.userId, org_id: orgId, role: row.role, joined_at: iso(row.joinedAt) };
}

export function toInvitationJson(row: InvitationRow, orgId: string) {
  return {
    id: row.id,
    email: row.email,
    org_id: orgId,
    invited_by: row.invitedBy,
    invited_at: iso(row.invitedAt),
    role: row.role,
  };
}
