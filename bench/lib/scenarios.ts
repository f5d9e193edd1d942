import type autocannon from "autocannon";
import { type Api, parallel } from "./http.js";
import type { LoadOptions } from "./load.js";

export const BASE = "/api/v2";

interface ProjectCreated {
  project: { id: string };
  branch: { id: string };
  endpoints: { id: string }[];
}
interface BranchCreated {
  branch: { id: string };
  endpoints: { id: string }[];
}
interface EndpointList {
  endpoints: { id: string; type: string; branch_id: string }[];
}

export interface ProjectSetup {
  projectId: string;
  /** The default branch first, then the created ones. */
  branchIds: string[];
  endpointIds: string[];
}

/**
 * A project (its default branch comes with one read_write endpoint) plus `extraBranches`
 * branches, each with a read_write endpoint when `withEndpoints`, else none.
 */
export async function createProject(
  api: Api,
  extraBranches: number,
  withEndpoints = true,
  concurrency = 1,
): Promise<ProjectSetup> {
  const created = await api.expect<ProjectCreated>(201, "POST", `${BASE}/projects`, { project: {} });
  const out: ProjectSetup = {
    projectId: created.project.id,
    branchIds: [created.branch.id],
    endpointIds: created.endpoints.map((e) => e.id),
  };
  const body = { endpoints: withEndpoints ? [{ type: "read_write" }] : [] };
  await parallel(
    Array.from({ length: extraBranches }, (_, i) => i),
    concurrency,
    async () => {
      const b = await api.expect<BranchCreated>(
        201,
        "POST",
        `${BASE}/projects/${out.projectId}/branches`,
        body,
      );
      out.branchIds.push(b.branch.id);
      out.endpointIds.push(...b.endpoints.map((e) => e.id));
    },
  );
  return out;
}

export async function listEndpoints(api: Api, projectId: string): Promise<EndpointList["endpoints"]> {
  return (await api.expect<EndpointList>(200, "GET", `${BASE}/projects/${projectId}/endpoints`)).endpoints;
}

/** Deletes the project's endpoints matching `which`; returns how many. */
export async function deleteEndpoints(
  api: Api,
  projectId: string,
  which: (e: { type: string; branch_id: string }) => boolean,
): Promise<number> {
  const doomed = (await listEndpoints(api, projectId)).filter(which);
  await parallel(doomed, 8, async (e) => {
    await api.expect(200, "DELETE", `${BASE}/projects/${projectId}/endpoints/${e.id}`);
  });
  return doomed.length;
}

/**
 * POST /projects/{p}/endpoints creating read_only endpoints, round-robin over the branches.
 * read_only endpoints are allowed several per branch on the paid plan, so no request can
 * conflict and every run lasts its full duration with the project at its normal size.
 */
export function postReadOnlyLoad(
  base: Omit<LoadOptions, "path" | "connections">,
  projectId: string,
  branchIds: string[],
): Omit<LoadOptions, "connections"> {
  let next = 0;
  return {
    ...base,
    method: "POST",
    path: `${BASE}/projects/${projectId}/endpoints`,
    setupRequest: (req: autocannon.Request) => {
      const branch = branchIds[next++ % branchIds.length];
      return { ...req, body: JSON.stringify({ endpoint: { branch_id: branch, type: "read_only" } }) };
    },
  };
}

/**
 * POST /projects/{p}/endpoints creating read_write endpoints, one per branch of a pool of
 * branches without computes: each request takes the next unused branch, so none conflicts
 * as long as `amount` <= the pool.
 */
export function postReadWriteLoad(
  base: Omit<LoadOptions, "path">,
  projectId: string,
  pool: string[],
): LoadOptions {
  let next = 0;
  return {
    ...base,
    method: "POST",
    amount: pool.length,
    path: `${BASE}/projects/${projectId}/endpoints`,
    setupRequest: (req: autocannon.Request) => {
      const branch = pool[next++ % pool.length];
      return { ...req, body: JSON.stringify({ endpoint: { branch_id: branch, type: "read_write" } }) };
    },
  };
}

export interface AdvanceResult {
  /** Wall time of POST /_emulator/clock/advance {"seconds":604800}, milliseconds. */
  ms: number;
  endpoints: number;
  /** Endpoints woken through /connect right before the 7-day advance. */
  woken: number;
  /** Operations the advance created (check_availability, suspend_compute, ...), by action. */
  operations: Record<string, number>;
  /** When the advance request was sent and answered: process.hrtime microseconds (CPU-profile clock). */
  window: { from: number; to: number };
}

const hrUs = () => Number(process.hrtime.bigint() / 1000n);

interface OperationPage {
  operations: { action: string; created_at: string }[];
  pagination?: { cursor: string };
}

/** Newest-first pages of the project's operations, until one is not newer than `after` (ISO, same format). */
async function operationsSince(api: Api, projectId: string, after: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor: string | undefined;
  for (;;) {
    const q = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = await api.expect<OperationPage>(200, "GET", `${BASE}/projects/${projectId}/operations?${q}`);
    for (const op of page.operations) {
      if (op.created_at <= after) return counts;
      counts[op.action] = (counts[op.action] ?? 0) + 1;
    }
    if (page.operations.length === 0 || !page.pagination) return counts;
    cursor = page.pagination.cursor;
  }
}

/**
 * Against an emulator started with NEON_EMULATOR_CLOCK=manual: a project with 100 endpoints
 * (one read_write endpoint on each of 100 branches), brought to a lived-in state (all started,
 * auto-suspended, some woken and suspended again), then 30 endpoints woken right before the
 * timed 7-day advance, which therefore includes wake-ups, auto-suspends and 168 rounds of
 * hourly check_availability on 100 branches.
 */
export async function prepareAdvance(
  api: Api,
): Promise<{ setup: ProjectSetup; run: () => Promise<AdvanceResult> }> {
  const setup = await createProject(api, 99, true, 4);
  const advance = (seconds: number) => api.expect(200, "POST", "/_emulator/clock/advance", { seconds });
  const connect = (ids: string[]) =>
    parallel(ids, 4, async (id) => {
      await api.expect(200, "POST", `/_emulator/projects/${setup.projectId}/endpoints/${id}/connect`);
    });
  await advance(60); // everything created starts
  await advance(600); // auto-suspend (300 s default) puts every endpoint to idle
  await connect(setup.endpointIds.filter((_, i) => i % 3 === 0));
  await advance(120); // the woken ones are active again
  await connect(setup.endpointIds.filter((_, i) => i % 3 === 0)); // refreshes last_active
  await advance(1800); // and they suspend again
  const woken = setup.endpointIds.filter((_, i) => i % 10 < 3);
  await connect(woken);
  return {
    setup,
    run: async () => {
      const newest = await api.expect<OperationPage>(
        200,
        "GET",
        `${BASE}/projects/${setup.projectId}/operations?limit=1`,
      );
      const from = hrUs();
      const t0 = performance.now();
      await advance(604_800);
      const ms = performance.now() - t0;
      const to = hrUs();
      const operations = await operationsSince(api, setup.projectId, newest.operations[0]?.created_at ?? "");
      return {
        ms,
        endpoints: setup.endpointIds.length,
        woken: woken.length,
        operations,
        window: { from, to },
      };
    },
  };
}
