// The reference for the integrator's acknowledgement throughput: a bare node:http server that reads the body
// and answers 200, nothing else. Usage: node bench/integrator/bare-server.mjs (prints {"url"}; stops on SIGTERM)
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
