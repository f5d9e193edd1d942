/**
 * The schemas the schema dump is checked with (schema-dump.test.ts on a real server,
 * schema-dump-pg-dump.test.ts against pg_dump itself). Each needs the roles in ROLES.
 */

/** The roles the statements below name. */
export const ROLES = ["app_owner", "owner1", "reader", '"Mixed Case"', '"user"'];

/** A schema with one of each kind the dump covers; some objects depend on ones whose names sort later. */
export const SCHEMA = [
  "CREATE SCHEMA app AUTHORIZATION app_owner",
  "CREATE EXTENSION citext",
  "CREATE TYPE app.mood AS ENUM ('happy', 'sad', 'it''s complicated')",
  "CREATE DOMAIN app.email AS citext CHECK (VALUE ~ '^[^@]+@[^@]+$')",
  "CREATE TYPE app.point2 AS (x integer, y integer)",
  "CREATE SEQUENCE public.invoice_numbers START 1000",
  `CREATE FUNCTION public.next_invoice() RETURNS bigint LANGUAGE sql
     AS $$ SELECT nextval('public.invoice_numbers') $$`,
  `CREATE TABLE app.users (
     id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     email app.email NOT NULL UNIQUE,
     name text COLLATE "C" DEFAULT 'anonymous',
     mood app.mood DEFAULT 'happy',
     home app.point2,
     created_at timestamptz NOT NULL DEFAULT now(),
     CONSTRAINT users_name_length CHECK (length(name) < 100)
   )`,
  "ALTER TABLE app.users OWNER TO app_owner",
  `CREATE TABLE public.orders (
     id bigserial PRIMARY KEY,
     user_id integer NOT NULL REFERENCES app.users (id) ON DELETE CASCADE,
     invoice bigint DEFAULT public.next_invoice(),
     quantity integer NOT NULL,
     unit_price numeric(10, 2) NOT NULL,
     total numeric GENERATED ALWAYS AS (quantity * unit_price) STORED
   )`,
  "CREATE INDEX orders_user_idx ON public.orders (user_id)",
  "CREATE VIEW public.order_totals AS SELECT user_id, sum(total) AS total FROM public.orders GROUP BY user_id",
  "CREATE VIEW public.a_big_spenders AS SELECT user_id FROM public.order_totals WHERE total > 100",
  "CREATE MATERIALIZED VIEW public.order_counts AS SELECT user_id, count(*) AS n FROM public.orders GROUP BY user_id",
  "CREATE UNIQUE INDEX order_counts_user ON public.order_counts (user_id)",
  `CREATE FUNCTION public.an_order_count() RETURNS bigint LANGUAGE sql
     BEGIN ATOMIC SELECT count(*) FROM public.orders; END`,
  `CREATE FUNCTION app.touch() RETURNS trigger LANGUAGE plpgsql
     AS $$ BEGIN NEW.created_at := now(); RETURN NEW; END $$`,
  "CREATE TRIGGER users_touch BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app.touch()",
  "ALTER TABLE public.orders ENABLE ROW LEVEL SECURITY",
  "CREATE POLICY own_orders ON public.orders FOR SELECT TO app_owner USING (user_id > 0)",
  "COMMENT ON TABLE app.users IS 'People who order'",
  "COMMENT ON COLUMN app.users.email IS 'Where receipts go'",
  `CREATE TABLE public.events (id bigint NOT NULL, at date NOT NULL, payload jsonb DEFAULT '{}',
     CONSTRAINT events_id_positive CHECK (id > 0)) PARTITION BY RANGE (at)`,
  "CREATE TABLE public.events_2024 PARTITION OF public.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
  "CREATE TABLE public.events_other PARTITION OF public.events DEFAULT",
  "ALTER TABLE public.events ADD PRIMARY KEY (id, at)",
  "CREATE INDEX events_payload ON public.events USING gin (payload)",
  "CREATE TABLE public.base_log (at timestamptz DEFAULT now())",
  "CREATE TABLE public.child_log (message text) INHERITS (public.base_log)",
  "ALTER TABLE public.orders ADD CONSTRAINT orders_quantity_positive CHECK (quantity > 0) NOT VALID",
  "ALTER TABLE app.users DISABLE TRIGGER users_touch",
  "CREATE SEQUENCE app.countdown AS smallint INCREMENT BY -1 MINVALUE -100 CYCLE",
  "CREATE TYPE public.floatrange AS RANGE (subtype = float8, subtype_diff = float8mi)",
  `CREATE VIEW public.positive_orders WITH (security_barrier) AS
     SELECT id, quantity FROM public.orders WHERE quantity > 0 WITH LOCAL CHECK OPTION`,
  "CREATE POLICY no_big_orders ON public.orders AS RESTRICTIVE FOR INSERT WITH CHECK (quantity < 1000)",
  `CREATE PROCEDURE app.reset_mood(who integer) LANGUAGE sql
     AS $$ UPDATE app.users SET mood = 'happy' WHERE id = who $$`,
  "CREATE RULE orders_no_delete AS ON DELETE TO public.orders WHERE old.quantity > 100 DO INSTEAD NOTHING",
  "COMMENT ON FUNCTION public.next_invoice() IS 'Invoice numbers from 1000'",
  "CREATE UNLOGGED TABLE public.scratch (v text) WITH (fillfactor = 70)",
  "ALTER TABLE public.orders ALTER COLUMN quantity SET STATISTICS 500",
  "ALTER TABLE app.users ALTER COLUMN name SET STORAGE EXTERNAL",
  "ALTER TABLE app.users ALTER COLUMN name SET COMPRESSION pglz",
  "ALTER TABLE public.orders ALTER COLUMN user_id SET (n_distinct = 100)",
  "ALTER TABLE public.scratch REPLICA IDENTITY FULL",
  "CREATE AGGREGATE public.total_quantity(integer) (SFUNC = int4pl, STYPE = integer, INITCOND = '0', PARALLEL = SAFE)",
  "CREATE AGGREGATE app.longest(text) (SFUNC = text_larger, STYPE = text, SORTOP = >)",
  "CREATE AGGREGATE public.row_count(*) (SFUNC = int8inc, STYPE = bigint, INITCOND = '0')",
  "COMMENT ON AGGREGATE public.total_quantity(integer) IS 'Sum of quantities'",
  "ALTER TABLE public.orders CLUSTER ON orders_user_idx",
  "ALTER TABLE app.users CLUSTER ON users_pkey",
  "ALTER TABLE app.users REPLICA IDENTITY USING INDEX users_email_key",
  "ALTER TABLE public.orders FORCE ROW LEVEL SECURITY",
];

/**
 * Grants and revokes on each kind of object, default privileges, and a grant made by a role other
 * than the owner; run in a database owner1 owns.
 */
export const PRIVILEGES = [
  `SET ROLE owner1`,
  `CREATE SCHEMA app`,
  `CREATE TABLE app.items (id int PRIMARY KEY, name text, secret text)`,
  `CREATE TABLE public."My Table" (x int)`,
  `CREATE VIEW app.v AS SELECT id, name FROM app.items`,
  `CREATE SEQUENCE app.s`,
  `CREATE FUNCTION app.f(a int, b text) RETURNS int LANGUAGE sql AS 'select 1'`,
  `CREATE PROCEDURE app.p(x int) LANGUAGE sql AS 'select 1'`,
  `CREATE TYPE app.mood AS ENUM ('a', 'b')`,
  `CREATE DOMAIN app.pos AS int CHECK (VALUE > 0)`,
  `CREATE AGGREGATE app.agg(int) (sfunc = int4pl, stype = int)`,
  `GRANT USAGE ON SCHEMA app TO reader`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA app TO reader`,
  `GRANT SELECT, INSERT ON TABLE app.items TO "Mixed Case" WITH GRANT OPTION`,
  `GRANT UPDATE (name), SELECT (name, secret) ON app.items TO "user"`,
  `GRANT ALL ON public."My Table" TO reader`,
  `REVOKE TRUNCATE ON public."My Table" FROM owner1`,
  `REVOKE ALL ON FUNCTION app.f(int, text) FROM PUBLIC`,
  `GRANT EXECUTE ON FUNCTION app.f(int, text) TO reader`,
  `GRANT EXECUTE ON PROCEDURE app.p(int) TO "user"`,
  `GRANT USAGE ON SEQUENCE app.s TO reader`,
  `REVOKE USAGE ON TYPE app.mood FROM PUBLIC`,
  `GRANT USAGE ON DOMAIN app.pos TO reader`,
  `REVOKE ALL ON FUNCTION app.agg(int) FROM PUBLIC`,
  `RESET ROLE`,
  `GRANT CREATE ON SCHEMA public TO reader`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE owner1 IN SCHEMA app GRANT SELECT ON TABLES TO reader`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE owner1 REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE owner1 GRANT USAGE ON SEQUENCES TO reader`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE owner1 IN SCHEMA app GRANT USAGE ON TYPES TO "user"`,
  `ALTER SCHEMA public OWNER TO owner1`,
  `SET ROLE owner1`,
  `CREATE TABLE public.serials (id serial, ident int GENERATED ALWAYS AS IDENTITY, v text)`,
  `GRANT SELECT, UPDATE ON SEQUENCE public.serials_id_seq TO reader`,
  `GRANT USAGE ON SEQUENCE public.serials_ident_seq TO "user"`,
  `GRANT SELECT ON public.serials TO PUBLIC`,
  `REVOKE ALL ON public.serials FROM owner1`,
  `GRANT SELECT ON public.serials TO owner1`,
  `CREATE MATERIALIZED VIEW app.mv AS SELECT 1 AS one`,
  `GRANT SELECT ON app.mv TO reader`,
  `GRANT SELECT (name) ON app.v TO "user"`,
  `CREATE TYPE app.pair AS (a int, b text)`,
  `GRANT USAGE ON TYPE app.pair TO reader`,
  `CREATE TYPE app.r AS RANGE (subtype = float8)`,
  `REVOKE ALL ON TYPE app.r FROM PUBLIC`,
  `CREATE TABLE app.parted (k int, v text) PARTITION BY RANGE (k)`,
  `CREATE TABLE app.parted_1 PARTITION OF app.parted FOR VALUES FROM (0) TO (10)`,
  `GRANT INSERT ON app.parted TO reader`,
  `GRANT TRIGGER, REFERENCES ON app.parted_1 TO reader`,
  `RESET ROLE`,
  `GRANT USAGE ON SCHEMA app TO "Mixed Case"`,
  `SET ROLE "Mixed Case"`,
  `GRANT SELECT ON app.items TO "user"`,
  `RESET ROLE`,
  `CREATE SCHEMA "Other" AUTHORIZATION "Mixed Case"`,
  `GRANT ALL ON SCHEMA "Other" TO PUBLIC`,
];

/** Functions and procedures with every attribute pg_dump writes when it is not the default. */
export const FUNCTIONS = [
  `CREATE FUNCTION public.add(a integer, b integer DEFAULT 1) RETURNS integer LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN a + b`,
  `CREATE FUNCTION public.setof_things(n int) RETURNS SETOF int LANGUAGE sql STABLE ROWS 5 COST 7 AS $$ SELECT generate_series(1, n) $$`,
  `CREATE FUNCTION public.secure() RETURNS text LANGUAGE plpgsql SECURITY DEFINER LEAKPROOF SET search_path = "$user", public, pg_temp SET work_mem = '64MB' AS $f$ BEGIN RETURN 'it''s $$ here'; END $f$`,
  `CREATE FUNCTION public.tbl(OUT x int, OUT y text) RETURNS SETOF record LANGUAGE sql PARALLEL RESTRICTED AS 'SELECT 1, ''a'''`,
  `CREATE FUNCTION public.win() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
  `CREATE PROCEDURE public.proc(INOUT x int, y text DEFAULT 'z') LANGUAGE plpgsql AS $$ BEGIN x := x + 1; END $$`,
  `CREATE FUNCTION public."Weird Name"(v anyelement) RETURNS anyelement LANGUAGE sql AS 'SELECT v'`,
  `CREATE FUNCTION public.body2(a int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT a * 2; SELECT a * 3; END`,
];

/**
 * Names that need quoting, comments on each kind of object, and the kinds of keys, indexes,
 * triggers and partitions apps make.
 */
export const NAMES = [
  `CREATE SCHEMA "Sales"`,
  `COMMENT ON SCHEMA "Sales" IS 'the sales schema'`,
  `CREATE TABLE "Sales"."Customer Accounts" ("Id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "Full Name" text NOT NULL, email text UNIQUE, score numeric(5,2) CHECK (score >= 0), created timestamptz DEFAULT now())`,
  `COMMENT ON TABLE "Sales"."Customer Accounts" IS 'Accounts'`,
  `COMMENT ON COLUMN "Sales"."Customer Accounts"."Full Name" IS 'name of it'`,
  `CREATE TABLE "Sales".orders (id serial PRIMARY KEY, account bigint REFERENCES "Sales"."Customer Accounts"("Id") ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED, amount int, note text, CONSTRAINT amount_positive CHECK (amount > 0) NOT VALID)`,
  `COMMENT ON CONSTRAINT amount_positive ON "Sales".orders IS 'positive amounts'`,
  `CREATE INDEX orders_amount_idx ON "Sales".orders (amount) INCLUDE (note) WHERE amount > 10`,
  `CREATE INDEX orders_lower_note ON "Sales".orders (lower(note))`,
  `COMMENT ON INDEX "Sales".orders_lower_note IS 'lower note'`,
  `CREATE TABLE public.rooms (room int, during tstzrange, EXCLUDE USING gist (during WITH &&))`,
  `CREATE FUNCTION "Sales".audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
  `CREATE TRIGGER orders_audit AFTER INSERT OR UPDATE OF amount ON "Sales".orders FOR EACH ROW WHEN (NEW.amount > 100) EXECUTE FUNCTION "Sales".audit()`,
  `CREATE TRIGGER orders_stmt AFTER DELETE ON "Sales".orders FOR EACH STATEMENT EXECUTE FUNCTION "Sales".audit()`,
  `COMMENT ON TRIGGER orders_audit ON "Sales".orders IS 'audit trigger'`,
  `CREATE TYPE "Sales".status AS ENUM ('new', 'paid')`,
  `COMMENT ON TYPE "Sales".status IS 'order status'`,
  `CREATE DOMAIN public.nonempty AS text NOT NULL DEFAULT 'x' CONSTRAINT nonempty_check CHECK (VALUE <> '')`,
  `CREATE VIEW "Sales"."Big Orders" AS SELECT id, amount FROM "Sales".orders WHERE amount > 1000`,
  `COMMENT ON VIEW "Sales"."Big Orders" IS 'big'`,
  `COMMENT ON COLUMN "Sales"."Big Orders".amount IS 'the amount'`,
  `CREATE TABLE public.measurements (city int, logdate date, peak int) PARTITION BY RANGE (logdate)`,
  `CREATE TABLE public.m2024 PARTITION OF public.measurements FOR VALUES FROM ('2024-01-01') TO ('2025-01-01') PARTITION BY LIST (city)`,
  `CREATE TABLE public.m2024_c1 PARTITION OF public.m2024 FOR VALUES IN (1)`,
  `ALTER TABLE public.measurements ADD UNIQUE (city, logdate)`,
  `CREATE POLICY sees_own ON "Sales".orders FOR ALL TO PUBLIC USING (account IS NOT NULL)`,
  `ALTER TABLE "Sales".orders ENABLE ROW LEVEL SECURITY`,
  `CREATE RULE "Sales_rule" AS ON UPDATE TO "Sales".orders DO ALSO NOTIFY orders`,
  `COMMENT ON FUNCTION "Sales".audit() IS 'audit fn'`,
  `CREATE SEQUENCE public.ticket START 5 INCREMENT 5 MAXVALUE 1000 CACHE 10`,
  `CREATE TABLE public.tickets (n int DEFAULT nextval('public.ticket'))`,
  `CREATE UNIQUE INDEX tickets_n ON public.tickets (n)`,
  `ALTER TABLE public.tickets ADD CONSTRAINT tickets_n_key UNIQUE USING INDEX tickets_n`,
  `CREATE MATERIALIZED VIEW public.mv2 AS SELECT count(*) FROM public.tickets`,
  `CREATE AGGREGATE public."My Agg"(int) (sfunc = int4pl, stype = int)`,
  `COMMENT ON AGGREGATE public."My Agg"(int) IS 'agg'`,
  `CREATE TYPE public."Pair" AS (a int, "B b" text)`,
  `COMMENT ON COLUMN public."Pair"."B b" IS 'col b'`,
  `COMMENT ON TYPE public."Pair" IS 'pair'`,
  `COMMENT ON POLICY sees_own ON "Sales".orders IS 'pol'`,
  `COMMENT ON RULE "Sales_rule" ON "Sales".orders IS 'rule'`,
  `COMMENT ON DOMAIN public.nonempty IS 'dom'`,
  `COMMENT ON SEQUENCE public.ticket IS 'seq'`,
  `COMMENT ON MATERIALIZED VIEW public.mv2 IS 'mv'`,
  `COMMENT ON CONSTRAINT "Customer Accounts_email_key" ON "Sales"."Customer Accounts" IS 'uniq'`,
];

/**
 * An app's schema as an ORM's migrations make it (Prisma's names and types), with publications:
 * of some tables, one with a column list and a row filter, of a schema's tables, of all tables.
 */
export const APP = [
  `CREATE TYPE "Role" AS ENUM ('USER', 'ADMIN')`,
  `CREATE TABLE "_prisma_migrations" ("id" VARCHAR(36) NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ, "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ, "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0, CONSTRAINT "_prisma_migrations_pkey" PRIMARY KEY ("id"))`,
  `CREATE TABLE "User" ("id" SERIAL NOT NULL, "email" TEXT NOT NULL, "name" TEXT, "role" "Role" NOT NULL DEFAULT 'USER', "tags" TEXT[] DEFAULT ARRAY[]::TEXT[], "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "uuid" UUID NOT NULL DEFAULT gen_random_uuid(), "meta" JSONB, CONSTRAINT "User_pkey" PRIMARY KEY ("id"))`,
  `CREATE TABLE "Post" ("id" SERIAL NOT NULL, "title" VARCHAR(200) NOT NULL, "content" TEXT, "published" BOOLEAN NOT NULL DEFAULT false, "authorId" INTEGER NOT NULL, "price" DECIMAL(65,30), "views" BIGINT NOT NULL DEFAULT 0, CONSTRAINT "Post_pkey" PRIMARY KEY ("id"))`,
  `CREATE UNIQUE INDEX "User_email_key" ON "User"("email")`,
  `CREATE INDEX "Post_authorId_published_idx" ON "Post"("authorId", "published" DESC)`,
  `ALTER TABLE "Post" ADD CONSTRAINT "Post_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE`,
  `CREATE TABLE "_PostToTag" ("A" INTEGER NOT NULL, "B" INTEGER NOT NULL, CONSTRAINT "_PostToTag_AB_pkey" PRIMARY KEY ("A","B"))`,
  `CREATE INDEX "_PostToTag_B_index" ON "_PostToTag"("B")`,
  `CREATE TABLE "accounts" ("id" uuid PRIMARY KEY DEFAULT gen_random_uuid(), "balance" numeric(12,2) NOT NULL DEFAULT '0.00', "user_id" integer REFERENCES "User"("id") ON DELETE SET NULL, "created_at" timestamp with time zone DEFAULT now() NOT NULL, "data" bytea, "interval_col" interval, "t" time without time zone, "d" double precision DEFAULT 1.5, "r" real, "smol" smallint, "chr" char(3), "bits" bit varying(8), "inet_col" inet, "pt" point)`,
  `CREATE INDEX accounts_lower_idx ON accounts USING hash (id)`,
  `CREATE INDEX accounts_brin ON accounts USING brin (created_at)`,
  `CREATE VIEW user_posts AS SELECT u.email, count(p.id) AS n FROM "User" u LEFT JOIN "Post" p ON p."authorId" = u.id GROUP BY u.email`,
  `CREATE SEQUENCE order_seq AS integer`,
  `CREATE PUBLICATION app_pub FOR TABLE "User", "Post"`,
  `CREATE PUBLICATION all_pub FOR ALL TABLES WITH (publish = 'insert')`,
];

/**
 * Collations of the libc and builtin providers (PGlite has no ICU), used by columns and an index;
 * extended statistics.
 */
export const COLLATIONS = [
  `CREATE COLLATION public.c_copy FROM "C"`,
  `CREATE COLLATION public.posix_split (lc_collate = 'C', lc_ctype = 'POSIX')`,
  `CREATE SCHEMA texts`,
  `CREATE COLLATION texts."Plain" (provider = libc, locale = 'C')`,
  `COMMENT ON COLLATION texts."Plain" IS 'plain'`,
  `CREATE TABLE texts.words (w text COLLATE texts."Plain", v text COLLATE public.c_copy)`,
  `CREATE INDEX words_w ON texts.words (w COLLATE public.posix_split)`,
  `CREATE COLLATION public.b (provider = builtin, locale = 'C.UTF-8')`,
  `CREATE TABLE public.t (x text COLLATE public.b)`,
  `CREATE TABLE public.addr (city text, zip text, state text)`,
  `CREATE STATISTICS public.addr_dep (dependencies, ndistinct) ON city, zip FROM public.addr`,
  `CREATE STATISTICS public.addr_mcv ON city, state, lower(zip) FROM public.addr`,
  `ALTER STATISTICS public.addr_mcv SET STATISTICS 500`,
  `COMMENT ON STATISTICS public.addr_dep IS 'dep stats'`,
];

/**
 * Foreign servers (with a type and version), user mappings, a foreign table with options, a
 * column's options and a check; then a partitioned table (no access method) before a plain one.
 */
export const FOREIGN = [
  `CREATE EXTENSION file_fdw`,
  `CREATE SERVER files FOREIGN DATA WRAPPER file_fdw`,
  `CREATE SERVER "Other Files" TYPE 'csv' VERSION '1.0' FOREIGN DATA WRAPPER file_fdw`,
  `COMMENT ON SERVER files IS 'the files'`,
  `CREATE USER MAPPING FOR reader SERVER files`,
  `CREATE USER MAPPING FOR PUBLIC SERVER "Other Files"`,
  `CREATE FOREIGN TABLE public.passwd (name text NOT NULL, pw text OPTIONS (force_not_null 'true'), uid int CHECK (uid >= 0)) SERVER files OPTIONS (filename '/etc/passwd', format 'csv', delimiter ':')`,
  `COMMENT ON FOREIGN TABLE public.passwd IS 'users'`,
  `GRANT SELECT ON public.passwd TO reader`,
  `GRANT USAGE ON FOREIGN SERVER files TO reader`,
  `CREATE TABLE public.a_parted (k int) PARTITION BY RANGE (k)`,
  `CREATE TABLE public.b_plain (k int)`,
];

/**
 * Text search dictionaries and configurations (one copied from a built-in, with unaccent's
 * dictionary mapped in), used by a generated column.
 */
export const TEXT_SEARCH = [
  `CREATE EXTENSION unaccent`,
  `CREATE TEXT SEARCH CONFIGURATION public.fr_unaccent (COPY = french)`,
  `ALTER TEXT SEARCH CONFIGURATION public.fr_unaccent ALTER MAPPING FOR hword, hword_part, word WITH unaccent, french_stem`,
  `CREATE TEXT SEARCH DICTIONARY public.my_simple (TEMPLATE = pg_catalog.simple, STOPWORDS = english, accept = false)`,
  `CREATE TEXT SEARCH CONFIGURATION public."My Config" (PARSER = default)`,
  `ALTER TEXT SEARCH CONFIGURATION public."My Config" ADD MAPPING FOR asciiword WITH public.my_simple`,
  `COMMENT ON TEXT SEARCH CONFIGURATION public.fr_unaccent IS 'french without accents'`,
  `COMMENT ON TEXT SEARCH DICTIONARY public.my_simple IS 'simple dict'`,
  `CREATE TABLE public.docs (body text, tsv tsvector GENERATED ALWAYS AS (to_tsvector('public.fr_unaccent', body)) STORED)`,
];
