// Reads the window's request as JSON on stdin; writes when it opens and closes and its steps.
import { stdin, stdout } from "node:process";

let input = "";
for await (const chunk of stdin) input += chunk;
const request = JSON.parse(input);

const reference = new Date(request.reference ?? "2026-01-05T09:00:00Z");
const opens =
  "at" in request.start
    ? new Date(request.start.at)
    : new Date(reference.getTime() + request.start.after_minutes * 60_000);
const duration = request.duration_minutes ?? 30;
const closes = new Date(opens.getTime() + duration * 60_000);

const steps = [];
for (const service of request.services) {
  const drain = service.drain_minutes ?? 5;
  steps.push(`drain ${service.name} (${service.environment}) for ${drain} min`);
}
for (const service of request.services) steps.push(`restart ${service.name} (${service.environment})`);
steps.push(`close the window at ${closes.toISOString()}`);

stdout.write(
  JSON.stringify({
    opens: opens.toISOString(),
    closes: closes.toISOString(),
    steps,
    ticket: request.ticket ?? null,
  }),
);
