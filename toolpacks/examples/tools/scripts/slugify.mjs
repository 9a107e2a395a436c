// Reads {"title": "...", "max_length": 60} as JSON on stdin; writes {"slug": "..."}.
import { stdin, stdout } from "node:process";

let input = "";
for await (const chunk of stdin) input += chunk;
const { title, max_length: maxLength = 60 } = JSON.parse(input);

const slug = title
  .normalize("NFKD")
  .replace(/[\u0300-\u036f]/g, "")
  .toLowerCase()
  .replace(/[^a-z0-9]+/g, "-")
  .replace(/^-+|-+$/g, "")
  .slice(0, maxLength)
  .replace(/-+$/g, "");

stdout.write(JSON.stringify({ slug: slug || "untitled" }));
