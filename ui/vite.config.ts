/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

// `jig serve` embeds dist/ in its binary; the dev server proxies the API to a running `jig serve`
// (JIG_API, e.g. http://127.0.0.1:7878).
export default defineConfig({
  plugins: [react()],
  base: "./",
  resolve: {
    // rjsf's Markdown for its own messages: code spans only (src/lib/rjsfMarkdown.tsx says why).
    alias: [
      {
        find: /^markdown-to-jsx\/react$/,
        replacement: fileURLToPath(new URL("./src/lib/rjsfMarkdown.tsx", import.meta.url)),
      },
    ],
  },
  build: {
    outDir: "dist",
    target: "es2022",
    sourcemap: false,
    // The budget for one chunk (docs/benchmarks.md): the build says so when one grows past it.
    // The largest, the JSON editor's CodeMirror, is ~378 kB.
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: process.env.JIG_API
      ? { "/api": { target: process.env.JIG_API, ws: true, changeOrigin: false } }
      : undefined,
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./vitest.setup.ts"],
    // Bundled by Vite, not loaded by Node, so the alias above reaches inside it as in the build.
    server: { deps: { inline: [/@rjsf\/core/] } },
    include: ["src/**/*.test.tsx", "src/**/*.test.ts"],
  },
});
