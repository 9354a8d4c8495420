/**
 * PostgreSQL as the service uses it: its own schema (the current one, the first of `search_path`
 * that exists), beside which a database may hold other applications' schemas. Kysely's migrator
 * reads the database through the dialect's introspector and takes the dialect adapter's migration
 * lock; both reached past the service's schema.
 */
import {
  type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE,
  type DialectAdapter, type Kysely, PostgresAdapter, PostgresDialect, PostgresIntrospector, type SchemaMetadata, type TableMetadata, sql,
} from 'kysely';

/**
 * `PostgresDialect` whose `db.introspection` sees the tables of `current_schema()` and no other's,
 * and whose migrator takes no lock of its own.
 */
export class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }

  override createAdapter(): DialectAdapter {
    return new SchemaTurnAdapter();
  }
}

/**
 * The migrator's lock is the migrations' turn (`SCHEMA_CHANGE_LOCK`, src/storage/migrate.ts), which
 * every migrator of the service runs inside. Kysely's own is one advisory lock for every Kysely
 * application of the database, waited for up to an hour (its `lock_timeout`, over the migrations'
 * 5 s): another application migrating its own schema held a start that long, saying nothing, and
 * the start held the service's other instances behind it (helper-72).
 */
class SchemaTurnAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}

  override async releaseMigrationLock(): Promise<void> {}
}

interface ColumnRow {
  schema: string;
  table: string;
  is_view: boolean;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  comment: string | null;
  auto_incrementing: boolean;
}

/**
 * Kysely's own introspector reads every schema's columns and names each table to
 * `pg_get_serial_sequence`, which looks the name up afresh: a table in another schema dropped
 * while the catalog is read fails it ('relation … does not exist', 42P01), and with it the
 * migrations of a start (CI saw it once, in a database shared by the tests' schemas). Reading our
 * own schema, whose changes wait for the migrations' lock, nothing else can fail it, and a database
 * shared with other applications is not read through.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<any>;

  constructor(db: Kysely<any>) {
    this.#db = db;
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    return new PostgresIntrospector(this.#db).getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select ns.nspname as schema, c.relname as table, c.relkind = 'v' as is_view, a.attname as column,
        a.attnotnull as not_null, a.atthasdef as has_default, typ.typname as type, typns.nspname as type_schema,
        col_description(c.oid, a.attnum) as comment, pg_get_serial_sequence(c.oid::regclass::text, a.attname) is not null as auto_incrementing
      from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace typns on typns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && (row.table === DEFAULT_MIGRATION_TABLE || row.table === DEFAULT_MIGRATION_LOCK_TABLE)) continue;
      let table = tables.get(row.table);
      if (!table) tables.set(row.table, table = { name: row.table, schema: row.schema, isView: row.is_view, columns: [] });
      table.columns.push({
        name: row.column, dataType: row.type, dataTypeSchema: row.type_schema, isNullable: !row.not_null,
        hasDefaultValue: row.has_default, isAutoIncrementing: row.auto_incrementing, ...(row.comment === null ? {} : { comment: row.comment }),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
