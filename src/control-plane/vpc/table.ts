import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../accounts/table.js";
import { projects } from "../projects/table.js";

/**
 * Private Networking, as records only: VPC endpoints assigned to an organization per region, and
 * the projects restricted to them. Nothing in the emulator's networking changes because of them.
 */
export const orgVpcEndpoints = sqliteTable(
  "org_vpc_endpoints",
  {
    orgAccountId: text("org_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    vpcEndpointId: text("vpc_endpoint_id").notNull(),
    regionId: text("region_id").notNull(),
    label: text("label").notNull(),
    createdAt: integer("created_at").notNull(),
    /** Neon: a VPC endpoint deleted from an organization cannot be added back. */
    deletedAt: integer("deleted_at"),
  },
  (t) => [primaryKey({ columns: [t.orgAccountId, t.vpcEndpointId] })],
);

export const projectVpcEndpoints = sqliteTable(
  "project_vpc_endpoints",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    vpcEndpointId: text("vpc_endpoint_id").notNull(),
    label: text("label").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.vpcEndpointId] })],
);
