// Independent peers for mlfeed's Arrow and Parquet packages: the JavaScript implementation of
// Apache Arrow (npm apache-arrow) and DuckDB (npm @duckdb/node-api).
//
//   node check.mjs dump FILE        print FILE's rows as canonical JSON (below)
//   node check.mjs write FILE       write a sample file (.arrow, .arrows: apache-arrow;
//                                   .parquet: DuckDB), then print its rows as the peer reads them
//   node check.mjs write-null FILE  write a file whose column "x" is null in row 3
//   node check.mjs write-struct FILE  have DuckDB write a Parquet file of struct columns: an
//                                   image as {bytes, path} (Hugging Face's layout; path null
//                                   in row 2) and a position {x, inner: {y}}
//   node check.mjs scan FILE [N]    time DuckDB's SELECT * over a Parquet file (on N threads;
//                                   DuckDB's default: all cores), print ms
//   node check.mjs table FILE ROWS  have DuckDB write a tabular Parquet file (for benchmarks)
//
// Canonical JSON: one array of rows; a row maps each column to the flat list of its values in
// row order (a list, fixed-size list or struct cell is flattened depth first; booleans are 0 and
// 1; 64-bit integers are decimal strings, to stay exact). Nulls are an error.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  tableFromIPC, tableToIPC, vectorFromArray, Table, Field,
  Float16, Float32, Float64, Int64, Uint8, Int32, Bool, Utf8, Dictionary, FixedSizeList, List,
} from 'apache-arrow';

function flat(v, out, where) {
  if (v === null || v === undefined) throw new Error(`null value at ${where}`);
  switch (typeof v) {
    case 'bigint': out.push(v.toString()); return out;
    case 'boolean': out.push(v ? 1 : 0); return out;
    case 'number': case 'string': out.push(v); return out;
  }
  if (typeof v.toJSON === 'function' && !(Symbol.iterator in v)) v = v.toJSON();
  if (Symbol.iterator in v) { for (const x of v) flat(x, out, where); return out; }
  if (v.items !== undefined) { for (const x of v.items) flat(x, out, where); return out; }
  if (v.entries !== undefined) { for (const k of Object.keys(v.entries)) flat(v.entries[k], out, where); return out; }
  for (const k of Object.keys(v)) flat(v[k], out, where); // a struct row: fields in order
  return out;
}

function dumpArrowTable(t) {
  const rows = [];
  const names = t.schema.fields.map(f => f.name);
  for (let i = 0; i < t.numRows; i++) {
    const row = {};
    for (const n of names) row[n] = flat(t.getChild(n).get(i), [], `column ${n} row ${i}`);
    rows.push(row);
  }
  return rows;
}

async function duck() {
  const { DuckDBInstance } = await import('@duckdb/node-api'); // loaded only for Parquet
  const inst = await DuckDBInstance.create(':memory:');
  return inst.connect();
}

async function dump(file) {
  if (file.endsWith('.parquet')) {
    const c = await duck();
    const r = await c.runAndReadAll(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
    return r.getRowObjectsJS().map((o, i) => {
      const row = {};
      for (const k of Object.keys(o)) row[k] = flat(o[k], [], `column ${k} row ${i}`);
      return row;
    });
  }
  return dumpArrowTable(tableFromIPC(readFileSync(file)));
}

// The apache-arrow sample: two record batches; every layout mlfeed reads from others.
function arrowSample(from, n) {
  const r = [...Array(n).keys()].map(i => i + from);
  return new Table({
    f32: vectorFromArray(r.map(i => i / 4), new Float32()),
    i64: vectorFromArray(r.map(i => BigInt(i * 1000003 - 7)), new Int64()),
    u8: vectorFromArray(r.map(i => i % 256), new Uint8()),
    flag: vectorFromArray(r.map(i => i % 3 === 0), new Bool()),
    name: vectorFromArray(r.map(i => `row ${i} é`), new Utf8()),
    color: vectorFromArray(r.map(i => ['red', 'green', 'blue'][i % 3]), new Dictionary(new Utf8(), new Int32())),
    vec: vectorFromArray(r.map(i => [i, -i, i / 2]), new FixedSizeList(3, new Field('item', new Float32(), true))),
    pair: vectorFromArray(r.map(i => [i * 0.1, i * 0.2]), new List(new Field('item', new Float64(), true))),
    half: vectorFromArray(r.map(i => i / 8 - 0.5 + (i % 3) * 1024), new Float16()),
  });
}

async function write(file) {
  if (file.endsWith('.parquet')) {
    const c = await duck();
    await c.run(`COPY (SELECT i::INTEGER AS i, (i * 0.5)::DOUBLE AS d, (i % 200)::UTINYINT AS u,
        (i % 2 = 0) AS b, 'row ' || i AS s, ['x', 'y', 'z'][i % 3 + 1]::ENUM('x', 'y', 'z') AS e,
        [i, i + 1, i + 2]::FLOAT[3] AS v, [i::DOUBLE, 2 * i]::DOUBLE[] AS l,
        {'indices': [i % 5, 7]::INTEGER[], 'values': [1.5, i]::FLOAT[]} AS sp
      FROM range(0, 2500) t(i)) TO '${file.replaceAll("'", "''")}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    return dump(file);
  }
  const all = arrowSample(0, 12);
  const t = all.slice(0, 5).concat(all.slice(5)); // two record batches sharing one dictionary
  writeFileSync(file, tableToIPC(t, file.endsWith('.arrows') ? 'stream' : 'file'));
  return dumpArrowTable(tableFromIPC(readFileSync(file)));
}

async function writeNull(file) {
  if (file.endsWith('.parquet')) {
    const c = await duck();
    await c.run(`COPY (SELECT i, CASE WHEN i = 3 THEN NULL ELSE i * 2 END AS x FROM range(0, 10) t(i))
      TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
    return;
  }
  const t = new Table({ x: vectorFromArray([0, 1, 2, null, 4], new Float64()) });
  writeFileSync(file, tableToIPC(t, 'file'));
}

async function writeStruct(file) {
  const c = await duck();
  await c.run(`COPY (SELECT i::BIGINT AS id,
      {'bytes': ('img' || i)::BLOB, 'path': CASE WHEN i = 2 THEN NULL ELSE 'p/' || i || '.png' END} AS image,
      {'x': (i * 1.5)::DOUBLE, 'inner': {'y': (i % 3)::INTEGER}} AS pos
    FROM range(0, 5) t(i)) TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
}

async function scan(file, threads) {
  const c = await duck();
  if (threads) await c.run(`SET threads = ${Number(threads)}`);
  const q = `SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`;
  await c.runAndReadAll(q + ' LIMIT 1'); // warm up: load the library's code paths
  const t0 = process.hrtime.bigint();
  const r = await c.runAndReadAll(q);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms, rows: r.currentRowCount };
}

async function table(file, rows) {
  const c = await duck();
  await c.run(`COPY (SELECT i::BIGINT AS id, (i % 10)::UTINYINT AS label, random()::FLOAT AS f0,
      random()::FLOAT AS f1, random()::FLOAT AS f2, random()::FLOAT AS f3, random()::DOUBLE AS d0,
      random()::DOUBLE AS d1, (i * 7 % 1000)::INTEGER AS k, 'user_' || (i % 5000) AS name
    FROM range(0, ${Number(rows)}) t(i)) TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`);
}

const [cmd, file, arg] = process.argv.slice(2);
const cmds = { dump, write, 'write-null': writeNull, 'write-struct': writeStruct, scan, table };
if (!cmds[cmd] || !file) {
  console.error('usage: node check.mjs dump|write|write-null|write-struct|scan|table FILE [ARG]');
  process.exit(2);
}
try {
  const out = await cmds[cmd](file, arg);
  if (out !== undefined) process.stdout.write(JSON.stringify(out) + '\n');
} catch (e) {
  console.error(String(e && e.stack || e));
  process.exit(1);
}
