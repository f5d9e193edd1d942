import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "../accounts/table.js";
import { projects } from "../projects/table.js";

export const MEMBER_ROLES = ["admin", "member", "editor", "viewer", "collaborator"] as const;

/**
 * Who belongs to an organization: its account's user (admin, from the account's creation on) and
 * the users of other accounts who joined by invitation. Each account owns exactly one organization.
 */
export const orgMembers = sqliteTable(
  "org_members",
  {
    id: text("id").primaryKey(), // a UUID
    orgAccountId: text("org_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    role: text("role", { enum: MEMBER_ROLES }).notNull(),
    joinedAt: integer("joined_at").notNull(),
  },
  (t) => [uniqueIndex("org_members_user_idx").on(t.orgAccountId, t.userId)],
);

/** Invitations sent by an organization, pending and accepted (the public list shows both). */
export const orgInvitations = sqliteTable(
  "org_invitations",
  {
    id: text("id").primaryKey(), // a UUID
    orgAccountId: text("org_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: MEMBER_ROLES }).notNull(),
    invitedBy: text("invited_by").notNull(),
    invitedAt: integer("invited_at").notNull(),
  },
  (t) => [index("org_invitations_org_idx").on(t.orgAccountId, t.invitedAt)],
);

/** A project's owner offers it to whoever accepts the request (with its id) before it expires. */
export const projectTransferRequests = sqliteTable(
  "project_transfer_requests",
  {
    id: text("id").primaryKey(), // a UUID
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    acceptedAt: integer("accepted_at"),
  },
  (t) => [index("project_transfer_requests_project_idx").on(t.projectId)],
);
