const fs = require('fs');
const buf = Buffer.alloc(512);
function a() { for (const e of fs.readdirSync('/proc/self/fd')) { try { fs.readFileSync(`/proc/self/fdinfo/${e}`, 'latin1'); } catch {} } }
function b() { for (const e of fs.readdirSync('/proc/self/fd')) { try { const fd = fs.openSync(`/proc/self/fdinfo/${e}`, 'r'); try { buf.toString('latin1', 0, fs.readSync(fd, buf, 0, 512, null)); } finally { fs.closeSync(fd); } } catch {} } }
for (const [n, f] of [['readFileSync', a], ['open/read', b], ['readFileSync', a], ['open/read', b]]) { const t = process.hrtime.bigint(); f(); console.log(n, Number(process.hrtime.bigint() - t) / 1e6, fs.readdirSync('/proc/self/fd').length); }
