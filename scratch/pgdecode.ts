import pg from 'pg';
pg.types.setTypeParser(20, (v: string) => Number(v));
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', max: 4 });
await pool.query('drop schema if exists scratch_dec cascade; create schema scratch_dec');
await pool.query(`set search_path to scratch_dec`);
const c = await pool.connect();
await c.query(`set search_path to scratch_dec;
create table users (id bigint primary key, username text, nickname text, published_posts int);
create table categories (id bigint primary key, name text);
create table posts (id bigserial primary key, author_id bigint, category_id bigint, title text, excerpt text, status text, like_count int, comment_count int, view_count int, created_at bigint, updated_at bigint);
create index on posts (author_id, status, created_at desc, id desc) include (category_id, title, excerpt, like_count, comment_count, view_count, updated_at);
insert into users values (1, 'alice', 'Alice', 1000);
insert into categories values (1,'Photography'),(2,'Travel'),(3,'Food');
insert into posts (author_id, category_id, title, excerpt, status, like_count, comment_count, view_count, created_at, updated_at)
 select 1, 1 + i % 3, 'Post number ' || i, 'Shot at 6:40 with a 35mm lens. The fog lifted just as the ferries started running, and the light turned <b>gold</b> for about four…', 'published', i, i % 7, i * 3, 1700000000000 + i * 1000, 1700000000000 + i * 1000 from generate_series(1, 1000) i;
analyze;`);
c.release();
const cols = `p.id, p.category_id, c.name as category_name, p.title, p.excerpt, p.like_count, p.comment_count, p.view_count, p.created_at, p.updated_at`;
const inner = `select ${cols} from scratch_dec.posts p join scratch_dec.categories c on c.id = p.category_id where p.author_id = $1 and p.status = 'published' order by p.created_at desc, p.id desc limit 20`;
const A = `select u.published_posts as n, u.username, u.nickname, ${cols.replace('c.name as category_name', 'p.category_name')} from scratch_dec.users u left join lateral (${inner.replace('select ' + cols, 'select p.*, c.name as category_name').replace('p.author_id = $1', 'p.author_id = u.id')}) p on true where u.id = $1 order by p.created_at desc, p.id desc`;
const B = `select u.published_posts as n, u.username, u.nickname, (select json_agg(json_build_array(id, category_id, category_name, title, excerpt, like_count, comment_count, view_count, created_at, updated_at)) from (${inner}) q) as page from scratch_dec.users u where u.id = $1`;
const C = B.replace('json_build_array(id, category_id, category_name, title, excerpt, like_count, comment_count, view_count, created_at, updated_at)', 'json_build_object(\'id\', id, \'category_id\', category_id, \'category_name\', category_name, \'title\', title, \'excerpt\', excerpt, \'like_count\', like_count, \'comment_count\', comment_count, \'view_count\', view_count, \'created_at\', created_at, \'updated_at\', updated_at)');
const variants: Record<string, () => Promise<unknown>> = {
  rows: () => pool.query({ text: A, values: [1] }).then((r) => r.rows),
  // arrays: () => pool.query({ text: A, values: [1], rowMode: 'array' }).then((r) => r.rows),
  json: () => pool.query({ text: B, values: [1] }).then((r) => r.rows),
  jsonobj: () => pool.query({ text: C, values: [1] }).then((r) => r.rows),
};
console.log((await variants.rows!() as any[]).length, JSON.stringify((await variants.json!() as any[])[0]).length);
for (let round = 0; round < 5; round++) for (const [name, run] of Object.entries(variants)) {
  const N = 8000, CONC = 16;
  const t0 = process.cpuUsage(); const w0 = Date.now();
  for (let i = 0; i < N; i += CONC) await Promise.all(Array.from({ length: CONC }, run));
  const t = process.cpuUsage(t0);
  console.log(round, name, ((t.user + t.system) / N).toFixed(1), 'µs cpu/query', ((Date.now() - w0) * 1000 / N).toFixed(0), 'µs wall');
}
await pool.query('drop schema scratch_dec cascade');
await pool.end();
