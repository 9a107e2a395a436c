// Forwards HTTP to a Jig MCP endpoint, adding its bearer token: the MCP conformance suite
// cannot send one. What the suite sends about where it is (Host, Origin) passes unchanged,
// except this proxy's own address, which becomes Jig's — so a foreign Host or Origin still
// reaches Jig as the suite sent it, and Jig refuses it.
//
// Usage: node bearer-proxy.mjs UPSTREAM_URL TOKEN  (prints the proxy's base URL, then serves)
import http from "node:http";

const [upstreamUrl, token] = process.argv.slice(2);
const upstream = new URL(upstreamUrl);

const server = http.createServer((request, response) => {
  const own = `127.0.0.1:${server.address().port}`;
  const headers = { ...request.headers, authorization: `Bearer ${token}` };
  if (headers.host === own) headers.host = upstream.host;
  if (headers.origin === `http://${own}`) headers.origin = `http://${upstream.host}`;
  const forwarded = http.request(
    { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  forwarded.on("error", (error) => {
    response.writeHead(502);
    response.end(String(error));
  });
  request.pipe(forwarded);
});

server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}`);
});
