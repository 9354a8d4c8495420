const m = () => { globalThis.gc(); globalThis.gc(); const u = process.memoryUsage(); return `rss ${(u.rss/1048576).toFixed(1)} heap ${(u.heapUsed/1048576).toFixed(1)} ext ${(u.external/1048576).toFixed(1)}`; };
console.log('start', m());
for (const spec of process.argv.slice(2)) { await import(spec); console.log(spec, m()); }
