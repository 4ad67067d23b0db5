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
//   node check.mjs write-time FILE  write a file of dates, times, timestamps (every unit, with
//                                   and without a zone) and durations (.parquet: DuckDB;
//                                   .arrow: apache-arrow), then print its rows as the peer
//                                   reads them
//   node check.mjs scan FILE [N]    time DuckDB's SELECT * over a Parquet file (on N threads;
//                                   DuckDB's default: all cores), print ms
//   node check.mjs table FILE ROWS  have DuckDB write a tabular Parquet file (for benchmarks)
//
// Canonical JSON: one array of rows; a row maps each column to the flat list of its values in
// row order (a list, fixed-size list or struct cell is flattened depth first; booleans are 0 and
// 1; 64-bit integers are decimal strings, to stay exact; dates and timestamps are decimal
// strings of mlfeed's DateTime, 100-ns ticks since 0001-01-01 (of the UTC time when zoned),
// times of day and durations of its Duration, 100-ns ticks). Nulls are an error.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  tableFromIPC, tableToIPC, vectorFromArray, Table, Field,
  Float16, Float32, Float64, Int64, Uint8, Int32, Bool, Utf8, Dictionary, FixedSizeList, List,
  makeData, makeVector, TimestampSecond, TimestampMillisecond, TimestampMicrosecond,
  TimestampNanosecond, DateDay, DateMillisecond, TimeMillisecond, TimeNanosecond,
  DurationMicrosecond,
} from 'apache-arrow';

// The DateTime tick of 1970-01-01T00:00:00, where Arrow's and Parquet's times count from.
const EPOCH_TICKS = 621355968000000000n;

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

// ticksSQL returns a DuckDB expression of the ticks of column expression c of type t, or
// null when t is no date or time type.
function ticksSQL(c, t) {
  if (t.endsWith('[]')) {
    const inner = ticksSQL('x', t.slice(0, -2));
    return inner && `list_transform(${c}, x -> ${inner})`;
  }
  switch (t) {
    case 'TIMESTAMP_NS': return `(epoch_ns(${c}) // 100 + ${EPOCH_TICKS})::VARCHAR`;
    case 'TIMESTAMP': case 'TIMESTAMP WITH TIME ZONE': case 'TIMESTAMP_MS': case 'TIMESTAMP_S':
      return `(epoch_us(${c}) * 10 + ${EPOCH_TICKS})::VARCHAR`;
    case 'DATE': return `(epoch_us(${c}::TIMESTAMP) * 10 + ${EPOCH_TICKS})::VARCHAR`;
    case 'TIME': return `(epoch_us(${c}) * 10)::VARCHAR`;
  }
  return null;
}

async function dump(file) {
  if (file.endsWith('.parquet')) {
    const c = await duck();
    const from = `read_parquet('${file.replaceAll("'", "''")}')`;
    const cols = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjectsJS();
    const sel = cols.map(({ column_name: n, column_type: t }) => {
      const q = '"' + n.replaceAll('"', '""') + '"';
      const e = ticksSQL(q, t);
      return e ? `${e} AS ${q}` : q;
    });
    const r = await c.runAndReadAll(`SELECT ${sel.join(', ')} FROM ${from}`);
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

async function writeTime(file) {
  if (file.endsWith('.parquet')) {
    const c = await duck();
    await c.run(`COPY (SELECT i::BIGINT AS i,
        TIMESTAMP '2024-01-02 03:04:05.123456' + i * INTERVAL 1 DAY AS ts,
        TIMESTAMPTZ '2024-01-02 03:04:05.123456+02' - i * INTERVAL 1 HOUR AS tstz,
        '2024-01-02 03:04:05.1234567'::TIMESTAMP_NS AS ts_ns,
        '1900-02-28 23:59:59.999'::TIMESTAMP_MS AS ts_ms,
        '2262-04-11 00:00:00'::TIMESTAMP_S AS ts_s,
        DATE '0001-01-01' + i::INTEGER AS d,
        DATE '9999-12-31' - i::INTEGER AS d_late,
        TIME '23:59:59.999999' - i * INTERVAL 1 SECOND AS t,
        [TIMESTAMP '1900-01-01', TIMESTAMP '2100-12-31 23:59:59'] AS tl
      FROM range(0, 5) t(i)) TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
    return dump(file);
  }
  // Arrow: the raw values of each column, its type and what one unit is in ticks (a negative
  // number: ticks are the value divided by it), and whether it counts from 1970.
  const cols = {
    ts_s: [new TimestampSecond(), [0n, 1704164645n, -62135596800n, 253402300799n], 10000000n, true],
    ts_ms: [new TimestampMillisecond('UTC'), [1704164645123n, -1n, -62135596800000n, 253402300799999n], 10000n, true],
    ts_us: [new TimestampMicrosecond('Europe/Paris'), [1704164645123456n, 1n, -2208988800000000n, 0n], 10n, true],
    ts_ns: [new TimestampNanosecond(), [1704164645123456700n, -100n, -9223372036854775800n, 9223372036854775800n], -100n, true],
    d32: [new DateDay(), [0, 19724, -719162, 2932896], 864000000000n, true],
    d64: [new DateMillisecond(), [0n, 1704153600000n, -62135596800000n, 86400000n], 10000n, true],
    t32: [new TimeMillisecond(), [0, 86399999, 43200000, 1], 10000n, false],
    t64: [new TimeNanosecond(), [0n, 86399999999900n, 100n, 43200000000000n], -100n, false],
    dur: [new DurationMicrosecond(), [-5n, 0n, 922337203685477580n, -922337203685477580n], 10n, false],
  };
  const vecs = {}, want = [...Array(4)].map(() => ({}));
  for (const [name, [type, raw, unit, epoch]] of Object.entries(cols)) {
    const data = new type.ArrayType(raw);
    vecs[name] = makeVector(makeData({ type, length: raw.length, nullCount: 0, data }));
    raw.forEach((v, i) => {
      const b = BigInt(v);
      const t = unit < 0n ? b / -unit : b * unit;
      want[i][name] = [String(t + (epoch ? EPOCH_TICKS : 0n))];
    });
  }
  writeFileSync(file, tableToIPC(new Table(vecs), 'file'));
  return want;
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
      random()::DOUBLE AS d1, (i * 7 % 1000)::INTEGER AS k, 'user_' || (i % 5000) AS name,
      TIMESTAMP '2020-01-01' + i * INTERVAL 1 SECOND AS ts
    FROM range(0, ${Number(rows)}) t(i)) TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`);
}

const [cmd, file, arg] = process.argv.slice(2);
const cmds = { dump, write, 'write-null': writeNull, 'write-struct': writeStruct, 'write-time': writeTime, scan, table };
if (!cmds[cmd] || !file) {
  console.error('usage: node check.mjs dump|write|write-null|write-struct|write-time|scan|table FILE [ARG]');
  process.exit(2);
}
try {
  const out = await cmds[cmd](file, arg);
  if (out !== undefined) process.stdout.write(JSON.stringify(out) + '\n');
} catch (e) {
  console.error(String(e && e.stack || e));
  process.exit(1);
}
