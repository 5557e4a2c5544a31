// The web app: built by `vite build` into dist/, which the gateway serves at /app. Unit tests
// (`*.spec.ts(x)` under src/) run with vitest; node's test runner never sees them.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  base: "/app/",
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Vite's esbuild turns TSX into JavaScript with React's automatic runtime; no plugin needed.
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    target: "es2022",
  },
  server: {
    // `npx vite` beside a running system: the app's API is the gateway's.
    proxy: { "/app/api": "http://localhost:8080", "/f": "http://localhost:8080" },
  },
  test: {
    include: ["src/**/*.spec.{ts,tsx}"],
    environment: "node",
  },
});
