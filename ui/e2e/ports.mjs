// Loopback ports for the servers a suite starts before it can ask them which port they took.
import { createServer } from "node:net";

/** A port nothing listens on. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
