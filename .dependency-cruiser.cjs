/**
 * The direction of dependencies in src/ (npm run lint). Inside a resource folder of
 * src/control-plane: routes -> service -> {rules, store, render, access}; stores never import
 * services; rules are pure. Across the tree: platform/ is the floor, the HTTP layer sits on top,
 * and nothing below it speaks HTTP.
 */
const RESOURCE = "^src/control-plane/[^/]+/";
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "An import cycle makes module order matter and hides which layer owns what.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "lower-layers-never-import-services-or-routes",
      comment: "Stores, rules, renderers, tables, schemas and access lookups sit below the services.",
      severity: "error",
      from: { path: `(${RESOURCE}(store|rules|render|table|schema)\\.ts$)|^src/control-plane/(access|schema)\\.ts$` },
      to: { path: "(/service\\.ts$)|(/routes/)" },
    },
    {
      name: "rules-are-pure",
      comment: "rules.ts holds checks and transitions: no database, no tables, no stores.",
      severity: "error",
      from: { path: `${RESOURCE}rules\\.ts$` },
      to: {
        dependencyTypesNot: ["type-only"],
        path: "(/store\\.ts$)|(/table\\.ts$)|(/access\\.ts$)|(^src/platform/)|(node_modules/(better-sqlite3|drizzle-orm)/)",
      },
    },
    {
      name: "services-never-import-routes",
      severity: "error",
      from: { path: "(/service\\.ts$)|(^src/(worker|seed|compute|platform|cli)/)" },
      to: { path: "/routes/" },
    },
    {
      name: "routes-call-services",
      comment: "A route validates input, calls one service function and answers: no tables or stores.",
      severity: "error",
      from: { path: "/routes/" },
      to: {
        path: "(/store\\.ts$)|(/table\\.ts$)|(/access\\.ts$)|(^src/platform/(db|sql|statements)\\.ts$)|(node_modules/(better-sqlite3|drizzle-orm)/)",
      },
    },
    {
      name: "only-the-http-layer-speaks-http",
      comment:
        "Services, the worker, the seed and the platform are callable without Hono (the console, the front door). The console is an HTTP layer: its views render with Hono's JSX.",
      severity: "error",
      from: { path: "^src/", pathNot: "(^src/http/)|(/routes/)|(^src/console/views/)|(^src/app\\.ts$)|(^src/main\\.ts$)" },
      to: { path: "(^src/http/)|(node_modules/hono/)|(node_modules/@hono/node-server/)" },
    },
    {
      name: "platform-is-the-floor",
      comment: "platform/ (db, clock, ids, caches) knows nothing of the resources built on it.",
      severity: "error",
      from: { path: "^src/platform/" },
      to: { path: "^src/(control-plane|http|worker|emulator|compute|seed|cli|front-door)/" },
    },
    {
      name: "the-front-door-speaks-postgres-only",
      comment:
        "front-door/ is the Postgres protocol: what it needs of the control plane, the worker and the driver comes through DoorServices (wired in runtime.ts); it imports no store, table, worker or driver.",
      severity: "error",
      from: { path: "^src/front-door/" },
      to: {
        dependencyTypesNot: ["type-only"],
        path: "(^src/(control-plane|worker|compute|emulator|seed|http)/)|(node_modules/(better-sqlite3|drizzle-orm)/)",
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
