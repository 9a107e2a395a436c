/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// `jig serve` embeds dist/ in its binary; the dev server proxies the API to a running `jig serve`
// (JIG_API, e.g. http://127.0.0.1:7878).
export default defineConfig({
  plugins: [react()],
  base: "./",
  build: {
    outDir: "dist",
    target: "es2022",
    sourcemap: false,
    // ELK's bundle (1.46 MB, loaded only when a step graph is drawn) is the one chunk above
    // 400 kB; the application's own chunks stay far below this.
    chunkSizeWarningLimit: 1500,
  },
  server: {
    proxy: process.env.JIG_API
      ? { "/api": { target: process.env.JIG_API, ws: true, changeOrigin: false } }
      : undefined,
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./vitest.setup.ts"],
    include: ["src/**/*.test.tsx", "src/**/*.test.ts"],
  },
});
